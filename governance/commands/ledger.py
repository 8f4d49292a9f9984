"""``governance ledger verify``: check every record and the chain across all segments (archived
ones included), then the ledger against its anchor outside the project. ``governance ledger
anchor``: anchor the ledger as it is now (after you have looked at what changed it). ``governance
ledger archive``: move old sealed segments to an archive folder. ``governance ledger ship``: send
the records a server's central copy lacks (``governance.ledger.shipping``); ``verify --server``
then compares the two.

Exit 0 when the ledger verifies, 1 at the first bad line (named with what is wrong with it) or
where it does not match its anchor (re-chained, truncated, deleted, rotated by hand).
"""

from __future__ import annotations

import argparse
import time


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    check = sub.add_parser("verify", help="check every line, the chain and the anchor; exit 0 if "
                                          "intact")
    check.add_argument("--project", help="the project folder (default: the current project)")
    check.add_argument("--json", action="store_true", help="print the result as JSON")
    check.add_argument("--full", action="store_true", help="hash every record again, also in the "
                                                           "sealed segments checked before")
    check.add_argument("--server", metavar="URL",
                       help="also compare the local chain with the central copy on this server "
                            "(`governance ledger ship`)")
    check.add_argument("--token", help="the server's token (default: $GOVERNANCE_SERVER_TOKEN)")
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
    send = sub.add_parser("ship", help="send the records a server's central copy lacks "
                                       "(incremental, idempotent, resumable)")
    send.add_argument("--server", metavar="URL", required=True,
                      help="the server keeping the central copy, like http://127.0.0.1:8765")
    send.add_argument("--token", help="the server's token (default: $GOVERNANCE_SERVER_TOKEN)")
    send.add_argument("--project", help="the project folder (default: the current project)")
    send.add_argument("--batch", metavar="N", type=int, default=1000,
                      help="records per request (default: 1000)")
    send.add_argument("--retry", metavar="SECONDS", type=float, default=0.0,
                      help="while the server cannot be reached, try again for up to SECONDS")


def run(args: argparse.Namespace) -> int:
    import json

    from governance.ledger.verifier import verify
    from governance.project import governance_dir, project_from_cli

    project = project_from_cli(args.project)
    gov_dir = governance_dir(project)
    if getattr(args, "action", "verify") == "ship":
        return _ship(project, gov_dir, args)
    if getattr(args, "action", "verify") == "anchor":
        return _anchor(gov_dir)
    if getattr(args, "action", "verify") == "archive":
        return _archive(gov_dir, args)
    report = verify(gov_dir, full=getattr(args, "full", False))
    central = _central(project, gov_dir, args)
    if args.json:
        print(json.dumps({**report.as_json(), **({"central": {"ok": central[0],
                                                              "detail": central[1]}}
                                                  if central else {})}, indent=2))
        return 0 if report.ok and (central is None or central[0]) else 1
    for note in report.notes:
        print(f"note: {note}")
    if central is not None:     # the central copy first: a broken local chain returns below
        print(central[1] if central[0] else f"FAILED: {central[1]}")
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
    return 0 if central is None or central[0] else 1


def _central(project: str, gov_dir: str, args: argparse.Namespace) -> tuple[bool, str] | None:
    if not getattr(args, "server", None):
        return None
    from governance.ledger.shipping import Central, compare
    from governance.storage.database import project_id

    central = Central(args.server, args.token)
    try:
        return compare(central, gov_dir, project_id(project))
    finally:
        central.close()


def _ship(project: str, gov_dir: str, args: argparse.Namespace) -> int:
    import sys

    from governance.errors import GovernanceError
    from governance.ledger.shipping import Central, ship_retrying
    from governance.storage.database import project_id

    if args.batch < 1:
        raise GovernanceError(f"--batch {args.batch} is not a positive number of records",
                              fix="give --batch 1000 or leave it out")
    started = time.perf_counter()
    done = ship_retrying(lambda: Central(args.server, args.token), gov_dir, project_id(project),
                         args.batch, args.retry, lambda text: print(text, file=sys.stderr))
    took = time.perf_counter() - started
    if not done.sent:
        print(f"Nothing to ship: the central copy is at seq {done.head}, as the local ledger.")
        return 0
    print(f"Shipped {done.sent} record(s), seq {done.first + 1} to {done.head}, in "
          f"{done.batches} batch(es), {took:.2f} s ({done.sent / max(took, 1e-9):,.0f} "
          f"records/s); {done.stored} new to the server.")
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
