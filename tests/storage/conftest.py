"""A throwaway PostgreSQL cluster for the session, and the decision store on each engine.

The cluster is the real server (Debian's ``postgresql`` package; ``.ci/run`` installs it): initdb
into a temporary folder, ``pg_ctl start`` listening on a Unix socket in that folder only, stopped
at the end (``Cluster.stop`` and ``Cluster.start`` restart it in between, as an operator or a
crash would). initdb and postgres refuse to run as root, so under root (CI) they run as ``nobody``
(``setpriv``), which owns the folder. Without the binaries or psycopg the PostgreSQL tests skip,
saying why; the SQLite half runs everywhere.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from governance.bench.cluster import NOBODY, USER
from governance.bench.cluster import binaries as _binaries
from governance.decisions.store import DecisionStore


def _as_owner() -> list[str]:
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv"):
        return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    return []


@dataclass
class Cluster:
    """A running server: ``url(name)`` connects to database ``name`` over its socket."""

    folder: str
    names: Iterator[int]
    binaries: str = ""
    owner: list[str] = field(default_factory=list)

    def _pg_ctl(self, *args: str) -> subprocess.CompletedProcess[bytes]:
        options = (f"-k {self.folder} -c listen_addresses='' -c fsync=off "
                   f"-c full_page_writes=off")
        return subprocess.run(
            [*self.owner, f"{self.binaries}/pg_ctl", "-D", os.path.join(self.folder, "data"),
             "-o", options, "-l", os.path.join(self.folder, "server.log"), *args],
            capture_output=True, env={**os.environ, "LC_ALL": "C.UTF-8"}, cwd=self.folder)

    def start(self) -> None:
        """Start the server (again); this process's pools are opened afresh at their next use."""
        done = self._pg_ctl("-w", "-t", "30", "start")
        assert done.returncode == 0, done.stderr.decode()
        from governance.storage import pool

        pool.close_all()     # their connections died with the server that was stopped

    def stop(self, mode: str = "fast") -> None:
        """Stop the server: ``fast`` ends every session at once (as a restart of the host)."""
        done = self._pg_ctl("-m", mode, "-w", "-t", "30", "stop")
        assert done.returncode == 0, done.stderr.decode()

    def url(self, database: str) -> str:
        return f"postgresql:///{database}?host={self.folder}&user={USER}"

    def new_database(self) -> str:
        """A fresh, empty database's URL."""
        import psycopg

        name = f"t{next(self.names)}"
        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name}")
        return self.url(name)


@pytest.fixture(scope="session")
def cluster() -> Iterator[Cluster]:
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError:
        pytest.skip("psycopg is not installed (the `team` extra): the PostgreSQL engine is not "
                    "tested")
    binaries = _binaries()
    if binaries is None:
        pytest.skip("PostgreSQL's initdb and pg_ctl are not installed (Debian: apt-get install "
                    "postgresql): the PostgreSQL engine is not tested")
    owner = _as_owner()
    if os.geteuid() == 0 and not owner:
        pytest.skip("running as root without setpriv: initdb refuses root")
    folder = tempfile.mkdtemp(prefix="governance-pg-", dir="/tmp")   # short: a socket path
    if owner:
        os.chown(folder, NOBODY, NOBODY)
    data = os.path.join(folder, "data")
    env = {**os.environ, "LC_ALL": "C.UTF-8"}
    subprocess.run([*owner, f"{binaries}/initdb", "-D", data, "-U", USER, "--auth=trust",
                    "-E", "UTF8", "--no-sync", "--no-instructions"],
                   check=True, capture_output=True, env=env, cwd=folder)
    server = Cluster(folder, itertools.count(1), binaries, owner)
    server.start()
    try:
        yield server
    finally:
        from governance.storage import pool

        pool.close_all()
        server._pg_ctl("-m", "fast", "-w", "stop")
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def database(cluster: Cluster) -> str:
    """One migrated database for the session; each test's project keeps its own rows."""
    from governance.storage import migration

    url = cluster.new_database()
    migration.migrate(url)
    return url


StoreFactory = Callable[[Path], DecisionStore]


@pytest.fixture(params=["sqlite", "postgres"])
def engine(request: pytest.FixtureRequest) -> str:
    """The engine a test runs on; "postgres" skips, saying why, where there is none."""
    if request.param == "postgres":
        request.getfixturevalue("database")
    return str(request.param)


@pytest.fixture
def open_store(engine: str, request: pytest.FixtureRequest) -> Iterator[StoreFactory]:
    """Opens a project's store on the test's engine (a project folder: its own rows)."""
    opened: list[DecisionStore] = []

    def open_one(project: Path) -> DecisionStore:
        if engine == "sqlite":
            store = DecisionStore.for_project(str(project))
        else:
            store = DecisionStore.for_project(str(project), str(request.getfixturevalue(
                "database")))
        opened.append(store)
        return store

    yield open_one
    for store in opened:
        store.close()


@pytest.fixture
def store(open_store: StoreFactory, project: Path) -> DecisionStore:
    return open_store(project)
