"""PostgreSQL connections: one ``psycopg_pool.ConnectionPool`` per process and database, opened at
first use, and every failure to reach the database turned into one :class:`StorageError` sentence
naming the URL (its password masked) and the fix.

The only importer of psycopg with :mod:`governance.storage.postgres` and
:mod:`governance.storage.migration`; nothing imports them unless a database URL was given (never a
hook).
"""

from __future__ import annotations

import atexit
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from governance.errors import StorageError
from governance.storage.database import ENV, masked

CONNECT_TIMEOUT = 5       # seconds to reach the server
WAIT = 30.0               # seconds a call waits for a free connection
MAX_CONNECTIONS = 16      # per process (the server's worker threads share them)
APPLICATION = "claude-governance"
_POOLS: dict[tuple[int, str], ConnectionPool] = {}
_LOCK = threading.Lock()


def _settings(url: str) -> dict[str, Any]:
    settings: dict[str, Any] = {"application_name": APPLICATION}
    if "connect_timeout" not in url:
        settings["connect_timeout"] = CONNECT_TIMEOUT
    return settings


def down(url: str, exc: BaseException) -> StorageError:
    """The one-line error for a database that cannot be reached."""
    reason = " ".join(str(exc).split()) or type(exc).__name__
    secret = _password(url)
    if secret:
        reason = reason.replace(secret, "***")
    return StorageError(
        f"cannot reach the decision database {masked(url)} ({reason})",
        fix=f"start PostgreSQL there (docs/team.md shows how), correct --database or {ENV}, "
            f"or unset {ENV} to keep each project's own SQLite file")


def _password(url: str) -> str | None:
    from urllib.parse import urlsplit

    try:
        return urlsplit(url).password
    except ValueError:
        return None


def connect(url: str, *, autocommit: bool = True) -> psycopg.Connection[Any]:
    """One connection of its own (migrations, status), or a :class:`StorageError`."""
    try:
        return psycopg.connect(url, autocommit=autocommit, **_settings(url))
    except psycopg.Error as exc:
        raise down(url, exc) from None


def pool(url: str) -> ConnectionPool:
    """This process's pool for ``url`` (a forked or spawned worker opens its own)."""
    key = (os.getpid(), url)
    with _LOCK:
        found = _POOLS.get(key)
        if found is None:
            connect(url).close()    # an unreachable database is one clear sentence, at once
            found = ConnectionPool(url, min_size=1, max_size=MAX_CONNECTIONS, open=False,
                                   kwargs={"autocommit": True, **_settings(url)}, timeout=WAIT,
                                   name="governance")
            try:
                found.open(wait=True, timeout=WAIT)
            except PoolTimeout as exc:
                found.close()
                raise down(url, exc) from None
            atexit.register(found.close)
            _POOLS[key] = found
    return found


@contextmanager
def borrowed(url: str) -> Iterator[psycopg.Connection[Any]]:
    """A connection of this process's pool for ``url`` (autocommit: a write opens its own
    transaction); a lost database is a :class:`StorageError`."""
    try:
        with pool(url).connection() as conn:
            yield conn
    except (psycopg.OperationalError, PoolTimeout) as exc:
        raise down(url, exc) from None


def close_all() -> None:
    """Close this process's pools (a test that stops its database server; the end of a run)."""
    with _LOCK:
        for key in [key for key in _POOLS if key[0] == os.getpid()]:
            _POOLS.pop(key).close()
