"""``governance stats``: counts per primitive, action and state, denials per session and hook
duration percentiles, from the ledger (counted by ``governance.report``, as the report counts
them)."""

from __future__ import annotations

import argparse

from governance.commands.log import add_filters, build_filter


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_filters(parser)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")


def run(args: argparse.Namespace) -> int:
    import json

    from governance.ledger.report import stats_text
    from governance.project import governance_dir, project_from_cli
    from governance.report.figures import ledger_stats

    keep = build_filter(args)
    summary = ledger_stats(governance_dir(project_from_cli(args.project)), keep,
                           since=keep.since or "")
    print(json.dumps(summary, indent=2) if args.json else stats_text(summary))
    return 0
