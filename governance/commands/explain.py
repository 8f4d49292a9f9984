"""``governance explain TOOL_USE_ID``: the decision on one tool call, the rule, the state, the
config hash and the result of the call, from the ledger."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("tool_use_id", metavar="TOOL_USE_ID", help="the call's id (toolu_...)")
    parser.add_argument("--project", help="the project folder (default: the current project)")
    parser.add_argument("--json", action="store_true", help="print the records as JSON")


def run(args: argparse.Namespace) -> int:
    import json
    import sys

    from governance.ledger.reader import explain
    from governance.ledger.report import explain_text
    from governance.project import governance_dir, project_from_cli

    found = explain(governance_dir(project_from_cli(args.project)), args.tool_use_id)
    if args.json:
        print(json.dumps(found, indent=2, ensure_ascii=False, sort_keys=True))
    elif found["decisions"] or found["results"]:
        print(explain_text(found))
    if not (found["decisions"] or found["results"]):
        print(f"no ledger record has tool_use_id {args.tool_use_id!r} (see `governance log`)",
              file=sys.stderr)
        return 1
    return 0
