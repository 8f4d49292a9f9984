"""PostgreSQL connections: one ``psycopg_pool.ConnectionPool`` per process and database, opened at
first use, and every failure to reach the database turned into one :class:`StorageError` sentence
naming the URL (its password masked) and the fix.

Every connection has a statement timeout (:data:`STATEMENT_TIMEOUT_ENV`, milliseconds, default
:data:`STATEMENT_TIMEOUT`): a statement held up longer, by a lock or a database under strain, is
cancelled and said in one sentence, so a server call never waits on the database for ever. A
call waits at most :data:`POOL_TIMEOUT_ENV` seconds for a free connection. Migrations turn the
statement timeout off on their own connection (:mod:`governance.storage.migration`).

A call may run some of its statements at once, each on a connection of its own: :func:`beside`
runs one on a thread of this process's few (a preAction reads the agent's calibration and records
its decision while it matches).

A connection lost (the database restarted) fails the statement it carried; the pool's other idle
connections are then checked at once, and the broken ones replaced as the database answers again.
While the database does not answer, a call fails at once (it waits :data:`FAST` seconds for a
connection, not the pool's timeout), so calls do not queue behind one another for the timeout
each; the first connection the pool makes again ends that.

The only importer of psycopg with :mod:`governance.storage.postgres` and
:mod:`governance.storage.migration`; nothing imports them unless a database URL was given (never a
hook).
"""

from __future__ import annotations

import atexit
import os
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, TypeVar

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from governance.errors import StorageError
from governance.storage.database import ENV, masked

CONNECT_TIMEOUT = 5       # seconds to reach the server
STATEMENT_TIMEOUT = 5000  # milliseconds a statement may run (0: no limit)
STATEMENT_TIMEOUT_ENV = "GOVERNANCE_DATABASE_STATEMENT_TIMEOUT"
POOL_TIMEOUT = 5.0        # seconds a call waits for a free connection
POOL_TIMEOUT_ENV = "GOVERNANCE_DATABASE_POOL_TIMEOUT"
MAX_CONNECTIONS = 16      # per process (the server's worker threads share them)
FAST = 0.1                # seconds a call waits for a connection while the database is down
APPLICATION = "claude-governance"
_POOLS: dict[tuple[int, str], ConnectionPool] = {}
_CHECKING: set[int] = set()    # the pools whose idle connections are being checked
_DOWN: dict[int, float] = {}   # pool -> since when it cannot reach the database (monotonic)
BESIDE = 4                # threads per process for the statements a call runs beside its own
_BESIDE: dict[int, ThreadPoolExecutor] = {}
_LOCK = threading.Lock()
T = TypeVar("T")


def _number(name: str, default: float) -> float:
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    try:
        found = float(value)
    except ValueError:
        found = -1.0
    if not found >= 0:
        raise StorageError(f"{name} is {value!r}, not a number of "
                           f"{'milliseconds' if name == STATEMENT_TIMEOUT_ENV else 'seconds'}",
                           fix=f"set it to a number (0 or more), or unset it for {default:g}")
    return found


def statement_timeout() -> int:
    """Milliseconds a statement may run on this process's connections (0: no limit)."""
    return int(_number(STATEMENT_TIMEOUT_ENV, STATEMENT_TIMEOUT))


def pool_timeout() -> float:
    """Seconds a call waits for a free connection of the pool."""
    return _number(POOL_TIMEOUT_ENV, POOL_TIMEOUT)


def _settings(url: str) -> dict[str, Any]:
    from psycopg.conninfo import conninfo_to_dict

    settings: dict[str, Any] = {"application_name": APPLICATION}
    if "connect_timeout" not in url:
        settings["connect_timeout"] = CONNECT_TIMEOUT
    try:
        options = str(conninfo_to_dict(url).get("options") or "")
    except psycopg.Error:
        options = ""    # psycopg.connect says what is wrong with the URL
    if "statement_timeout" not in options:   # one the URL sets itself is kept
        settings["options"] = f"{options} -c statement_timeout={statement_timeout()}".strip()
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


def slow(url: str, exc: BaseException) -> StorageError:
    """The one-line error for a statement the statement timeout cancelled."""
    reason = " ".join(str(exc).split()) or type(exc).__name__
    return StorageError(
        f"the decision database {masked(url)} did not finish a statement within "
        f"{statement_timeout()} ms ({reason})",
        fix=f"retry the call; if it keeps happening, look for what holds the database up "
            f"(pg_stat_activity), or raise {STATEMENT_TIMEOUT_ENV} (milliseconds, 0: no limit)")


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
            wait = pool_timeout()
            found = ConnectionPool(url, min_size=1, max_size=MAX_CONNECTIONS, open=False,
                                   kwargs={"autocommit": True, **_settings(url)}, timeout=wait,
                                   name="governance")
            try:
                found.open(wait=True, timeout=max(wait, CONNECT_TIMEOUT))
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
    found = pool(url)
    lost = _DOWN.get(id(found))
    held: psycopg.Connection[Any] | None = None
    try:
        with found.connection(timeout=None if lost is None else FAST) as conn:
            held = conn
            _DOWN.pop(id(found), None)
            yield conn
    except psycopg.errors.QueryCanceled as exc:
        raise slow(url, exc) from None
    except psycopg.OperationalError as exc:
        if held is None or held.broken or held.closed:    # the database went away
            _DOWN.setdefault(id(found), time.monotonic())
            _check(found)
        raise down(url, exc) from None
    except PoolTimeout as exc:
        _DOWN.setdefault(id(found), time.monotonic())
        reason: BaseException = exc if lost is None else PoolTimeout(
            f"no connection for {time.monotonic() - lost:.1f} s")
        raise down(url, reason) from None


def beside(work: Callable[[], T]) -> Future[T]:
    """``work`` (statements on connections it borrows) on one of this process's :data:`BESIDE`
    threads, while the caller goes on with its own; its result, or its exception, through the
    future."""
    with _LOCK:
        threads = _BESIDE.get(os.getpid())
        if threads is None:
            threads = _BESIDE[os.getpid()] = ThreadPoolExecutor(
                BESIDE, thread_name_prefix="governance-beside")
    return threads.submit(work)


def _check(found: ConnectionPool) -> None:
    """Check the pool's idle connections in the background, once at a time: after a restart of
    the database every one of them is broken, and each would fail a call of its own."""
    with _LOCK:
        if id(found) in _CHECKING:
            return
        _CHECKING.add(id(found))

    def run() -> None:
        try:
            found.check()
        except Exception:   # a pool closed meanwhile: nothing left to check
            pass
        finally:
            with _LOCK:
                _CHECKING.discard(id(found))

    threading.Thread(target=run, name="governance-pool-check", daemon=True).start()


def close_all() -> None:
    """Close this process's pools (a test that stops its database server; the end of a run)."""
    with _LOCK:
        for key in [key for key in _POOLS if key[0] == os.getpid()]:
            closed = _POOLS.pop(key)
            _DOWN.pop(id(closed), None)
            closed.close()
