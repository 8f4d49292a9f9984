"""CSTP calls on worker threads: a guardrail check on the event loop, each worker with one kept
connection to the decision store, and calls answered in parallel by a real server."""

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


def test_only_a_single_guardrail_check_is_answered_on_the_event_loop() -> None:
    check = {"jsonrpc": "2.0", "id": 1, "method": "cstp.checkGuardrails", "params": {}}
    assert _quick(json.dumps(check).encode())
    assert not _quick(json.dumps({**check, "method": "cstp.preAction"}).encode())
    assert not _quick(json.dumps([check, check]).encode())          # a batch
    assert not _quick(b'{"method": "cstp.checkGuardrails", "x": {"method": "y"}}')
    assert not _quick(b"{not json")


def test_each_thread_keeps_one_connection_until_the_file_is_replaced(project: Path) -> None:
    (project / ".claude" / "governance").mkdir(parents=True, exist_ok=True)
    service = Service(str(project), RateLimiter(100.0, 100))
    first = service.stores.get()
    assert service.stores.get() is first
    with ThreadPoolExecutor(1) as pool:
        other = pool.submit(service.stores.get).result()
    assert other is not first
    first.close()                      # a method's close leaves the kept connection open
    assert first.count() == 0
    path = db_path(str(project))
    os.replace(path, path + ".old")
    assert service.stores.get() is not first


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
    assert service.stores.writer.written == 8 and 1 <= service.stores.writer.batches <= 8
    store = service.stores.get()
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


def _children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as handle:
            found.update(int(child) for child in handle.read().split())
    return found


def _pre_action(served: Served, k: int) -> dict[str, object]:
    action = {"description": f"Shard the orders table by tenant {k}", "category": "architecture",
              "stakes": "medium", "confidence": 0.7, "tags": ["db"], "pattern": "sharding"}
    answer = served.rpc({"jsonrpc": "2.0", "id": k, "method": "cstp.preAction",
                         "params": {"action": action, "agent": {"id": "w"}}})
    assert isinstance(answer, dict)
    return answer


def test_recalls_run_in_worker_processes_which_come_back_when_killed(served: Served) -> None:
    import signal
    import time

    first = _pre_action(served, 1)
    assert first["result"]["decision_id"]           # type: ignore[index]
    workers = _children(served.process.pid)
    assert workers, "the server started no worker process"
    for pid in workers:
        os.kill(pid, signal.SIGKILL)
    time.sleep(0.5)
    again = _pre_action(served, 2)                  # the pool is started again for this call
    assert again["result"]["decision_id"], again    # type: ignore[index]
    assert _children(served.process.pid).isdisjoint(workers)
    store_ids = {first["result"]["decision_id"], again["result"]["decision_id"]}  # type: ignore[index]
    from governance.decisions.store import DecisionStore

    store = DecisionStore(db_path(str(served.project)))
    try:
        assert all(store.get(str(i)) for i in store_ids)
    finally:
        store.close()


def test_a_batch_over_the_burst_is_refused_call_by_call_in_the_server(served: Served) -> None:
    call = {"jsonrpc": "2.0", "method": "cstp.getCalibration", "params": {}}
    got = served.rpc([{**call, "id": i} for i in range(7)])     # burst 5
    codes = [r.get("error", {}).get("code") for r in got]
    assert codes == [None] * 5 + [-32002] * 2


def _record_many(path: str, agent: str, count: int) -> None:
    from governance.decisions.writer import BatchWriter

    writer = BatchWriter(path)
    try:
        for k in range(count):
            writer.record({"description": f"{agent} decision {k}", "category": "tooling",
                           "stakes": "low", "confidence": 0.5, "tags": [], "pattern": "",
                           "reasons": [], "context": {}}, agent)
    finally:
        writer.close()


def test_writers_of_two_processes_take_turns_and_lose_nothing(tmp_path: Path) -> None:
    import multiprocessing

    from governance.decisions.store import DecisionStore

    path = str(tmp_path / "decisions.db")
    DecisionStore(path).close()
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_record_many, args=(path, f"p{k}", 60)) for k in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
        assert worker.exitcode == 0
    store = DecisionStore(path)
    try:
        assert store.count() == 120
        assert {a for (a,) in store.db.execute("SELECT DISTINCT agent_id FROM decisions")} == \
            {"p0", "p1"}
    finally:
        store.close()
    assert os.stat(path + ".write.lock").st_mode & 0o777 == 0o600


def test_bodies_that_do_not_parse_are_answered_by_the_server_itself(served: Served) -> None:
    for body in (b"[" * 100_000 + b"]" * 100_000, b"\xff\xfe", b"{not json", b"[]"):
        status, _, answer = served.request("POST", "/cstp", body)
        assert status == 200, (status, answer)
        assert json.loads(answer)["error"]["code"] in (-32700, -32600)


def _ended(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


def test_workers_end_at_once_when_their_server_is_killed(project: Path) -> None:
    import signal
    import time

    from tests.helpers import install
    from tests.server.conftest import start_server, stop_server

    install(project)
    served = start_server(project, "--rate", "0")
    try:
        assert _pre_action(served, 1)["result"]
        workers = _children(served.process.pid)
        assert workers, "the server started no worker process"
        os.kill(served.process.pid, signal.SIGKILL)
        served.process.wait(10)
        deadline = time.monotonic() + 5
        while not all(_ended(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert all(_ended(pid) for pid in workers), workers   # their sockets closed
    finally:
        stop_server(served)


def test_a_worker_killed_during_a_call_fails_that_call_only_and_is_replaced(project: Path
                                                                           ) -> None:
    import asyncio
    import signal

    from governance.server.workers import Workers, WorkerStopped

    (project / ".claude" / "governance").mkdir(parents=True, exist_ok=True)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "cstp.getCalibration",
                       "params": {}}).encode()

    async def scenario() -> tuple[str, dict[str, object], int, int]:
        workers = Workers(str(project), 1)
        workers.start()
        try:
            first = json.loads(await workers.call(body, "bearer:t") or b"null")
            assert "result" in first, first
            pid = workers._all[0].process.pid
            assert pid is not None
            os.kill(pid, signal.SIGSTOP)            # busy: it takes the call and never answers
            held = asyncio.ensure_future(workers.call(body, "bearer:t"))
            await asyncio.sleep(0.3)
            os.kill(pid, signal.SIGKILL)
            try:
                await held
                raise AssertionError("the call of a killed worker was answered")
            except WorkerStopped as exc:
                why = str(exc)
            again = json.loads(await workers.call(body, "bearer:t") or b"null")
            replaced = workers._all[0].process.pid
            assert replaced is not None
            return why, again, pid, replaced
        finally:
            await workers.close()

    why, again, pid, replaced = asyncio.run(scenario())
    assert why == "killed by SIGKILL"
    assert "result" in again and replaced != pid
    log = (project / ".claude" / "governance" / "errors.log").read_text()
    assert f"cstp worker {pid}: killed by SIGKILL; another is started" in log


def test_a_cancelled_call_retires_its_worker_which_ends_after_answering(project: Path) -> None:
    import asyncio
    import signal

    from governance.server.workers import Workers

    (project / ".claude" / "governance").mkdir(parents=True, exist_ok=True)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "cstp.getCalibration",
                       "params": {}}).encode()

    async def scenario() -> tuple[int | None, int | None, dict[str, object]]:
        workers = Workers(str(project), 1)
        workers.start()
        try:
            assert "result" in json.loads(await workers.call(body, "bearer:t") or b"null")
            old = workers._all[0]
            assert old.process.pid is not None
            os.kill(old.process.pid, signal.SIGSTOP)
            held = asyncio.ensure_future(workers.call(body, "bearer:t"))
            await asyncio.sleep(0.3)
            held.cancel()
            try:
                await held
            except asyncio.CancelledError:
                pass
            os.kill(old.process.pid, signal.SIGCONT)    # it answers into a closed socket
            await asyncio.get_running_loop().run_in_executor(None, old.process.join, 20)
            again = json.loads(await workers.call(body, "bearer:t") or b"null")
            return old.process.exitcode, workers._all[0].process.pid, again
        finally:
            await workers.close()

    code, replaced, again = asyncio.run(scenario())
    assert code == 0 and replaced is not None and "result" in again


def test_a_server_leaving_without_closing_its_workers_still_exits(project: Path) -> None:
    import subprocess
    import sys

    from tests.helpers import REPO

    (project / ".claude" / "governance").mkdir(parents=True, exist_ok=True)
    script = (
        "import asyncio, json, sys\n"
        "from governance.server.workers import Workers\n"
        "async def main():\n"
        "    workers = Workers(sys.argv[1], 2)\n"
        "    workers.start()\n"
        "    body = json.dumps({'jsonrpc': '2.0', 'id': 1, 'method': 'cstp.getCalibration',"
        " 'params': {}}).encode()\n"
        "    print(json.loads(await workers.call(body, 'bearer:t'))['id'], flush=True)\n"
        "if __name__ == '__main__':\n"
        "    asyncio.run(main())\n")   # no close(): the interpreter's exit must not wait for ever
    done = subprocess.run([sys.executable, "-c", script, str(project)], cwd=str(REPO),
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0 and done.stdout.strip() == "1", done.stderr[-2000:]
