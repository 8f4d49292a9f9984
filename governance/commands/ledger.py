"""``governance ledger verify``: check every record and the chain across all segments (archived
ones included), then the ledger against its anchor outside the project. ``governance ledger
anchor``: anchor the ledger as it is now (after you have looked at what changed it). ``governance
ledger archive``: move old sealed segments to an archive folder.

Exit 0 when the ledger verifies, 1 at the first bad line (named with what is wrong with it) or
where it does not match its anchor (re-chained, truncated, deleted, rotated by hand).
"""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    check = sub.add_parser("verify", help="check every line, the chain and the anchor; exit 0 if "
                                          "intact")
    check.add_argument("--project", help="the project folder (default: the current project)")
    check.add_argument("--json", action="store_true", help="print the result as JSON")
    check.add_argument("--full", action="store_true", help="hash every record again, also in the "
                                                           "sealed segments checked before")
    rebase = sub.add_parser("anchor", help="anchor the ledger as it is now, after a change you "
                                           "have looked at (refuses a broken chain)")
    rebase.add_argument("--project", help="the project folder (default: the current project)")
    move = sub.add_parser("archive", help="move old sealed segments (and their id indexes) to an "
                                          "archive folder; verify still spans them")
    which = move.add_mutually_exclusive_group(required=True)
    which.add_argument("--before", metavar="DATE",
                       help="archive the sealed segments whose records are all older than DATE "
                            "(ISO 8601 like 2026-01-01, or an age like 90d)")
    which.add_argument("--keep", metavar="N", type=int,
                       help="archive all sealed segments but the newest N (N >= 1)")
    move.add_argument("--to", metavar="DIR",
                      help="the archive folder (default: .claude/governance/archive)")
    move.add_argument("--project", help="the project folder (default: the current project)")


def run(args: argparse.Namespace) -> int:
    import json

    from governance.ledger.verifier import verify
    from governance.project import governance_dir, project_from_cli

    gov_dir = governance_dir(project_from_cli(args.project))
    if getattr(args, "action", "verify") == "anchor":
        return _anchor(gov_dir)
    if getattr(args, "action", "verify") == "archive":
        return _archive(gov_dir, args)
    report = verify(gov_dir, full=getattr(args, "full", False))
    if args.json:
        print(json.dumps(report.as_json(), indent=2))
        return 0 if report.ok else 1
    for note in report.notes:
        print(f"note: {note}")
    if report.problem is not None:
        print(f"FAILED after {report.records} good record(s): {report.problem.render()}")
        return 1
    if not report.ok:
        from governance.ledger.witness import FIX

        for found in report.anchors:
            if found.failed:
                print(f"FAILED after {report.records} good record(s): {found.line()}")
        print(f"fix: {FIX}")
        return 1
    where = ", ".join(report.files) if report.files else "no ledger yet"
    print(f"OK: {report.records} record(s), chain intact ({where})")
    if report.records:
        print(f"last hash: {report.last_hash}")
    for found in report.anchors:
        print(f"anchor: {found.line()}")
    return 0


def _anchor(gov_dir: str) -> int:
    from governance.ledger import anchor
    from governance.ledger.verifier import verify
    from governance.ledger.witness import rebase

    report = verify(gov_dir, sources=[])
    if report.problem is not None:
        print(f"Not anchored: the chain itself is broken ({report.problem.render()}); an anchor "
              "records only a chain that holds.")
        return 1
    try:
        before = anchor.read(gov_dir)[1]
    except ValueError:
        before = None
    found = rebase(gov_dir)
    was = f" (it was at seq {before['seq']})" if before else ""
    if found is None:
        print(f"The ledger is empty: its anchor is removed{was}.")
    else:
        print(f"Anchored the ledger at seq {found['seq']} in {anchor.path_for(gov_dir)}{was}.")
    return 0


def _archive(gov_dir: str, args: argparse.Namespace) -> int:
    from governance.ledger import archive, archiver

    done = archiver.run(gov_dir, before=args.before, keep=args.keep, to=args.to)
    if not done.names:
        print(f"Nothing to archive: {done.why}.")
        return 0
    span = done.names[0] if len(done.names) == 1 else f"{done.names[0]} to {done.names[-1]}"
    print(f"Archived {len(done.names)} segment(s), seq {done.first_seq} to {done.last_seq} "
          f"({span}), to {done.folder}.")
    print(f"{archive.MANIFEST} records where each starts and ends: `governance ledger verify` "
          "checks the chain across them while they are there, and by those ends once they are "
          "not.")
    return 0
