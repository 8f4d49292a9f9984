"""The decision stores a CSTP server keeps open between calls (opening one costs more than a small
query): one per worker thread, and on a team database one per project (and reach) the thread
served. On SQLite every thread reads through a connection of its own and records through the
server's one :class:`BatchWriter`; on PostgreSQL each decision is its own transaction on the
process's pool.
"""

from __future__ import annotations

import threading
from typing import Any

from governance.decisions.store import DecisionStore, db_path
from governance.decisions.writer import BatchWriter, identity
from governance.project import governance_dir
from governance.storage.engine import Engine

KEPT_STORES = 512   # a worker thread's stores kept open, one per project (and reach) it served


class HeldStore(DecisionStore):
    """A worker thread's store, kept between calls: the methods' ``close`` leaves it open. On
    SQLite it records through the server's :class:`BatchWriter`, which commits the decisions of
    concurrent calls together and answers each once its batch is on disk; on PostgreSQL
    (``writer`` None) each decision is its own transaction, answered once committed."""

    def __init__(self, path: str | None, writer: BatchWriter | None, *,
                 engine: Engine | None = None, stamp_dir: str | None = None) -> None:
        super().__init__(path, engine=engine, stamp_dir=stamp_dir)
        self.writer = writer

    def record(self, action: dict[str, Any], agent_id: str, state: dict[str, Any] | None = None,
               now: float | None = None) -> dict[str, Any]:
        if self.writer is None:
            return super().record(action, agent_id, state, now)
        found = self.get(self.writer.record(action, agent_id, state, now))
        assert found is not None
        return found

    def close(self) -> None:
        return None

    def shut(self) -> None:
        self.engine.close()


class Stores:
    """The stores of the served ``project``: its SQLite file, or, with ``database`` (a team's
    PostgreSQL), the rows of every project a call acts in."""

    def __init__(self, project: str, database: str | None) -> None:
        self.project = project
        self.database = database
        self.writer = None if database else BatchWriter(db_path(project))
        self._local = threading.local()
        self._served_id: str | None = None

    def served_id(self) -> str:
        """The id of the served project's rows (``GOVERNANCE_PROJECT_ID``, else its folder)."""
        if self._served_id is None:
            from governance.storage.database import project_id

            self._served_id = project_id(self.project)
        return self._served_id

    def get(self, acting: str | None = None, team: bool = False) -> DecisionStore:
        """This thread's store for the project a call acts in (``acting``; None: the served one;
        on SQLite always the served one, opened again when the database file was replaced). On
        PostgreSQL a ``team``-wide store reads every project and records into ``acting``."""
        if self.database:
            kept: dict[tuple[str, bool], HeldStore] | None = getattr(self._local, "stores", None)
            if kept is None or len(kept) > KEPT_STORES:
                kept = self._local.stores = {}
            key = (acting or self.served_id(), team)
            store = kept.get(key)
            if store is None:
                opened = DecisionStore.for_project_id(
                    self.database, key[0], across=team,
                    stamp_dir=None if acting else governance_dir(self.project))
                store = kept[key] = HeldStore(None, None, engine=opened.engine,
                                              stamp_dir=opened.stamp_dir)
            return store
        assert self.writer is not None
        path = db_path(self.project)
        held: tuple[HeldStore, tuple[int, int] | None] | None = getattr(self._local, "store",
                                                                       None)
        if held is None or held[1] != identity(path):
            if held is not None:
                held[0].shut()
            created = HeldStore(path, self.writer)
            held = self._local.store = (created, identity(path))
        return held[0]

    def close(self) -> None:
        """Write the decisions still queued and stop the writer (the worker threads are done)."""
        if self.writer is not None:
            self.writer.close()
