"""Concurrency: many hook-like processes appending to one ledger at once."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from governance.ledger import chain as ledger
from governance.ledger.verifier import verify
from tests.helpers import REPO

PROCESSES = 50
ROUNDS = 20

# A hook-like process: a fresh interpreter that imports only the ledger, waits for the start
# signal, then appends one record per round, as PreToolUse/PostToolUse hooks of parallel calls do.
WORKER = """
import os, sys, time
sys.path.insert(0, sys.argv[1])
from governance.ledger import chain as ledger
gov, worker, rounds, go = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
while not os.path.exists(go):
    time.sleep(0.001)
for r in range(rounds):
    ledger.append(gov, {"event": "PreToolUse" if r % 2 == 0 else "PostToolUse",
                        "session": f"s{worker}", "tool_use_id": f"toolu_{worker}_{r}",
                        "tool": "Bash", "reason": f"worker {worker} round {r}"})
"""


def test_fifty_processes_twenty_rounds(tmp_path: Path) -> None:
    gov = tmp_path / ".claude" / "governance"
    go = tmp_path / "go"
    procs = [subprocess.Popen([sys.executable, "-I", "-S", "-c", WORKER, str(REPO), str(gov),
                               str(i), str(ROUNDS), str(go)], stderr=subprocess.PIPE)
             for i in range(PROCESSES)]
    time.sleep(0.3)
    go.touch()
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
    report = verify(str(gov))
    assert report.ok, report.problem
    assert report.records == PROCESSES * ROUNDS
    lines = (gov / ledger.LEDGER).read_text().splitlines()
    ids = {json.loads(line)["tool_use_id"] for line in lines}
    assert ids == {f"toolu_{w}_{r}" for w in range(PROCESSES) for r in range(ROUNDS)}
    assert [json.loads(line)["seq"] for line in lines] == list(range(1, PROCESSES * ROUNDS + 1))
    assert not (gov / ledger.TORN).exists()


def test_concurrent_appends_with_rotation(tmp_path: Path) -> None:
    gov = tmp_path / "gov"
    go = tmp_path / "go"
    worker = WORKER.replace("ledger.append(gov, {", "ledger.append(gov, max_bytes=4000, record={")
    procs = [subprocess.Popen([sys.executable, "-I", "-S", "-c", worker, str(REPO), str(gov),
                               str(i), "10", str(go)], stderr=subprocess.PIPE)
             for i in range(10)]
    time.sleep(0.2)
    go.touch()
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()
    report = verify(str(gov))
    assert report.ok, report.problem
    assert report.records == 100 and len(report.files) > 5


def test_real_hook_processes_in_parallel(project: Path) -> None:
    """The installed hook commands, run as Claude Code runs the hooks of parallel tool calls."""
    from tests.helpers import hook_command, install, recorded

    install(project)
    pre, post = hook_command(project, "PreToolUse"), hook_command(project, "PostToolUse")
    calls = 12
    procs = []
    for i in range(calls):
        for command, name in ((pre, "PreToolUse-Bash.json"), (post, "PostToolUse-Bash.json")):
            payload = recorded(name, project)
            payload["tool_use_id"] = f"toolu_parallel_{i}"
            proc = subprocess.Popen(["sh", "-c", command], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            procs.append((proc, json.dumps(payload).encode()))
    for proc, data in procs:
        out, err = proc.communicate(data, timeout=120)
        assert proc.returncode == 0, err.decode()
        assert b"NOT checked" not in out, out
    gov = project / ".claude" / "governance"
    report = verify(str(gov))
    assert report.ok, report.problem
    recs = [json.loads(line) for line in (gov / ledger.LEDGER).read_text().splitlines()]
    assert len(recs) == 2 * calls
    for i in range(calls):
        events = sorted(r["event"] for r in recs if r["tool_use_id"] == f"toolu_parallel_{i}")
        assert events == ["PostToolUse", "PreToolUse"]
