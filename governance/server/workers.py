"""The server's CSTP workers: processes of their own for the calls that read and write the
decision store.

A recall against a large store costs a few milliseconds of Python; on threads, every such call
waits for the one interpreter lock, so the server never used more than about one core and a
cheap guardrail check queued behind the lock (issue 27: 167 preAction/s from 4 clients at
1,000,000 decisions, checkGuardrails p99 11 ms). Each worker process has its own interpreter,
its own kept connection to the store (SQLite in WAL mode: readers in parallel across processes,
writers one at a time, waiting on the busy timeout) and its own group-committing writer.

What stays in the server's own process: the HTTP surface, the hooks, the guardrail checks (cheap,
and answered beside the recalls, never behind them) and the rate limit, which is taken there for
every body before it goes to a worker (one bucket per credential, whichever worker answers). A
body the limit refuses is answered in the server's own process, so the refusal is audited as
before.

A worker that dies (killed, out of memory) fails the calls it held with a JSON-RPC internal error
naming the cause; the pool is started again for the next call. Workers ignore SIGINT (a Ctrl-C in
the terminal reaches the whole process group) and SIGTERM (a service manager's stop reaches every
process of the service): the server stops them when its calls are done. A worker whose server is
gone (killed) ends within a second.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.util
import os
import signal
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from governance.ledger import chain
from governance.project import governance_dir
from governance.server import protocol
from governance.server.cstp import Service
from governance.server.identity import Caller
from governance.server.ratelimit import RateLimiter

# Two: this machine's cores. The server's own process (HTTP, hooks, guardrail checks) takes
# little beside them.
WORKERS = 2
NICE = 5    # workers yield to the server's own process: a guardrail check is not kept waiting

_held: dict[str, Service] = {}    # in a worker process: its one service


def answer(service: Service, body: bytes, who: str | Caller) -> bytes | None:
    """The JSON-RPC answer to ``body`` from ``service`` (None for notifications only). ``who``
    is the caller's credential (see :func:`governance.server.cstp.credential_key`): the rate
    limit and the audit key on it, never on the agent a call declares."""
    def run(call: protocol.Call) -> Any:
        try:
            return service.run(call, who)
        except protocol.RpcError:
            raise
        except Exception as exc:
            log = chain.log_error(governance_dir(service.project),
                                  f"cstp {call.method}: {type(exc).__name__}: {exc}")
            raise protocol.RpcError(protocol.INTERNAL_ERROR,
                                    f"internal error ({type(exc).__name__})",
                                    {"log": log} if log else None) from None

    return protocol.answer(body, run)


def _orphaned(server: int) -> None:
    """End this worker once its server is gone (nothing would read its answers)."""
    while os.getppid() == server:
        time.sleep(1.0)
    os._exit(0)


def _start(project: str) -> None:
    """A worker process's start: its service (no rate limit: the server took it already)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    threading.Thread(target=_orphaned, args=(os.getppid(),), name="governance-orphaned",
                     daemon=True).start()
    try:
        os.nice(NICE)
    except OSError:
        pass
    os.environ["CLAUDE_PROJECT_DIR"] = project
    service = Service(project, RateLimiter(0, 1))
    _held["service"] = service
    multiprocessing.util.Finalize(None, service.close, exitpriority=10)


def _answer(body: bytes, who: str | Caller) -> bytes | None:
    """In a worker process: the answer to one body."""
    return answer(_held["service"], body, who)


def _ready() -> int:
    return os.getpid()


class Workers:
    """The pool of worker processes of one project's server."""

    def __init__(self, project: str, count: int = WORKERS) -> None:
        self.project = project
        self.count = count
        self._lock = threading.Lock()
        self._pool: ProcessPoolExecutor | None = None

    def _executor(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ProcessPoolExecutor(
                    self.count, mp_context=multiprocessing.get_context("spawn"),
                    initializer=_start, initargs=(self.project,))
            return self._pool

    def start(self) -> None:
        """Start every worker now (each imports the decision code once), without waiting."""
        pool = self._executor()
        for _ in range(self.count):
            pool.submit(_ready)

    def submit(self, body: bytes, who: str | Caller) -> Future[bytes | None]:
        """A worker's answer to ``body``, to come. A pool whose worker died is replaced."""
        pool = self._executor()
        try:
            return pool.submit(_answer, body, who)
        except BrokenProcessPool:
            self._replace(pool)
            return self._executor().submit(_answer, body, who)

    def failed(self, exc: BaseException) -> None:
        """A call's worker died (``exc``): said in errors.log, and the pool replaced."""
        chain.log_error(governance_dir(self.project),
                        f"cstp worker: {type(exc).__name__}: {exc}; the workers are started again")
        with self._lock:
            pool = self._pool
        if pool is not None:
            self._replace(pool)

    def _replace(self, pool: ProcessPoolExecutor) -> None:
        with self._lock:
            if self._pool is pool:
                self._pool = None
        pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        """Let the calls under way finish (their decisions are committed before they answer),
        then stop the workers."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)
