"""``governance ledger verify``: check every record and the chain across all segments.

Exit 0 when the ledger verifies, 1 at the first bad line (named with what is wrong with it).
"""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    check = sub.add_parser("verify", help="check every line and the chain; exit 0 if intact")
    check.add_argument("--project", help="the project folder (default: the current project)")
    check.add_argument("--json", action="store_true", help="print the result as JSON")


def run(args: argparse.Namespace) -> int:
    import json

    from governance.ledger.verifier import verify
    from governance.project import governance_dir, project_from_cli

    gov_dir = governance_dir(project_from_cli(args.project))
    report = verify(gov_dir)
    if args.json:
        print(json.dumps(report.as_json(), indent=2))
        return 0 if report.ok else 1
    for note in report.notes:
        print(f"note: {note}")
    if report.problem is not None:
        print(f"FAILED after {report.records} good record(s): {report.problem.render()}")
        return 1
    where = ", ".join(report.files) if report.files else "no ledger yet"
    print(f"OK: {report.records} record(s), chain intact ({where})")
    if report.records:
        print(f"last hash: {report.last_hash}")
    return 0
