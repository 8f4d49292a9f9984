"""``governance log``: recent ledger records as a table (or JSON lines), with filters."""

from __future__ import annotations

import argparse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from governance.ledger.reader import Filter


def add_filters(parser: argparse.ArgumentParser) -> None:
    """The record filters shared by ``log`` and ``stats``."""
    parser.add_argument("--project", help="the project folder (default: the current project)")
    parser.add_argument("--session", help="only this session (a prefix of its id is enough)")
    parser.add_argument("--state", help="only decisions taken in this state, e.g. DO")
    parser.add_argument("--action", help="only this action or outcome: allow, warn, ask, block, "
                                         "redirect, success, failure, interrupted")
    parser.add_argument("--tool", help="only this tool, e.g. Bash")
    parser.add_argument("--event", help="only this event: PreToolUse, PostToolUse, ...")
    parser.add_argument("--since", help="from this time: ISO 8601 (UTC) or an age like 30m, 2h, 1d")
    parser.add_argument("--until", help="up to this time: ISO 8601 (UTC) or an age")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_filters(parser)
    parser.add_argument("--limit", type=int, default=50,
                        help="show the last N matching records (default 50, 0 for all)")
    parser.add_argument("--json", action="store_true", help="one JSON record per line")


def build_filter(args: argparse.Namespace) -> Filter:
    from governance.errors import GovernanceError
    from governance.ledger.reader import Filter, parse_time

    try:
        since = parse_time(args.since) if args.since else None
        until = parse_time(args.until) if args.until else None
    except ValueError as exc:
        raise GovernanceError(str(exc), fix="give --since/--until as 2026-05-01T12:00 or 2h"
                              ) from None
    return Filter(session=args.session, state=args.state, action=args.action, tool=args.tool,
                  since=since, until=until, event=args.event)


def run(args: argparse.Namespace) -> int:
    import json

    from governance.ledger.reader import query
    from governance.ledger.report import log_table
    from governance.project import governance_dir, project_from_cli

    gov_dir = governance_dir(project_from_cli(args.project))
    keep = build_filter(args)
    found = query(gov_dir, keep, max(args.limit, 0) or None)
    if args.json:
        for rec in found:
            print(json.dumps(rec, ensure_ascii=False, sort_keys=True))
        return 0
    if not found:
        print("no matching records")
        return 0
    print(log_table(found))
    return 0
