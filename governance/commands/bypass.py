"""``governance bypass``: for a while, strict knowledge shows instead of blocking (an emergency
switch for the user, from a terminal; the agent's attempt is governance-admin)."""

from __future__ import annotations

import argparse
import time


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--minutes", type=float, help="switch the bypass on for this long (1..1440)")
    parser.add_argument("--reason", help="why (required with --minutes; recorded in the ledger)")
    parser.add_argument("--off", action="store_true", help="end the bypass now")
    parser.add_argument("--project", help="project folder (default: found from the current one)")


def run(args: argparse.Namespace) -> int:
    import getpass

    from governance.errors import GovernanceError
    from governance.knowledge import bypass
    from governance.ledger import chain
    from governance.project import governance_dir, project_from_cli

    project = project_from_cli(args.project)
    if args.off and args.minutes is not None:
        raise GovernanceError("give either --minutes or --off", fix="run one of them")
    if args.off:
        was = bypass.switch_off(project)
        chain.append(governance_dir(project), {"event": "KnowledgeBypass", "bypass": "off",
                                               "was_on": was, "decision": "none"})
        print("Knowledge bypass is off." if was else "No knowledge bypass was on.")
        return 0
    if args.minutes is None:
        held = bypass.active(project)
        if held is None:
            print("No knowledge bypass is on.")
        else:
            left = (held["until"] - time.time()) / 60
            print(f"Knowledge bypass is on for {left:.1f} more minutes: {held.get('reason', '')}")
        return 0
    if not 1 <= args.minutes <= 1440:
        raise GovernanceError(f"--minutes must be from 1 to 1440, got {args.minutes:g}",
                              fix="give a duration such as --minutes 30")
    if not args.reason or not args.reason.strip():
        raise GovernanceError("a bypass needs a reason", fix='add --reason "why"')
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = ""
    data = bypass.switch_on(project, args.minutes, args.reason.strip()[:500], user)
    chain.append(governance_dir(project), {
        "event": "KnowledgeBypass", "bypass": "on", "minutes": args.minutes,
        "reason": data["reason"], "until": data["until"],
        "by": user, "decision": "none"})
    print(f"Knowledge bypass is on for {args.minutes:g} minutes: strict knowledge is shown but "
          "does not block. End it early with: governance bypass --off")
    return 0
