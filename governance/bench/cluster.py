"""A throwaway PostgreSQL cluster for a benchmark: ``initdb`` into a temporary folder, ``pg_ctl
start`` listening on a Unix socket in that folder only, stopped and removed at the end.

initdb and postgres refuse to run as root, so under root they run as ``nobody`` (``setpriv``),
which owns the folder (the same approach as the test suite's cluster, ``tests/storage``).
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence

NOBODY = 65534
USER = "governance"


def binaries() -> str | None:
    """The folder of initdb and pg_ctl: Debian's (not on PATH), else PATH's."""
    for folder in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if os.path.exists(os.path.join(folder, "pg_ctl")):
            return folder
    found = shutil.which("pg_ctl")
    return os.path.dirname(found) if found and shutil.which("initdb") else None


def missing() -> str | None:
    """Why no cluster can be started here, or None."""
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install 'claude-governance[team]')"
    if binaries() is None:
        return ("PostgreSQL's initdb and pg_ctl are not installed (Debian: apt-get install "
                "postgresql)")
    if os.geteuid() == 0 and not shutil.which("setpriv"):
        return "running as root without setpriv: initdb refuses root"
    return None


class Cluster:
    """A running server; ``url(name)`` connects to database ``name`` over its socket."""

    def __init__(self, settings: Sequence[str] = ()) -> None:
        why = missing()
        if why:
            raise RuntimeError(why)
        self.bin = str(binaries())
        self.owner = (["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
                      if os.geteuid() == 0 else [])
        self.folder = tempfile.mkdtemp(prefix="governance-pg-", dir="/tmp")  # short: a socket
        if self.owner:
            os.chown(self.folder, NOBODY, NOBODY)
        self.data = os.path.join(self.folder, "data")
        self.env = {**os.environ, "LC_ALL": "C.UTF-8"}
        self.settings = list(settings)
        self.started = False

    def _run(self, *argv: str) -> None:
        subprocess.run([*self.owner, *argv], check=True, capture_output=True, env=self.env,
                       cwd=self.folder)

    def start(self) -> Cluster:
        self._run(f"{self.bin}/initdb", "-D", self.data, "-U", USER, "--auth=trust", "-E",
                  "UTF8", "--no-instructions", "--no-sync")   # initdb's files only: the server syncs
        options = " ".join([f"-k {self.folder}", "-c listen_addresses=''",
                            *(f"-c {setting}" for setting in self.settings)])
        self._run(f"{self.bin}/pg_ctl", "-D", self.data, "-o", options, "-l",
                  os.path.join(self.folder, "server.log"), "-w", "-t", "60", "start")
        self.started = True
        return self

    def url(self, database: str) -> str:
        return f"postgresql:///{database}?host={self.folder}&user={USER}"

    def create(self, name: str) -> str:
        """A new, empty database's URL."""
        import psycopg
        from psycopg import sql

        with psycopg.connect(self.url("postgres"), autocommit=True) as conn:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return self.url(name)

    def version(self) -> str:
        import psycopg

        with psycopg.connect(self.url("postgres")) as conn:
            row = conn.execute("SHOW server_version").fetchone()
        return str(row[0]) if row else "?"

    def stop(self) -> None:
        """Stop the server (immediate: its data is thrown away) and remove its folder; safe to
        call twice."""
        if self.started:
            subprocess.run([*self.owner, f"{self.bin}/pg_ctl", "-D", self.data, "-m", "immediate",
                            "-w", "stop"], capture_output=True, env=self.env, cwd=self.folder)
            self.started = False
        shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> Cluster:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()
