"""Ledger benchmark: append latency at 1 thousand vs 1 million records, verify throughput, and
``explain`` of the oldest call (through the sealed segments' id indexes).

The large ledger is generated directly (real canonical JSON, real sha256 chain, rotated into
50 MiB segments as ``append`` would) rather than through a million ``append`` calls; then the same
number of real ``append`` calls are timed on the small and on the large ledger. An O(1) append has
the same latency on both. ``verify`` then checks every record of the large ledger.

Run: ``python -m governance.bench.ledger [--records N] [--samples N] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from hashlib import sha256
from typing import Any

from governance.ledger import chain
from governance.ledger.reader import percentile

SEGMENT_BYTES = 50 * 1024 * 1024


def _record(i: int) -> dict[str, Any]:
    """A realistic record: PreToolUse and PostToolUse in turn, like a real session."""
    base: dict[str, Any] = {
        "v": 1, "ts": f"2026-05-01T12:{i // 60000 % 60:02d}:{i // 1000 % 60:02d}.{i % 1000:03d}Z",
        "session": f"8c1f3a52-{i // 5000:04d}-4d7e-9b21-5f0a6c3e2d19",
        "tool_use_id": f"toolu_01{i // 2:022d}", "tool": "Bash", "primitive": "shell-execute",
        "state": "DO", "cycle": "implementation-cycle", "phase": "DO", "work_item": "WORK-064",
        "state_source": "state-file", "permission_mode": "default",
        "config_hash": "0d60f2e07c117f1ceaa29eb3338361e0a196827700bfcf6737e8170201310116",
        "input_sha256": f"{i:064x}", "duration_ms": 11.0 + i % 13,
    }
    if i % 2 == 0:
        base.update(event="PreToolUse", primitives=["shell-execute"], action="allow",
                    decision="none", map_rule="tools.Bash",
                    rule={"file": "/home/dev/shop-api/.claude/governance/activity_matrix.yaml",
                          "key": "rules.shell-execute.DO"},
                    reason="shell-execute is allowed in DO")
    else:
        base.update(event="PostToolUse", outcome="success", response_sha256=f"{i:064x}",
                    tool_duration_ms=120 + i % 50)
    return base


def generate(gov_dir: str, count: int, segment_bytes: int = SEGMENT_BYTES,
             record: Callable[[int], dict[str, Any]] | None = None) -> None:
    """Write ``count`` chained records (rotated like ``append``) and the head sidecar;
    ``record(i)`` makes the i-th (default: a session's PreToolUse and PostToolUse in turn)."""
    os.makedirs(gov_dir, mode=0o700, exist_ok=True)
    prev, segment, size = chain.GENESIS, 0, 0
    path = os.path.join(gov_dir, chain.LEDGER)
    out = open(path, "wb", buffering=1 << 20)  # noqa: SIM115 (closed and reopened on rotation)
    canonical = chain.canonical
    make = _record if record is None else record
    for i in range(count):
        rec = make(i)
        rec["seq"], rec["prev"] = i + 1, prev
        rec["hash"] = prev = sha256(canonical(rec)).hexdigest()
        line = canonical(rec) + b"\n"
        if size and size + len(line) > segment_bytes:
            out.close()
            segment += 1
            os.rename(path, os.path.join(gov_dir, chain.segment_name(segment)))
            out = open(path, "wb", buffering=1 << 20)  # noqa: SIM115
            size = 0
        out.write(line)
        size += len(line)
    out.close()
    for name in [*chain.segments(gov_dir), chain.LEDGER]:
        os.chmod(os.path.join(gov_dir, name), 0o600)
    with open(os.path.join(gov_dir, chain.HEAD), "w") as fh:
        json.dump({"hash": prev, "seq": count, "size": size, "segment": segment}, fh)


def time_appends(gov_dirs: Sequence[str], samples: int) -> list[dict[str, float]]:
    """Latency of ``samples`` real appends to each ledger, in microseconds. The ledgers take
    turns, so that load from other processes weighs on each alike."""
    times: list[list[float]] = [[] for _ in gov_dirs]
    for i in range(samples):
        rec = _record(i)
        for key in ("v", "ts", "seq", "prev", "hash"):
            rec.pop(key, None)
        rec["tool_use_id"] = f"toolu_02{i:022d}"      # not a generated call's id (see explain)
        for gov_dir, series in zip(gov_dirs, times, strict=True):
            start = time.perf_counter()
            chain.append(gov_dir, dict(rec), max_bytes=SEGMENT_BYTES)
            series.append((time.perf_counter() - start) * 1e6)
    return [{"p50_us": percentile(t, 50), "p95_us": percentile(t, 95),
             "p99_us": percentile(t, 99)} for t in times]


def run(records: int, samples: int, work: str) -> dict[str, Any]:
    from governance.ledger.verifier import verify

    small, large = os.path.join(work, "small"), os.path.join(work, "large")
    start = time.perf_counter()
    generate(small, 1000)
    generate(large, records)
    generated_s = time.perf_counter() - start
    size = sum(os.path.getsize(os.path.join(large, n))
               for n in [*chain.segments(large), chain.LEDGER])
    result: dict[str, Any] = {"records": records, "ledger_bytes": size,
                              "segments": len(chain.segments(large)) + 1,
                              "generate_s": round(generated_s, 2)}
    os.sync()  # let the generated gigabyte reach the disk before anything is timed
    result["append_1k"], result[f"append_{records // 1000}k"] = time_appends([small, large],
                                                                             samples)
    start = time.perf_counter()
    report = verify(large)
    elapsed = time.perf_counter() - start
    if not report.ok:
        raise SystemExit(f"verify failed on the generated ledger: {report.problem}")
    result["verify"] = {"records": report.records, "seconds": round(elapsed, 2),
                        "records_per_s": round(report.records / elapsed)}
    result["explain_oldest"] = time_explain(large)
    return result


def time_explain(gov_dir: str, runs: int = 5) -> dict[str, Any]:
    """``explain`` of the oldest call (the worst case: every file is looked at), in seconds: the
    first time (each sealed segment's id index is built) and then the median of ``runs``."""
    from governance.ledger.reader import explain

    oldest = _record(0)["tool_use_id"]
    start = time.perf_counter()
    found = explain(gov_dir, oldest)
    first = time.perf_counter() - start
    if not found["decisions"]:
        raise SystemExit(f"explain did not find {oldest} in the generated ledger")
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        explain(gov_dir, oldest)
        times.append(time.perf_counter() - start)
    return {"first_s": round(first, 3), "indexed_s": round(percentile(times, 50), 4)}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="governance.bench.ledger", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--records", type=int, default=1_000_000, help="size of the large ledger")
    parser.add_argument("--samples", type=int, default=2000, help="timed appends per ledger")
    parser.add_argument("--dir", help="work folder (default: a temporary folder, removed after)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    work = args.dir or tempfile.mkdtemp(prefix="ledger-bench-")
    try:
        result = run(args.records, args.samples, work)
    finally:
        if not args.dir:
            shutil.rmtree(work, ignore_errors=True)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    big = f"append_{args.records // 1000}k"
    print(f"ledger: {result['records']:,} records, {result['ledger_bytes'] / 2**20:.0f} MiB in "
          f"{result['segments']} segment(s), generated in {result['generate_s']} s")
    print(f"{'append latency':<22}{'p50':>10}{'p95':>10}{'p99':>10}")
    for label, key in (("at 1,000 records", "append_1k"),
                       (f"at {args.records:,} records", big)):
        row = result[key]
        print(f"{label:<22}{row['p50_us']:>8.0f}us{row['p95_us']:>8.0f}us{row['p99_us']:>8.0f}us")
    ratio = result[big]["p50_us"] / max(result["append_1k"]["p50_us"], 1e-9)
    print(f"p50 ratio large/small: {ratio:.2f} (O(1): about 1)")
    v = result["verify"]
    print(f"verify: {v['records']:,} records in {v['seconds']} s = {v['records_per_s']:,} records/s")
    e = result["explain_oldest"]
    print(f"explain of the oldest call: {e['first_s']} s the first time (building the id "
          f"indexes), then {e['indexed_s']} s (median of 5)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
