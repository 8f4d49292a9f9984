"""The team server under operations: statement timeouts, draining on SIGTERM, two servers by eight
client processes on one database, the database restarted under load, and a server killed while
a ledger is shipped into the database.

Every server is a real ``governance serve --database URL`` process on a loopback port, every
database the throwaway cluster of ``conftest.py``. ``GOVERNANCE_OPERATIONS_SECONDS`` sets how long
the concurrent run lasts (default 20).
"""

from __future__ import annotations

import http.client
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

DURATION = float(os.environ.get("GOVERNANCE_OPERATIONS_SECONDS", "20"))
CLIENTS = 8
CATEGORIES = ("architecture", "tooling")
OUTCOMES = ("success", "partial", "failure", "abandoned")


# -- clients -------------------------------------------------------------------------------------
def _post(port: int, token: str, payload: Any, timeout: float = 30.0) -> tuple[int, Any]:
    """(status, parsed JSON body) of one CSTP call on a connection of its own."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("POST", "/cstp", json.dumps(payload).encode(),
                     {"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
        response = conn.getresponse()
        body = response.read()
        return response.status, json.loads(body) if body else None
    finally:
        conn.close()


def _record(k: int, n: int, rng: random.Random) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": n, "method": "cstp.recordDecision", "params": {
        "decision": f"Client {k} decision {n}: cache the {rng.choice(['orders', 'users'])} lookups",
        "category": rng.choice(CATEGORIES), "stakes": "low",
        "confidence": round(rng.random(), 3), "tags": ["ops"], "pattern": "read-through",
        "agent": {"id": f"c{k}"}}}


def _client(k: int, ports: list[int], token: str, reviewer: str, until: float, out: str) -> None:
    """One client process (this file run as a script): records, queries and reviews (its own
    decisions, with the reviewer's token) until ``until``; writes what was acknowledged to
    ``out``."""
    while time.time() < until - DURATION:
        time.sleep(0.01)
    rng = random.Random(k)
    acked: list[str] = []
    reviewed: dict[str, str] = {}
    problems: list[str] = []
    calls = Counter[str]()
    n = 0
    while time.time() < until:
        n += 1
        port = ports[n % len(ports)]
        pick = rng.random()
        if pick < 0.6 or not acked:
            kind, payload, key = "record", _record(k, n, rng), token
        elif pick < 0.85:
            kind, key = "query", token
            payload = {"jsonrpc": "2.0", "id": n, "method": "cstp.queryDecisions",
                       "params": {"query": "cache lookups", "limit": 5}}
        else:
            kind, key = "review", reviewer
            target, outcome = rng.choice(acked), rng.choice(OUTCOMES)
            payload = {"jsonrpc": "2.0", "id": n, "method": "cstp.reviewDecision",
                       "params": {"id": target, "outcome": outcome}}
        try:
            status, answer = _post(port, key, payload)
        except (OSError, http.client.HTTPException) as exc:
            problems.append(f"{kind}: {type(exc).__name__}: {exc}")
            continue
        if status != 200 or not isinstance(answer, dict) or "result" not in answer:
            problems.append(f"{kind}: {status} {answer}")
            continue
        calls[kind] += 1
        if kind == "record":
            acked.append(answer["result"]["id"])
        elif kind == "review":
            reviewed[target] = outcome
    with open(out, "w", encoding="utf-8") as handle:
        json.dump({"acked": acked, "reviewed": reviewed, "problems": problems,
                   "calls": dict(calls)}, handle)


# -- servers -------------------------------------------------------------------------------------
def _serve(project: Path, database: str, *extra: str) -> Any:
    from tests.helpers import install
    from tests.server.conftest import start_server

    (project / ".claude").mkdir(parents=True, exist_ok=True)
    install(project)
    return start_server(project, "--database", database, "--rate", "0", *extra)


def _children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as handle:
            found.update(int(child) for child in handle.read().split())
    return found


def _gone(pids: set[int], within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not any(os.path.exists(f"/proc/{pid}") and _state(pid) != "Z" for pid in pids):
            return True
        time.sleep(0.05)
    return False


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "Z"


def _rows(url: str, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        return list(conn.execute(sql, params).fetchall())


def _counted(url: str, project: str) -> Counter[str]:
    """How many rows each decision id has in the project."""
    return Counter({str(i): int(n) for i, n in _rows(
        url, "SELECT id, count(*) FROM decisions WHERE project_id = %s GROUP BY id", (project,))})


def _reviewer_token(database: str) -> str:
    """A team-wide reviewer's token, as ``governance token add --role reviewer`` mints it."""
    from governance.server.identity import DatabaseTokens, mint

    return mint(DatabaseTokens(database), "lead", "reviewer", None, "1h")[0]


# -- statement timeouts --------------------------------------------------------------------------
def test_a_statement_over_the_timeout_is_one_clear_sentence(
        database: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from governance.errors import StorageError
    from governance.storage import pool

    monkeypatch.setenv(pool.STATEMENT_TIMEOUT_ENV, "200")
    url = database + "&password=s3cret&application_name=timeout"   # a pool of its own
    started = time.monotonic()
    with pytest.raises(StorageError) as raised, pool.borrowed(url) as conn:
        conn.execute("SELECT pg_sleep(3)")
    assert time.monotonic() - started < 2
    said = raised.value.render()
    assert "\n" not in said and "s3cret" not in said and "password=***" in said, said
    assert "did not finish a statement within 200 ms" in said, said
    assert "statement timeout" in said and pool.STATEMENT_TIMEOUT_ENV in said, said
    with pool.borrowed(url) as conn:        # the connection is still good
        assert conn.execute("SHOW statement_timeout").fetchone() == ("200ms",)
    pool.close_all()


def test_a_record_held_up_by_a_lock_answers_the_timeout_error(
        database: str, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import psycopg

    from governance.server.cstp import Service
    from governance.server.protocol import INTERNAL_ERROR, Call, RpcError
    from governance.server.ratelimit import RateLimiter
    from governance.storage import pool
    from governance.storage.database import project_id

    (project / ".claude" / "governance").mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv(pool.STATEMENT_TIMEOUT_ENV, "300")
    monkeypatch.setenv("GOVERNANCE_DATABASE_URL", database + "&application_name=held")
    service = Service(str(project), RateLimiter(0, 1))
    record = Call("cstp.recordDecision", {"decision": "Cache the session lookups",
                                          "category": "tooling", "stakes": "low",
                                          "confidence": 0.6}, 1)
    assert service.run(record, "bearer:t")["id"]
    with psycopg.connect(database, autocommit=True) as holder, holder.transaction():
        holder.execute("SELECT * FROM projects WHERE project_id = %s FOR UPDATE",
                       (project_id(str(project)),))
        started = time.monotonic()
        with pytest.raises(RpcError) as raised:
            service.run(record, "bearer:t")
        assert time.monotonic() - started < 2.5
    assert raised.value.code == INTERNAL_ERROR
    assert "did not finish a statement within 300 ms" in raised.value.message
    assert service.run(record, "bearer:t")["id"]      # once the lock is gone
    service.close()
    pool.close_all()


def test_migrations_run_without_the_statement_timeout(
        cluster: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from governance.storage import migration, pool

    monkeypatch.setenv(pool.STATEMENT_TIMEOUT_ENV, "1")   # every migration takes longer
    url = cluster.new_database()
    assert migration.migrate(url) == [f"{m.version:04d}_{m.name}" for m in migration.available()]


# -- draining on SIGTERM -------------------------------------------------------------------------
def test_sigterm_drains_the_calls_under_way(engine: str, project: Path,
                                            request: pytest.FixtureRequest) -> None:
    """SIGTERM to the server and its workers (as a service manager's stop sends it) while six
    threads post batches of records: every call that got an answer got a whole one, every
    acknowledged decision is stored, and the server exits 0."""
    from tests.helpers import install
    from tests.server.conftest import start_server

    install(project)
    database = str(request.getfixturevalue("database")) if engine == "postgres" else None
    served = start_server(project, "--rate", "0",
                          *(["--database", database] if database else []))
    answers: list[tuple[float, int, Any]] = []
    sent = threading.Event()
    lock = threading.Lock()

    def post_batches(k: int) -> None:
        rng = random.Random(k)
        n = 0
        while True:
            n += 1
            batch = [_record(k, n * 100 + j, rng) for j in range(8)]
            try:
                status, answer = _post(served.port, served.token, batch)
            except (OSError, http.client.HTTPException):
                if sent.is_set():
                    return       # the server stopped accepting
                raise
            with lock:
                answers.append((time.monotonic(), status, answer))

    threads = [threading.Thread(target=post_batches, args=(k,)) for k in range(6)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 30
    while len(answers) < 12:    # the workers are up (a SIGTERM before they are kills them)
        assert time.monotonic() < deadline, "no answers"
        time.sleep(0.05)
    workers = _children(served.process.pid)
    assert workers
    stopped_at = time.monotonic()
    for pid in (served.process.pid, *workers):
        os.kill(pid, signal.SIGTERM)
    sent.set()
    for thread in threads:
        thread.join(30)
    code = served.process.wait(30)
    assert code == 0, served.process.stderr.read().decode() if served.process.stderr else code
    assert _gone(workers, 5)
    assert answers and all(status == 200 for _, status, _ in answers), answers[-1]
    acked: list[str] = []
    for _, _, answer in answers:
        assert isinstance(answer, list) and len(answer) == 8, answer
        assert all("result" in item for item in answer), answer
        acked.extend(item["result"]["id"] for item in answer)
    assert any(at > stopped_at for at, _, _ in answers), "no call was under way at SIGTERM"
    if database:
        from governance.storage.database import project_id

        counted = _counted(database, project_id(str(project)))
    else:
        from governance.decisions.store import DecisionStore, db_path

        store = DecisionStore(db_path(str(project)))
        try:
            counted = Counter(str(i) for (i,) in store.db.execute("SELECT id FROM decisions"))
        finally:
            store.close()
    assert all(counted[i] == 1 for i in acked), "an acknowledged decision is missing or doubled"


# -- two servers by eight clients ----------------------------------------------------------------
def test_two_servers_by_eight_clients_lose_nothing_and_count_right(
        database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.server.conftest import stop_server

    shared = f"ops-{os.getpid()}-{int(time.time())}"
    monkeypatch.setenv("GOVERNANCE_PROJECT_ID", shared)   # two folders, one project's rows
    reviewer = _reviewer_token(database)
    with ThreadPoolExecutor(2) as starting:
        servers = list(starting.map(lambda name: _serve((tmp_path / name).resolve(), database),
                                    ("one", "two")))
    try:
        until = time.time() + 2 + DURATION       # the clients start together once started
        outs = [str(tmp_path / f"client{k}.json") for k in range(CLIENTS)]
        clients = [subprocess.Popen(   # four clients on each server
            [sys.executable, __file__, str(k), str(servers[k % 2].port), servers[k % 2].token,
             reviewer, repr(until), outs[k]], stderr=subprocess.PIPE)
            for k in range(CLIENTS)]
        for client in clients:
            _, err = client.communicate(timeout=DURATION + 60)
            assert client.returncode == 0, err.decode()[-2000:]
        results = [json.loads(Path(out).read_text()) for out in outs]
        assert all(server.process.poll() is None for server in servers)
        calibration = {}
        for k in range(CLIENTS):
            status, answer = _post(servers[k % 2].port, servers[k % 2].token, {
                "jsonrpc": "2.0", "id": 1, "method": "cstp.getCalibration",
                "params": {"agent": {"id": f"c{k}"}}})
            assert status == 200 and "result" in answer, answer
            calibration[f"c{k}"] = answer["result"]
    finally:
        codes = [stop_server(server) for server in servers]
    assert codes == [0, 0]
    problems = [p for r in results for p in r["problems"]]
    assert not problems, problems[:5]
    acked = [i for r in results for i in r["acked"]]
    counted = _counted(database, shared)
    assert len(acked) == len(set(acked)) and Counter(acked) == counted   # each exactly once
    calls = Counter[str]()
    for r in results:
        calls.update(r["calls"])
    print(f"\n{CLIENTS} clients x 2 servers, {DURATION:g} s: {dict(calls)}")
    assert calls["record"] > 100 and calls["query"] > 20 and calls["review"] > 20, calls
    # every project row numbered once, the project's count the rows'
    (rows, seqs, top), = _rows(database, "SELECT count(*), count(DISTINCT seq), max(seq) "
                                         "FROM decisions WHERE project_id = %s", (shared,))
    (kept,), = _rows(database, "SELECT decisions FROM projects WHERE project_id = %s", (shared,))
    assert rows == seqs == top == kept == len(acked)
    # the last review of each decision is its outcome
    outcomes = dict(_rows(database, "SELECT id, outcome FROM decisions WHERE project_id = %s "
                                    "AND outcome IS NOT NULL", (shared,)))
    assert outcomes == {i: o for r in results for i, o in r["reviewed"].items()}
    # the calibration sums the triggers keep equal a recount from the rows
    recount = _rows(database, """
        SELECT agent_id, category, governance_bin(confidence), count(*),
               round(sum(confidence)::numeric, 6), round(sum(governance_score(outcome))::numeric, 6)
          FROM decisions WHERE project_id = %s AND outcome IN ('success', 'partial', 'failure')
         GROUP BY 1, 2, 3 ORDER BY 1, 2, 3""", (shared,))
    sums = _rows(database, """
        SELECT agent_id, category, bin, n, round(conf::numeric, 6), round(score::numeric, 6)
          FROM calibration_sums WHERE project_id = %s AND n > 0 ORDER BY 1, 2, 3""", (shared,))
    assert sums == recount and recount
    for agent, report in calibration.items():
        reviewed = sum(int(n) for a, _, _, n, _, _ in recount if a == agent)
        assert report["overall"]["sample_size"] == reviewed, (agent, report)


# -- the database restarted under load -----------------------------------------------------------
def test_a_database_restart_is_a_clear_error_then_calls_succeed_again(
        cluster: Any, database: str, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from governance.storage import pool
    from governance.storage.database import project_id
    from tests.server.conftest import stop_server

    monkeypatch.setenv(pool.POOL_TIMEOUT_ENV, "2")
    served = _serve(project, database)
    pid = served.process.pid
    calls: list[tuple[float, float, str, str]] = []     # started, ended, kind, what
    acked: list[str] = []
    done = threading.Event()
    lock = threading.Lock()

    def run(k: int) -> None:
        rng = random.Random(k)
        n = 0
        while not done.is_set():
            n += 1
            query = n % 3 == 0
            payload = {"jsonrpc": "2.0", "id": n, "method": "cstp.queryDecisions",
                       "params": {"query": "cache lookups", "limit": 5}} if query \
                else _record(k, n, rng)
            started = time.monotonic()
            try:
                status, answer = _post(served.port, served.token, payload)
            except (OSError, http.client.HTTPException) as exc:
                what = f"no answer: {type(exc).__name__}: {exc}"
            else:
                if status == 200 and isinstance(answer, dict) and "result" in answer:
                    what = "ok"
                    if not query:
                        with lock:
                            acked.append(answer["result"]["id"])
                elif status == 200 and isinstance(answer, dict) and "error" in answer:
                    what = f"error {answer['error']['code']}: {answer['error']['message']}"
                else:
                    what = f"status {status}: {answer}"
            with lock:
                calls.append((started, time.monotonic(), "query" if query else "record", what))
            time.sleep(0.02)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    try:
        deadline = time.monotonic() + 30
        while sum(w == "ok" for _, _, _, w in list(calls)) < 20:
            assert time.monotonic() < deadline, calls[-5:]
            time.sleep(0.05)
        stopping = time.monotonic()
        cluster.stop()
        down_at = time.monotonic()
        time.sleep(3)
        starting = time.monotonic()
        cluster.start()
        up_at = time.monotonic()
        deadline = up_at + 20
        while time.monotonic() < deadline:   # until 2 s pass with every call answered
            with lock:
                failed = [e for _, e, _, w in calls if w != "ok"]
            if time.monotonic() - max(failed, default=up_at) > 2:
                break
            time.sleep(0.1)
    finally:
        done.set()
        for thread in threads:
            thread.join(30)
    assert served.process.poll() is None and served.process.pid == pid   # never restarted
    assert stop_server(served) == 0
    clear = ("error -32603: cannot reach the decision database",
             "error -32603: the decision database")       # down, or a statement cut short
    assert all(w == "ok" or w.startswith(clear) for _, _, _, w in calls), \
        [w for _, _, _, w in calls if w != "ok" and not w.startswith(clear)][:5]
    before = [w for _, e, _, w in calls if e < stopping]
    during = [w for _, e, _, w in calls if down_at < e <= starting]   # answered while down
    recovered = max((e for _, e, _, w in calls if w != "ok"), default=up_at)   # the last error
    after = [w for s, _, _, w in calls if s > recovered]
    assert before and all(w == "ok" for w in before), before
    assert during and all(w != "ok" for w in during), during
    assert recovered - up_at < 15, "the calls did not succeed again within 15 s of the restart"
    assert len(after) >= 20 and all(w == "ok" for w in after), after[:5]
    longest = max(e - s for s, e, _, _ in calls)
    assert longest < 5, "a call waited past the pool's timeout"
    print(f"\nrestart: {len(calls)} calls, {len(during)} answered during the outage, ok again "
          f"{recovered - up_at:.1f} s after the restart, longest call {longest:.1f} s")
    counted = _counted(database, project_id(str(project)))
    assert all(counted[i] == 1 for i in acked)


# -- a server killed while a ledger is shipped into the database ---------------------------------
def test_server_killed_while_shipping_into_the_database_then_shipped_again(
        database: str, project: Path) -> None:
    from governance.ledger import chain
    from governance.storage.central import PostgresCopy
    from governance.storage.database import project_id
    from tests.helpers import REPO
    from tests.server.conftest import start_server, stop_server

    gov = str(project / ".claude" / "governance")
    served = _serve(project, database)
    for n in range(4000):
        chain.append(gov, {"event": "PreToolUse", "tool": "Bash", "n": n})
    env = {**os.environ, "PYTHONPATH": str(REPO), "GOVERNANCE_SERVER_TOKEN": served.token}
    url = f"http://127.0.0.1:{served.port}"
    ident = project_id(str(project))
    shipping = subprocess.Popen(
        [sys.executable, "-m", "governance.commands", "ledger", "ship", "--server", url,
         "--project", str(project), "--batch", "50"], cwd=str(REPO), env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    copy = PostgresCopy(database)
    deadline = time.monotonic() + 60
    while len(_rows(database, "SELECT 1 FROM central_ledger WHERE project_id = %s LIMIT 600",
                    (ident,))) < 600:
        assert time.monotonic() < deadline and shipping.poll() is None
        time.sleep(0.02)
    workers = _children(served.process.pid)
    served.process.kill()             # SIGKILL mid-ship
    served.process.wait()
    _, err = shipping.communicate(timeout=60)
    assert shipping.returncode == 1 and "nothing is lost: run it again" in err
    assert _gone(workers, 10), "the killed server's workers did not end"
    restarted = start_server(project, "--database", database)
    try:
        again = subprocess.run(
            [sys.executable, "-m", "governance.commands", "ledger", "ship", "--server",
             f"http://127.0.0.1:{restarted.port}", "--project", str(project), "--batch", "500"],
            cwd=str(REPO), env={**env, "GOVERNANCE_SERVER_TOKEN": restarted.token},
            capture_output=True, text=True, timeout=120)
        assert again.returncode == 0, again.stderr
    finally:
        assert stop_server(restarted) == 0
    local = [line for line in Path(gov, chain.LEDGER).read_text().splitlines() if line]
    stored = copy.lines(ident)
    assert stored == local                     # no gap, no duplicate
    assert [json.loads(line)["seq"] for line in stored] == list(range(1, len(local) + 1))


if __name__ == "__main__":    # a client process of the concurrent run
    _client(int(sys.argv[1]), [int(sys.argv[2])], sys.argv[3], sys.argv[4], float(sys.argv[5]),
            sys.argv[6])
