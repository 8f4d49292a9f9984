"""The server's CSTP workers: processes of their own for the calls that read and write the
decision store.

A recall against a large store costs a few milliseconds of Python; on threads, every such call
waits for the one interpreter lock, so the server never used more than about one core and a
cheap guardrail check queued behind the lock (issue 27: 167 preAction/s from 4 clients at
1,000,000 decisions, checkGuardrails p99 11 ms). Each worker process has its own interpreter,
its own kept connection to the store (SQLite in WAL mode: readers in parallel across processes,
writers one at a time, waiting on the busy timeout) and its own group-committing writer.

Each worker is joined to the server by a socket pair, and a call goes over it as one frame each
way: the server's event loop writes the body to an idle worker and reads its answer, with no
thread between them. A pool executor's hand-off (its queue's thread, its result thread, a wake of
the event loop from another thread) cost about 0.9 ms a call on an idle two-core machine against
0.2 ms for the socket (docs/team.md).

What stays in the server's own process: the HTTP surface, the hooks, the guardrail checks (cheap,
and answered beside the recalls, never behind them) and the rate limit, which is taken there for
every body before it goes to a worker (one bucket per credential, whichever worker answers). A
body the limit refuses is answered in the server's own process, so the refusal is audited as
before.

A worker that dies (killed, out of memory) fails the call it held with a JSON-RPC internal error
naming the cause, and is started again; one found dead while idle is started again before it is
given a call. Workers ignore SIGINT (a Ctrl-C in the terminal reaches the whole process group) and
SIGTERM (a service manager's stop reaches every process of the service): the server stops them
when its calls are done, by closing their sockets. A worker whose server is gone (killed) ends at
once: its socket closes.
"""

from __future__ import annotations

import asyncio
import atexit
import multiprocessing
import multiprocessing.util  # its exit handler is registered before ours (Workers.start)
import os
import pickle
import signal
import socket
import struct
from collections.abc import Callable
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
FRAME = struct.Struct("!I")   # a frame's length, before its pickled payload
STOP_WAIT = 10.0              # seconds a closed worker has to end before it is killed


class WorkerStopped(Exception):
    """The worker answering a call ended before it answered (``str``: how it ended)."""


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


# -- in a worker process -----------------------------------------------------------------------
def _serve(connection: socket.socket, project: str) -> None:
    """A worker process: its service (no rate limit: the server took it already), then one
    answer per frame until the server closes the socket (or is gone)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        os.nice(NICE)
    except OSError:
        pass
    os.environ["CLAUDE_PROJECT_DIR"] = project
    service = Service(project, RateLimiter(0, 1))
    incoming = connection.makefile("rb")
    try:
        while True:
            size = incoming.read(FRAME.size)
            if len(size) < FRAME.size:
                return    # the server closed the socket, or is gone
            body, who = pickle.loads(incoming.read(FRAME.unpack(size)[0]))
            reply = pickle.dumps(answer(service, body, who))
            try:
                connection.sendall(FRAME.pack(len(reply)) + reply)
            except OSError:
                return    # the server hung up while this call ran (its decision is kept)
    finally:
        service.close()   # the decisions recorded are committed before the process ends


# -- in the server -----------------------------------------------------------------------------
class _Worker:
    """One worker process and the server's end of its socket."""

    def __init__(self, project: str) -> None:
        ours, theirs = socket.socketpair()
        self.process = multiprocessing.get_context("spawn").Process(
            target=_serve, args=(theirs, project), name="governance-cstp-worker", daemon=True)
        self.process.start()
        theirs.close()
        self.socket = ours
        self.streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def call(self, body: bytes, who: str | Caller) -> bytes | None:
        if self.streams is None:
            self.streams = await asyncio.open_connection(sock=self.socket)
        reader, writer = self.streams
        payload = pickle.dumps((body, who))
        try:
            writer.write(FRAME.pack(len(payload)) + payload)
            size = FRAME.unpack(await reader.readexactly(FRAME.size))[0]
            found: bytes | None = pickle.loads(await reader.readexactly(size))
        except (OSError, asyncio.IncompleteReadError) as exc:
            raise WorkerStopped(self.ended(exc)) from None
        return found

    def ended(self, exc: BaseException) -> str:
        """How the worker ended, once it has (a signal, an exit code)."""
        self.process.join(1.0)
        code = self.process.exitcode
        if code is None:
            return f"its socket failed ({type(exc).__name__})"
        if code < 0:
            try:
                return f"killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"killed by signal {-code}"
        return f"exited with code {code}"

    def hang_up(self) -> None:
        """Close the server's end: the worker ends once it has answered the call it holds."""
        if self.streams is not None:
            self.streams[1].close()
        else:
            self.socket.close()

    async def stop(self) -> None:
        """Close its socket (it ends once its call is answered), wait, then kill it if it does
        not end."""
        self.hang_up()
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, self.process.join, STOP_WAIT)
        if self.process.is_alive():
            self.process.kill()
            await loop.run_in_executor(None, self.process.join, STOP_WAIT)


class Workers:
    """The worker processes of one project's server; used from its event loop."""

    def __init__(self, project: str, count: int = WORKERS) -> None:
        self.project = project
        self.count = count
        self._idle: asyncio.Queue[_Worker] | None = None
        self._all: list[_Worker] = []
        self._at_exit = False   # the exit handler is registered

    def start(self) -> None:
        """Start every worker now (each imports the decision code once), without waiting for it."""
        if self._idle is None:
            if not self._at_exit:
                # before multiprocessing's own exit handler, which waits for every worker: a
                # server leaving without close() hangs up, so they end
                atexit.register(self._hang_up_all)
                self._at_exit = True
            self._idle = asyncio.Queue()
            for _ in range(self.count):
                self._add()

    def _hang_up_all(self) -> None:
        for worker in self._all:
            try:
                worker.socket.close()
            except OSError:
                pass

    def _add(self) -> None:
        assert self._idle is not None
        worker = _Worker(self.project)
        self._all.append(worker)
        self._idle.put_nowait(worker)

    def _drop(self, worker: _Worker, why: str) -> None:
        """A worker that ended: said in errors.log, and another started in its place."""
        chain.log_error(governance_dir(self.project),
                        f"cstp worker {worker.process.pid}: {why}; another is started")
        worker.hang_up()
        self._all = [kept for kept in self._all if kept is not worker]
        self._add()

    async def call(self, body: bytes, who: str | Caller) -> bytes | None:
        """An idle worker's answer to ``body`` (waiting for one while every worker is busy).
        Raises :class:`WorkerStopped` when the worker ended before it answered."""
        self.start()
        assert self._idle is not None
        while True:
            worker = await self._idle.get()
            if worker.process.is_alive():
                break
            self._drop(worker, worker.ended(ProcessLookupError()))   # died while idle
        try:
            found = await worker.call(body, who)
        except WorkerStopped as exc:
            self._drop(worker, str(exc))
            raise
        except asyncio.CancelledError:   # its answer would come unread: it ends after the call
            self._drop(worker, "the call it held was cancelled")
            raise
        self._idle.put_nowait(worker)
        return found

    async def close(self) -> None:
        """Let the calls under way finish (their decisions are committed before they answer),
        then stop the workers."""
        if self._idle is None:
            return
        for _ in range(len(self._all)):
            await self._idle.get()
        await asyncio.gather(*(worker.stop() for worker in self._all))
        self._all = []
        self._idle = None


def stopped(why: str) -> Callable[[protocol.Call], Any]:
    """A call's runner that says its worker ended before it answered."""
    def run(call: protocol.Call) -> Any:
        raise protocol.RpcError(protocol.INTERNAL_ERROR,
                                f"the worker process answering this call stopped before it "
                                f"answered ({why}); another is started: retry the call")
    return run
