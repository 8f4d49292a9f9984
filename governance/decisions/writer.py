"""Group commit for the decision store: one writer thread records the decisions of concurrent
calls in one transaction. SQLite only (the server's default store); on PostgreSQL each decision is
its own transaction on the connection pool, answered once committed (``server.cstp``).

A call hands its decision to :meth:`BatchWriter.record` and waits. The writer takes everything
queued at that moment (at most :data:`MAX_BATCH`), inserts it in one ``BEGIN IMMEDIATE`` ...
``COMMIT``, and only then answers each waiting call with its decision id. While one batch
commits, the next fills, so there is no added delay when calls come one at a time, and under load
one commit (one WAL sync) serves many calls.

Durability: a call is answered only after its batch committed, and the writer's connection runs
``synchronous=FULL`` (the WAL is synced at every commit, once per batch), so an acknowledged
decision survives a crash of the server and of the machine. A crash loses only decisions not yet
acknowledged: their callers got no answer. A row that cannot be inserted (its own savepoint rolls
back) fails only its own call; a batch that cannot begin or commit fails every call in it, and
none of its decisions is stored.

Several processes (the server's worker processes) each have a writer. Before its transaction a
writer takes an exclusive ``flock`` on ``<store>.write.lock``: a writer that waits is woken the
moment the other commits, where SQLite's own busy handler would sleep 1, 2, 5, 10 ... ms and try
again (two workers recording at once spent half their time asleep). Writers outside the server
(the CLI, MCP) still meet SQLite's busy timeout, as before.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
import threading
import time
from collections import deque
from typing import Any

from governance.decisions.fields import DecisionInputError
from governance.decisions.store import DecisionStore
from governance.errors import GovernanceError

MAX_BATCH = 256
ID_ATTEMPTS = 8


class _Pending:
    """One waiting call: its row, and then its decision id or its error."""

    __slots__ = ("decision_id", "done", "error", "row")

    def __init__(self, row: tuple[str, dict[str, Any], dict[str, Any], float]) -> None:
        self.row = row
        self.done = threading.Event()
        self.decision_id: str | None = None
        self.error: BaseException | None = None


def identity(path: str) -> tuple[int, int] | None:
    """The store file's device and inode (None when it is gone): a store replaced under a kept
    connection is opened again."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


class BatchWriter:
    """The one writer of a process's decisions into the store at ``path``. Thread-safe; the
    thread starts with the first call and stops at :meth:`close`."""

    def __init__(self, path: str, *, max_batch: int = MAX_BATCH) -> None:
        self.path = path
        self.max_batch = max_batch
        self._queue: deque[_Pending] = deque()
        self._ready = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._store: DecisionStore | None = None
        self._store_id: tuple[int, int] | None = None
        self._lock_fd: int | None = None
        self.submitted = 0    # calls queued, batches committed, decisions in them
        self.batches = 0
        self.written = 0

    def record(self, action: dict[str, Any], agent_id: str,
               state: dict[str, Any] | None = None, now: float | None = None) -> str:
        """Queue a validated action (see :mod:`governance.decisions.fields`) and wait until
        its batch committed; the new decision's id. Raises what failed the row or the batch."""
        pending = _Pending((agent_id, action, state or {},
                            time.time() if now is None else now))
        with self._ready:
            if self._closed:
                raise GovernanceError("the decision writer is closed: the server is stopping")
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="governance-writer",
                                                daemon=True)
                self._thread.start()
            self._queue.append(pending)
            self.submitted += 1
            self._ready.notify()
        pending.done.wait()
        if pending.error is not None:
            raise pending.error
        assert pending.decision_id is not None
        return pending.decision_id

    def close(self) -> None:
        """Write what is queued, then stop the thread and close its connection."""
        with self._ready:
            self._closed = True
            self._ready.notify()
            thread = self._thread
        if thread is not None:
            thread.join()

    # -- the writer thread -----------------------------------------------------------------
    def _run(self) -> None:
        while True:
            with self._ready:
                while not self._queue and not self._closed:
                    self._ready.wait()
                if not self._queue:
                    if self._store is not None:   # the connection belongs to this thread
                        self._store.close()
                        self._store = None
                    if self._lock_fd is not None:
                        os.close(self._lock_fd)
                        self._lock_fd = None
                    return
                batch = [self._queue.popleft()
                         for _ in range(min(len(self._queue), self.max_batch))]
            self._write(batch)

    def _connection(self) -> DecisionStore:
        """The writer's connection, opened again when the file was replaced."""
        current = identity(self.path)
        if self._store is None or current is None or current != self._store_id:
            if self._store is not None:
                self._store.close()
                self._store = None
            store = DecisionStore(self.path)
            store.db.execute("PRAGMA synchronous=FULL")   # a commit is on disk when answered
            self._store, self._store_id = store, identity(self.path)
        return self._store

    def _write_lock(self) -> int:
        """The descriptor of the writers' lock file beside the store (made 0600)."""
        if self._lock_fd is None:
            self._lock_fd = os.open(self.path + ".write.lock",
                                    os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        return self._lock_fd

    def _write(self, batch: list[_Pending]) -> None:
        try:
            lock = self._write_lock()
            fcntl.flock(lock, fcntl.LOCK_EX)
        except OSError as exc:
            self._fail(batch, exc)
            return
        try:
            self._transaction(batch)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)

    def _transaction(self, batch: list[_Pending]) -> None:
        try:
            store = self._connection()
            cursor = store.db.cursor()
            cursor.execute("BEGIN IMMEDIATE")
        except BaseException as exc:   # every waiting call hears it
            self._fail(batch, exc)
            return
        try:
            for pending in batch:
                self._insert(store, cursor, pending)
            cursor.execute("COMMIT")
        except BaseException as exc:
            try:
                cursor.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            self._fail(batch, exc)
            return
        self.batches += 1
        for pending in batch:
            if pending.error is None:
                self.written += 1
            pending.done.set()

    @staticmethod
    def _insert(store: DecisionStore, cursor: sqlite3.Cursor, pending: _Pending) -> None:
        """One row in its own savepoint: a row that fails rolls back alone and fails only its
        call; a decision id already taken is drawn again. Any other database error (busy, full,
        I/O) is the batch's."""
        agent_id, action, state, created = pending.row
        for _ in range(ID_ATTEMPTS):
            decision_id = "dec-" + os.urandom(4).hex()
            cursor.execute("SAVEPOINT row")
            try:
                store.insert_rows(cursor, [(decision_id, agent_id, action, state, created)])
            except sqlite3.IntegrityError as exc:
                cursor.execute("ROLLBACK TO row")
                cursor.execute("RELEASE row")
                if "decisions.id" in str(exc):
                    continue
                pending.error = exc
                return
            except (KeyError, TypeError, ValueError) as exc:   # this row's data
                cursor.execute("ROLLBACK TO row")
                cursor.execute("RELEASE row")
                pending.error = exc
                return
            cursor.execute("RELEASE row")
            pending.decision_id = decision_id
            return
        pending.error = DecisionInputError("could not allocate a unique decision id.", key="id")

    @staticmethod
    def _fail(batch: list[_Pending], exc: BaseException) -> None:
        for pending in batch:
            pending.decision_id = None
            pending.error = exc
            pending.done.set()

