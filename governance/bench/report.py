"""Report benchmark: ``governance report`` over a 100,000- and a 1,000,000-record ledger, its time
and the peak memory (RSS) of its process.

The ledgers are generated as ``governance.bench.ledger`` generates them (real canonical JSON, the
real sha256 chain, 50 MiB segments), with a month of a team's records: allowed calls and their
results, denials of pushes, asks, strict knowledge held and acknowledged, a sub-agent. The report
runs as the CLI runs it, in a process of its own. It is timed twice on the large ledger: first
as it comes (``verify`` hashes every sealed segment, then remembers them), then as it is once the
segments have been verified (the usual case: only the live ledger is hashed again). The target:
the second within ``TARGET_S``, and memory that does not grow with the ledger. Exits 1 when a
target is missed.

Run: ``python -m governance.bench.report [--records N] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from typing import Any

TARGET_S = 10.0
RSS_GROWTH = 1.5      # the large ledger's peak RSS at most this times the small one's
BASE = 1_777_636_800  # 2026-05-01T12:00:00Z
STEP_S = 2.6          # a million records span a month


def _record(i: int) -> dict[str, Any]:
    """The i-th record of a month of work: PreToolUse and PostToolUse in turn."""
    from governance.bench.ledger import _record as plain

    rec = plain(i)
    moment = BASE + i * STEP_S
    rec["ts"] = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(moment)) + \
        f".{int(moment * 1000) % 1000:03d}Z"
    call = i // 2
    if call % 7 == 3:
        rec.update(agent_id=f"a{call % 5:03d}", agent_type="Explore")
    if (call // 1800) % 10 == 9:
        rec["state"] = rec["phase"] = "CHECK"
    if rec["event"] != "PreToolUse":
        return rec
    if call % 20 == 5:
        rec.update(action="block", decision="deny", primitive="vcs-push",
                   primitives=["vcs-push"],
                   rule={"file": rec["rule"]["file"], "key": "rules.vcs-push._all_states"},
                   reason="Pushing publishes work: push only from CHECK or DONE.",
                   acts=[{"action": "block", "primitive": "vcs-push",
                          "reason": "git push publishes commits",
                          "segment": f"git push origin feature-{call % 40}"}])
    elif call % 50 == 7:
        rec.update(action="ask", decision="ask", primitive="destructive",
                   primitives=["destructive"],
                   reason="This command destroys data or history: the user must confirm it.",
                   acts=[{"action": "ask", "primitive": "destructive", "reason": "rm -r",
                          "segment": f"rm -rf build-{call % 10}"}])
    elif call % 30 == 11:
        outcome = ("blocked", "acknowledged", "injected")[call % 3]
        items = ["sop:docker-deploy"]
        rec["knowledge"] = {"cache": "hit", "level": "strict", "lookup_ms": 0.2 + call % 17 / 10,
                            "outcome": outcome, "risk": "elevated",
                            "sops": [{"name": "docker-deploy", "sections": ["gotchas"],
                                      "why": ["the command word 'compose'"]}],
                            **({"acknowledged": items} if outcome == "acknowledged"
                               else {"items": items})}
    return rec


def _run_report(project: str, out: str) -> dict[str, Any]:
    """``governance report`` in a process of its own: seconds and peak RSS (MiB)."""
    command = [sys.executable, "-m", "governance.commands", "report", "--project", project,
               "--out", out]
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (root, os.environ.get("PYTHONPATH", "")) if p)}   # this very governance
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    _pid, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    said = (process.stdout.read() if process.stdout else b"").decode()
    problem = (process.stderr.read() if process.stderr else b"").decode()
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise SystemExit(f"the report failed ({process.returncode}): {said}{problem}")
    return {"seconds": round(elapsed, 2), "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
            "html_bytes": os.path.getsize(out)}


def _project(work: str, name: str, records: int) -> tuple[str, int]:
    from governance.bench.ledger import generate
    from governance.ledger import chain
    from governance.project import governance_dir

    project = os.path.join(work, name)
    os.makedirs(os.path.join(project, ".claude"))
    gov = governance_dir(project)
    generate(gov, records, record=_record)
    size = sum(os.path.getsize(os.path.join(gov, n)) for n in [*chain.segments(gov), chain.LEDGER])
    return project, size


def run(records: int, work: str) -> dict[str, Any]:
    small_count = max(1, records // 10)
    small, small_bytes = _project(work, "small", small_count)
    large, large_bytes = _project(work, "large", records)
    os.sync()
    out = os.path.join(work, "report.html")
    result: dict[str, Any] = {
        "records": records, "ledger_mib": round(large_bytes / 2**20),
        "small": {"records": small_count, "ledger_mib": round(small_bytes / 2**20),
                  **_run_report(small, out)},
        "first": _run_report(large, out),         # every sealed segment hashed, then remembered
        "verified": _run_report(large, out),      # the usual case: the live ledger hashed again
    }
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="governance.bench.report", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=1_000_000, help="size of the large ledger")
    parser.add_argument("--dir", help="work folder (default: a temporary folder, removed after)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    work = args.dir or tempfile.mkdtemp(prefix="report-bench-")
    try:
        result = run(args.records, work)
    finally:
        if not args.dir:
            shutil.rmtree(work, ignore_errors=True)
    small, first, verified = result["small"], result["first"], result["verified"]
    met_time = verified["seconds"] <= TARGET_S
    met_memory = verified["peak_rss_mib"] <= small["peak_rss_mib"] * RSS_GROWTH
    result["targets"] = {"seconds": TARGET_S, "met": met_time and met_memory}
    if args.json:
        print(json.dumps(result, indent=2))
        return 0 if result["targets"]["met"] else 1
    print(f"report: {args.records:,} records ({result['ledger_mib']} MiB)")
    print(f"{'ledger':<44}{'time':>9}{'peak RSS':>12}")
    for label, row in ((f"{small['records']:,} records", small),
                       (f"{args.records:,} records, segments not yet verified", first),
                       (f"{args.records:,} records, segments verified before", verified)):
        print(f"{label:<44}{row['seconds']:>8.2f}s{row['peak_rss_mib']:>9.1f} MiB")
    print(f"target: <= {TARGET_S:g} s with the segments verified "
          f"({'met' if met_time else 'MISSED'}); peak RSS flat from {small['records']:,} to "
          f"{args.records:,} records ({'met' if met_memory else 'MISSED'})")
    return 0 if result["targets"]["met"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
