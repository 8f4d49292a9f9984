"""Group commit: the decisions of concurrent calls are written in one transaction, each call is
answered only after its batch committed, and a failure reaches every call it concerns."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from governance.decisions.store import DecisionStore
from governance.decisions.writer import BatchWriter
from governance.errors import GovernanceError
from tests.decisions.test_store import act


@pytest.fixture
def path(tmp_path: Path) -> str:
    found = str(tmp_path / "gov" / "decisions.db")
    DecisionStore(found).close()
    return found


@pytest.fixture
def batch_writer(path: str) -> Iterator[BatchWriter]:
    made = BatchWriter(path)
    yield made
    made.close()


def _until(what: str, done: Any) -> None:
    deadline = time.monotonic() + 20
    while not done():
        assert time.monotonic() < deadline, what
        time.sleep(0.005)


def _concurrently(made: BatchWriter, actions: list[dict[str, Any]], held: str
                  ) -> list[str | BaseException]:
    """Record ``actions`` from one thread each, all in one batch: another connection holds the
    write lock while the writer waits for it with a first call (``Gate``), so that the others
    all queue; then it lets go. Each call's id or error."""
    blocker = sqlite3.connect(held, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    answers: list[str | BaseException] = [RuntimeError("no answer")] * len(actions)

    def call(index: int) -> None:
        try:
            answers[index] = made.record(actions[index], f"agent-{index}", {"state": "DO"})
        except BaseException as exc:   # the test looks at it
            answers[index] = exc

    gate = threading.Thread(target=lambda: made.record(act("Gate"), "gate"))
    gate.start()
    _until("the writer took the gate", lambda: made.submitted == 1 and not made._queue)
    threads = [threading.Thread(target=call, args=(i,)) for i in range(len(actions))]
    for thread in threads:
        thread.start()
    _until("every call queued", lambda: len(made._queue) == len(actions))
    blocker.execute("COMMIT")
    blocker.close()
    for thread in [gate, *threads]:
        thread.join(30)
    return answers


def test_concurrent_calls_are_all_answered_and_committed_together(
        batch_writer: BatchWriter, path: str) -> None:
    answers = _concurrently(batch_writer, [act(f"Decision number {i}") for i in range(20)], path)
    assert all(isinstance(a, str) and a.startswith("dec-") for a in answers), answers
    assert len(set(answers)) == 20
    assert batch_writer.batches == 2 and batch_writer.written == 21   # the gate, then the 20
    store = DecisionStore(path)           # another connection sees every acknowledged one
    try:
        assert store.count() == 21
        for index, decision_id in enumerate(answers):
            found = store.get(str(decision_id))
            assert found is not None and found["agent_id"] == f"agent-{index}"
            assert found["description"] == f"Decision number {index}"
        assert [d["id"] for d in store.query("number", limit=50)]   # in the full-text index
    finally:
        store.close()


def test_a_batch_that_fails_fails_every_waiting_call_and_stores_none(
        batch_writer: BatchWriter, path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    real = DecisionStore.insert_rows
    seen = []

    def insert_then_fail(cursor: sqlite3.Cursor, rows: Any) -> int:
        seen.append(1)
        if len(seen) == 4:                  # the disk fails in the middle of the batch
            raise sqlite3.OperationalError("disk I/O error")
        return real(cursor, rows)

    monkeypatch.setattr(DecisionStore, "insert_rows", staticmethod(insert_then_fail))
    answers = _concurrently(batch_writer, [act(f"Decision {i}") for i in range(6)], path)
    assert all(isinstance(a, sqlite3.OperationalError) and "disk I/O error" in str(a)
               for a in answers), answers
    store = DecisionStore(path)
    try:
        assert store.count() == 1                # the gate's; none of the failed batch's
    finally:
        store.close()
    monkeypatch.setattr(DecisionStore, "insert_rows", staticmethod(real))
    assert batch_writer.record(act("After the failure"), "agent-x").startswith("dec-")


def test_a_bad_row_fails_only_its_own_call(batch_writer: BatchWriter, path: str) -> None:
    broken = act("Broken decision")
    del broken["tags"]
    actions = [act("Good one"), act("Good two"), broken, act("Good three")]
    answers = _concurrently(batch_writer, actions, path)
    assert isinstance(answers[2], KeyError)
    assert all(isinstance(answers[i], str) for i in (0, 1, 3)), answers
    store = DecisionStore(path)
    try:
        assert store.count() == 4                # the gate and the three good ones
        assert not store.query("Broken")
    finally:
        store.close()


def test_a_taken_id_is_drawn_again(batch_writer: BatchWriter, path: str,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    first = batch_writer.record(act("First"), "agent-1")
    draws = iter([bytes.fromhex(first[4:]), bytes.fromhex("0badcafe")])
    monkeypatch.setattr("governance.decisions.writer.os.urandom", lambda n: next(draws))
    assert batch_writer.record(act("Second"), "agent-1") == "dec-0badcafe"


def test_close_writes_what_is_queued_and_refuses_more(path: str) -> None:
    made = BatchWriter(path)
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    answers: list[str] = []
    threads = [threading.Thread(target=lambda i=i: answers.append(
        made.record(act(f"Queued {i}"), "agent-1"))) for i in range(5)]
    threads[0].start()
    _until("the writer took the first", lambda: made.submitted == 1 and not made._queue)
    for thread in threads[1:]:
        thread.start()
    _until("every call queued", lambda: len(made._queue) == 4)
    closing = threading.Thread(target=made.close)
    closing.start()
    time.sleep(0.1)
    assert closing.is_alive()               # close waits for the queued calls
    blocker.execute("COMMIT")
    blocker.close()
    closing.join(30)
    for thread in threads:
        thread.join(30)
    assert len(answers) == 5
    with pytest.raises(GovernanceError, match="closed"):
        made.record(act("Too late"), "agent-1")
    store = DecisionStore(path)
    try:
        assert store.count() == 5
    finally:
        store.close()
