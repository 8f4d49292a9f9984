"""CSTP calls on worker threads: guardrail checks in a pool of their own, each worker with one
kept connection to the decision store, and calls answered in parallel by a real server."""

from __future__ import annotations

import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from governance.decisions.store import db_path
from governance.server.app import _quick
from governance.server.cstp import Service
from governance.server.protocol import Call
from governance.server.ratelimit import RateLimiter
from tests.server.conftest import Served


def test_only_a_single_guardrail_check_goes_to_the_quick_pool() -> None:
    check = {"jsonrpc": "2.0", "id": 1, "method": "cstp.checkGuardrails", "params": {}}
    assert _quick(json.dumps(check).encode())
    assert not _quick(json.dumps({**check, "method": "cstp.preAction"}).encode())
    assert not _quick(json.dumps([check, check]).encode())          # a batch
    assert not _quick(b'{"method": "cstp.checkGuardrails", "x": {"method": "y"}}')
    assert not _quick(b"{not json")


def test_each_thread_keeps_one_connection_until_the_file_is_replaced(project: Path) -> None:
    (project / ".claude" / "governance").mkdir(parents=True, exist_ok=True)
    service = Service(str(project), RateLimiter(100.0, 100))
    first = service._store()
    assert service._store() is first
    with ThreadPoolExecutor(1) as pool:
        other = pool.submit(service._store).result()
    assert other is not first
    first.close()                      # a method's close leaves the kept connection open
    assert first.count() == 0
    path = db_path(str(project))
    os.replace(path, path + ".old")
    assert service._store() is not first


def test_decisions_of_parallel_calls_go_through_the_one_writer(project: Path) -> None:
    (project / ".claude" / "governance").mkdir(parents=True, exist_ok=True)
    service = Service(str(project), RateLimiter(0, 1))
    action = {"description": "Cache the session lookups", "category": "architecture",
              "stakes": "low", "confidence": 0.8, "tags": ["cache"], "pattern": "read-through"}
    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda k: service.run(
            Call("cstp.preAction", {"action": action, "agent_id": f"a{k}"}, k), "bearer:t"),
            range(8)))
    service.close()
    ids = {a["decision_id"] for a in answers}
    assert len(ids) == 8 and None not in ids, answers
    assert service.writer.written == 8 and 1 <= service.writer.batches <= 8
    store = service._store()
    assert store.count() == 8 and all(store.get(i) for i in ids)


def test_calls_are_answered_in_parallel(served: Served) -> None:
    action = {"description": "Move session storage to PostgreSQL", "category": "architecture",
              "stakes": "medium", "confidence": 0.7, "tags": ["db"], "pattern": "migration"}
    answers: list[object] = []
    barrier = threading.Barrier(4)

    def call(k: int) -> None:
        barrier.wait()
        method = "cstp.checkGuardrails" if k % 2 else "cstp.preAction"
        answers.append(served.rpc({"jsonrpc": "2.0", "id": k, "method": method,
                                   "params": {"action": action, "agent": {"id": f"a{k}"}}}))

    threads = [threading.Thread(target=call, args=(k,)) for k in range(4)]   # within the burst
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(answers) == 4
    refused = [a for a in answers if not (isinstance(a, dict) and "result" in a)]
    assert not refused, refused        # the answers that came back without a result, whole
