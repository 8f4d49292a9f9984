"""Schema migrations of the PostgreSQL store: numbered plain SQL files
(``migrations/NNNN_name.sql``), forward only, each applied once in its own transaction and written
in ``schema_migrations`` with its checksum.

:func:`migrate` holds a session advisory lock (:data:`LOCK_KEY`) while it reads what was applied and
applies the rest, so two servers started at once with ``--migrate`` apply each migration once (the
second waits, then finds nothing to do). A migration may run long: its connection has no statement
timeout (:data:`governance.storage.pool.STATEMENT_TIMEOUT_ENV` bounds the other statements). A
SQLite store migrates itself when it is opened (its ``user_version``,
:mod:`governance.storage.sqlite`).
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from dataclasses import dataclass
from typing import Any

from governance.errors import StorageError
from governance.storage.database import masked

FOLDER = os.path.join(os.path.dirname(__file__), "migrations")
NAME = re.compile(r"(\d{4})_([a-z0-9_]+)\.sql")
# pg_advisory_lock's key for migrations: any fixed 64-bit number no other tool of the database uses.
LOCK_KEY = 0x676F7665726E   # "govern"
TABLE = """CREATE TABLE IF NOT EXISTS schema_migrations (
    version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now(), duration_ms double precision NOT NULL)"""


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.sql.encode()).hexdigest()


def available() -> list[Migration]:
    """The migrations this version ships, in order."""
    found = []
    for entry in sorted(os.listdir(FOLDER)):
        match = NAME.fullmatch(entry)
        if match:
            with open(os.path.join(FOLDER, entry), encoding="utf-8") as handle:
                found.append(Migration(int(match[1]), match[2], handle.read()))
    return found


def latest() -> int:
    return max((m.version for m in available()), default=0)


def applied(conn: Any) -> dict[int, tuple[str, str]]:
    """version -> (name, checksum) of the migrations the database has (none: no table yet)."""
    exists = conn.execute("SELECT to_regclass('schema_migrations') IS NOT NULL").fetchone()[0]
    if not exists:
        return {}
    return {int(v): (str(n), str(c)) for v, n, c in
            conn.execute("SELECT version, name, checksum FROM schema_migrations")}


def status(url: str) -> dict[str, Any]:
    """Where the database stands: its version, what is pending, and any migration changed since
    it was applied."""
    from governance.storage.pool import connect

    with connect(url) as conn:
        have = applied(conn)
    shipped = available()
    return {"engine": "postgresql", "url": masked(url), "version": max(have, default=0),
            "latest": latest(), "applied": sorted(have),
            "pending": [f"{m.version:04d}_{m.name}" for m in shipped if m.version not in have],
            "changed": [f"{m.version:04d}_{m.name}" for m in shipped
                        if m.version in have and have[m.version][1] != m.checksum],
            "unknown": sorted(set(have) - {m.version for m in shipped})}


def migrate(url: str) -> list[str]:
    """Apply the pending migrations under the advisory lock; the ones applied now (none when the
    database was up to date)."""
    from governance.storage.pool import connect

    done = []
    with connect(url) as conn:
        conn.execute("SET statement_timeout = 0")   # a migration may rewrite a large table
        conn.execute("SELECT pg_advisory_lock(%s)", (LOCK_KEY,))
        try:
            conn.execute(TABLE)
            have = applied(conn)
            newer = sorted(set(have) - {m.version for m in available()})
            if newer:
                raise StorageError(
                    f"the database {masked(url)} has schema version {max(newer)}, newer than "
                    f"this claude-governance knows ({latest()})",
                    fix="upgrade claude-governance on this machine to the version that migrated "
                        "the database")
            for step in available():
                if step.version in have:
                    continue
                started = time.perf_counter()
                with conn.transaction():
                    conn.execute(step.sql.encode())
                    conn.execute("INSERT INTO schema_migrations (version, name, checksum, "
                                 "duration_ms) VALUES (%s, %s, %s, %s)",
                                 (step.version, step.name, step.checksum,
                                  round((time.perf_counter() - started) * 1000, 3)))
                done.append(f"{step.version:04d}_{step.name}")
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (LOCK_KEY,))
    return done


def require_current(url: str, conn: Any) -> None:
    """Raise a :class:`StorageError` naming the fix unless the database has every migration this
    version ships and none it does not know."""
    have = applied(conn)
    version, wanted = max(have, default=0), latest()
    if version < wanted or len(have) < len(available()):
        raise StorageError(
            f"the decision database {masked(url)} is at schema version {version}; this "
            f"claude-governance needs version {wanted}",
            fix=f"run `governance db migrate --database {masked(url)}` (or start the server "
                f"with --migrate)")
    if version > wanted:
        raise StorageError(
            f"the decision database {masked(url)} has schema version {version}, newer than this "
            f"claude-governance knows ({wanted})",
            fix="upgrade claude-governance on this machine")
