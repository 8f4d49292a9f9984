"""``governance secrets``: what counts as a secret in a project, which sessions are tainted, and
ending a taint (the user's decision, from a terminal; the agent's attempt is governance-admin).

``show`` prints the secret files, variables, owners and egress hosts in force, and each tainted
session with what it read (names, never values). ``clear [--session ID]`` ends the taint of one
session, or of every session, and records that in the ledger.
"""

from __future__ import annotations

import argparse
import time


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", nargs="?", choices=("show", "clear"), default="show",
                        help="show (default): the secrets and taints in force; clear: end taints")
    parser.add_argument("--session", help="clear: only this session's taint (its id)")
    parser.add_argument("--json", action="store_true", help="show: as JSON")
    parser.add_argument("--project", help="project folder (default: found from the current one)")


def _show(project: str, as_json: bool) -> int:
    import json

    from governance.policy import matrix, taint

    spec = matrix.load(project).get("secrets") or {}
    tainted = taint.sessions(project)
    paths = [p for kind in spec.get("paths", ((),) * 5) for p in kind]
    excepted = [p for kind in spec.get("not_paths", ((),) * 5) for p in kind]
    variables = [*sorted(spec.get("variables", ((), ()))[0]), *spec.get("variables", ((), ()))[1]]
    owners = spec.get("owners", [])
    if as_json:
        print(json.dumps({"paths": paths, "not_paths": excepted, "variables": variables,
                          "owners": {k: list(v) for k, v in owners},
                          "egress": list(spec.get("egress", ())),
                          "tainted": [{"session": s, "until": u, "sources": src}
                                      for s, u, src in tainted]}, indent=2))
        return 0
    print(f"Secret files ({len(paths)}): {', '.join(paths)}")
    print(f"Not secrets: {', '.join(excepted) or 'none'}")
    print(f"Secret variables: {', '.join(variables)}")
    print("Owners: " + "; ".join(f"{k} -> {', '.join(v)}" for k, v in owners))
    print(f"Egress after a secret was read: {', '.join(spec.get('egress', ())) or 'none'}")
    if not tainted:
        print("No session is tainted.")
    for session, until, sources in tainted:
        left = (until - time.time()) / 60
        print(f"Tainted session {session} ({left:.0f} more minutes): read {', '.join(sources)}. "
              f"End it with: governance secrets clear --session {session}")
    return 0


def run(args: argparse.Namespace) -> int:
    from governance.ledger import chain
    from governance.policy import taint
    from governance.project import governance_dir, project_from_cli

    project = project_from_cli(args.project)
    if args.action == "show":
        return _show(project, args.json)
    ended = taint.clear(project, args.session)
    chain.append(governance_dir(project), {"event": "SecretsTaintCleared", "decision": "none",
                                           "session": args.session or "*", "ended": ended})
    which = f"session {args.session}" if args.session else "every session"
    print(f"Ended the secret taint of {which} ({ended} tainted)." if ended else
          f"No taint to end for {which}.")
    return 0
