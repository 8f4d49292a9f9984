"""Crash safety: kill -9 at random points during appends; nothing complete is ever lost."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

from governance.ledger import chain as ledger
from governance.ledger.verifier import verify
from tests.helpers import REPO
from tests.ledger.records import pre_record

TRIALS = 200

# Appends in a loop and reports each record's hash once append() has returned. Every other trial
# uses records of ~256 KiB so that the kill often lands inside the write() itself (a torn line).
WORKER = """
import sys
sys.path.insert(0, sys.argv[1])
from governance.ledger import chain as ledger
gov, size, trial = sys.argv[2], int(sys.argv[3]), sys.argv[4]
out = sys.stdout
out.write("ready\\n"); out.flush()
i = 0
while True:
    rec = ledger.append(gov, {"event": "PreToolUse", "tool_use_id": f"t{trial}_{i}",
                              "reason": "x" * size})
    out.write(rec["hash"] + "\\n"); out.flush()
    i += 1
"""


def test_kill_dash_nine_never_loses_a_complete_record(tmp_path: Path) -> None:
    gov = tmp_path / "gov"
    rng = random.Random(4)
    confirmed: list[str] = []
    for trial in range(TRIALS):
        size = (1 << 18) if trial % 2 else 200
        proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", WORKER, str(REPO), str(gov),
                                 str(size), str(trial)], stdout=subprocess.PIPE)
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"ready\n"
        # kill at a random point: before, during or between appends
        deadline = rng.uniform(0, 0.004 if size < 1000 else 0.03)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=deadline)
        os.kill(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        confirmed += out.decode().split()
        # the next append repairs whatever the kill left and continues the chain
        ledger.append(str(gov), pre_record(trial))
    report = verify(str(gov))
    assert report.ok, report.problem
    hashes = set()
    with open(gov / ledger.LEDGER, "rb") as fh:
        for line in fh:
            hashes.add(json.loads(line)["hash"])
    missing = [h for h in confirmed if h not in hashes]
    assert not missing, f"{len(missing)} confirmed records lost"
    assert report.records >= len(confirmed) + TRIALS
    torn = (gov / ledger.TORN).read_text().splitlines() if (gov / ledger.TORN).exists() else []
    print(f"\n{TRIALS} kill -9 trials: {len(confirmed)} confirmed records, {report.records} in "
          f"the ledger, {len(torn)} torn writes set aside, chain intact")
    for entry in map(json.loads, torn):
        assert entry["length"] > 0 and not entry["bytes"].endswith("\n")


def test_torn_tail_is_moved_aside(gov: Path) -> None:
    first = ledger.append(str(gov), pre_record(0))
    full = ledger.canonical({**pre_record(1), "seq": 2, "prev": first["hash"], "hash": "f" * 64})
    with open(gov / ledger.LEDGER, "ab") as fh:
        fh.write(full[:77])  # a write cut off after 77 bytes
    assert verify(str(gov)).problem.kind == "torn"  # type: ignore[union-attr]
    nxt = ledger.append(str(gov), pre_record(2))
    assert nxt["seq"] == 2 and nxt["prev"] == first["hash"]
    assert verify(str(gov)).ok
    entry = json.loads((gov / ledger.TORN).read_text())
    assert entry["bytes"] == full[:77].decode() and entry["offset"] == len(
        ledger.canonical(first)) + 1


def test_complete_line_written_before_the_head_is_adopted(gov: Path) -> None:
    ledger.append(str(gov), pre_record(0))
    head = (gov / ledger.HEAD).read_bytes()
    second = ledger.append(str(gov), pre_record(1))
    (gov / ledger.HEAD).write_bytes(head)  # as if killed between write() and the head update
    report = verify(str(gov))
    assert report.ok and any("one record behind" in n for n in report.notes)
    third = ledger.append(str(gov), pre_record(2))
    assert third["prev"] == second["hash"] and third["seq"] == 3
    assert not (gov / ledger.TORN).exists()


def test_truncated_ledger_is_logged_and_the_chain_goes_on(gov: Path) -> None:
    for i in range(5):
        ledger.append(str(gov), pre_record(i))
    lines = (gov / ledger.LEDGER).read_bytes().splitlines(keepends=True)
    (gov / ledger.LEDGER).write_bytes(b"".join(lines[:3]))
    assert verify(str(gov)).problem.kind == "deleted"  # type: ignore[union-attr]
    nxt = ledger.append(str(gov), pre_record(9))
    assert nxt["seq"] == 4
    assert "head says seq 5" in (gov / ledger.ERRORS).read_text()
