"""Where a server keeps the central copy of ledgers: its rows ``(project, seq, hash, prev,
line)`` in the team's PostgreSQL database (table ``central_ledger``, migration 0003) or, without
a database, in a SQLite file beside the served project's ledger (``central-ledger.db``).

The two engines satisfy one :class:`CentralCopy`; they store and read rows and check nothing
(``governance.server.audit`` checks the chain before it adds). :meth:`CentralCopy.add` writes one
batch in one transaction: all of it or none. :meth:`CentralCopy.projects` and
:meth:`CentralCopy.iter_lines` read it back for a report across projects, streamed: a server-side
cursor on PostgreSQL, a cursor of its own read-only connection on SQLite.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import quote

from governance.errors import ChainError

FILE = "central-ledger.db"
SCHEMA = """CREATE TABLE IF NOT EXISTS central_ledger (
    project_id TEXT NOT NULL, seq INTEGER NOT NULL, hash TEXT NOT NULL, prev TEXT NOT NULL,
    line TEXT NOT NULL, received_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (project_id, seq)) WITHOUT ROWID"""
FETCH = 1000      # rows fetched at a time when a copy is read back


@dataclass(frozen=True)
class Row:
    seq: int
    hash: str
    prev: str
    line: str


def _taken(seq: int) -> ChainError:
    return ChainError(f"seq {seq} was stored by another ship at the same time",
                      seq=seq, fix="run `governance ledger ship` again")


class CentralCopy(Protocol):
    def head(self, project: str) -> tuple[int, str | None]:
        """The last stored ``(seq, hash)`` of a project; ``(0, None)`` when none is."""

    def hashes(self, project: str, first: int, last: int) -> dict[int, str]:
        """seq -> hash of the stored records ``first..last``."""

    def add(self, project: str, rows: list[Row]) -> None:
        """Store ``rows`` in one transaction (a seq stored already: :class:`ChainError`)."""

    def lines(self, project: str) -> list[str]:
        """Every stored line of a project in seq order (tests, small copies)."""

    def projects(self) -> list[str]:
        """The ids of the projects the copy holds records of, sorted."""

    def iter_lines(self, project: str | None = None) -> Iterator[tuple[str, Row]]:
        """``(project id, row)`` of every stored record of ``project`` (None: of every project),
        project by project in id order, each in seq order; a few thousand rows in memory at a
        time, whatever the size of the copy."""

    def close(self) -> None: ...


class SqliteCopy:
    """The copy in one SQLite file (WAL: a killed server loses no committed batch)."""

    def __init__(self, path: str) -> None:
        os.makedirs(os.path.dirname(path) or ".", mode=0o700, exist_ok=True)
        self.path = path
        self.conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        os.chmod(path, 0o600)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute(SCHEMA)
        self.lock = threading.Lock()

    def head(self, project: str) -> tuple[int, str | None]:
        with self.lock:
            found = self.conn.execute("SELECT seq, hash FROM central_ledger WHERE project_id = ? "
                                      "ORDER BY seq DESC LIMIT 1", (project,)).fetchone()
        return (int(found[0]), str(found[1])) if found else (0, None)

    def hashes(self, project: str, first: int, last: int) -> dict[int, str]:
        with self.lock:
            return {int(s): str(h) for s, h in self.conn.execute(
                "SELECT seq, hash FROM central_ledger WHERE project_id = ? AND seq BETWEEN ? "
                "AND ?", (project, first, last))}

    def add(self, project: str, rows: list[Row]) -> None:
        with self.lock:
            try:
                self.conn.execute("BEGIN IMMEDIATE")
                self.conn.executemany(
                    "INSERT INTO central_ledger (project_id, seq, hash, prev, line) "
                    "VALUES (?, ?, ?, ?, ?)",
                    [(project, r.seq, r.hash, r.prev, r.line) for r in rows])
                self.conn.execute("COMMIT")
            except sqlite3.IntegrityError:
                self.conn.execute("ROLLBACK")
                raise _taken(rows[0].seq) from None
            except BaseException:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise

    def lines(self, project: str) -> list[str]:
        with self.lock:
            return [str(line) for (line,) in self.conn.execute(
                "SELECT line FROM central_ledger WHERE project_id = ? ORDER BY seq", (project,))]

    def projects(self) -> list[str]:
        found: list[str] = []
        with self.lock:
            while True:     # one primary-key lookup per project, not a scan of every row
                (after,) = self.conn.execute(
                    "SELECT min(project_id) FROM central_ledger WHERE project_id > ?",
                    (found[-1] if found else "",)).fetchone()
                if after is None:
                    return found
                found.append(str(after))

    def iter_lines(self, project: str | None = None) -> Iterator[tuple[str, Row]]:
        """Read on a read-only connection of its own (WAL: ships go on meanwhile; the reading
        sees the copy as it was when it began)."""
        reader = sqlite3.connect(f"file:{quote(self.path)}?mode=ro", uri=True, timeout=10.0)
        try:
            cursor = reader.execute(*_select(project, "?"))
            while True:
                rows = cursor.fetchmany(FETCH)
                if not rows:
                    return
                for pid, seq, digest, prev, line in rows:
                    yield str(pid), Row(int(seq), str(digest), str(prev), str(line))
        finally:
            reader.close()

    def close(self) -> None:
        self.conn.close()


class PostgresCopy:
    """The copy in the team database (its pool; rows loaded with ``COPY``)."""

    def __init__(self, url: str) -> None:
        self.url = url

    def head(self, project: str) -> tuple[int, str | None]:
        from governance.storage.pool import borrowed

        with borrowed(self.url) as conn:
            found = conn.execute("SELECT seq, hash FROM central_ledger WHERE project_id = %s "
                                 "ORDER BY seq DESC LIMIT 1", (project,)).fetchone()
        return (int(found[0]), str(found[1])) if found else (0, None)

    def hashes(self, project: str, first: int, last: int) -> dict[int, str]:
        from governance.storage.pool import borrowed

        with borrowed(self.url) as conn:
            return {int(s): str(h) for s, h in conn.execute(
                "SELECT seq, hash FROM central_ledger WHERE project_id = %s AND seq BETWEEN %s "
                "AND %s", (project, first, last))}

    def add(self, project: str, rows: list[Row]) -> None:
        import psycopg

        from governance.storage.pool import borrowed

        with borrowed(self.url) as conn:
            try:
                with conn.transaction(), conn.cursor() as cur, cur.copy(
                        "COPY central_ledger (project_id, seq, hash, prev, line) FROM STDIN"
                ) as copy:
                    for r in rows:
                        copy.write_row((project, r.seq, r.hash, r.prev, r.line))
            except psycopg.errors.UniqueViolation:
                raise _taken(rows[0].seq) from None

    def lines(self, project: str) -> list[str]:
        from governance.storage.pool import borrowed

        with borrowed(self.url) as conn:
            return [str(line) for (line,) in conn.execute(
                "SELECT line FROM central_ledger WHERE project_id = %s ORDER BY seq",
                (project,))]

    def projects(self) -> list[str]:
        from governance.storage.pool import borrowed

        found: list[str] = []
        with borrowed(self.url) as conn:
            while True:     # one primary-key lookup per project, not a scan of every row
                row = conn.execute("SELECT min(project_id) FROM central_ledger "
                                   "WHERE project_id > %s", (found[-1] if found else "",)
                                   ).fetchone()
                if row is None or row[0] is None:
                    return found
                found.append(str(row[0]))

    def iter_lines(self, project: str | None = None) -> Iterator[tuple[str, Row]]:
        """Read through a named (server-side) cursor in one read-only transaction: the rows come
        ``FETCH`` at a time, and the reading sees the copy as it was when it began."""
        from governance.storage.pool import borrowed

        with borrowed(self.url) as conn, conn.transaction(), \
                conn.cursor(name="central_ledger_report") as cursor:
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            cursor.itersize = FETCH
            cursor.execute(*_select(project, "%s"))
            for pid, seq, digest, prev, line in cursor:
                yield str(pid), Row(int(seq), str(digest), str(prev), str(line))

    def close(self) -> None:
        pass


def _select(project: str | None, mark: str) -> tuple[str, tuple[str, ...]]:
    """The query of :meth:`CentralCopy.iter_lines` (``mark``: the engine's placeholder)."""
    columns = "SELECT project_id, seq, hash, prev, line FROM central_ledger"
    if project is None:
        return f"{columns} ORDER BY project_id, seq", ()
    return f"{columns} WHERE project_id = {mark} ORDER BY seq", (project,)


def open_copy(gov_dir: str, url: str | None) -> CentralCopy:
    """The copy a server keeps: in the database at ``url``, else in ``gov_dir``'s SQLite file."""
    return PostgresCopy(url) if url else SqliteCopy(os.path.join(gov_dir, FILE))
