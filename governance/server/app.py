"""The HTTP surface as an ASGI application: ``/healthz``, ``/readyz``, ``/openapi.json``,
``POST /cstp``, ``POST /hooks/{event}``, ``GET /report`` (``governance.server.report_page``) and
the central copy of ledgers, ``POST /ledger/ship`` and ``GET /ledger/head``
(``governance.server.audit``).

Every request is checked in this order: the ``Host`` header names a loopback host or the
configured one (a web page cannot reach the server by DNS rebinding), then the bearer token:
the project's, else a minted one (:mod:`governance.server.identity`; without either: 401 and
nothing else; ``/healthz`` needs none; a token of another project: 403), then the body size and how long the
body takes to arrive (a slow client holds up nobody: bodies are read asynchronously).

A hook decision runs on the event loop itself, in arrival order: it takes well under a
millisecond, and handing it to a thread would cost more in waits for the interpreter lock. CSTP
calls, which can take milliseconds against a large decision store, run in worker processes of
their own (:mod:`governance.server.workers`), so recalls use every core. A single guardrail
check reads no decision: like a hook decision it runs on the event loop, beside the recalls,
never behind them (handing it to a thread cost more than the check: two waits for a sleeping
thread).

A hook call runs the very functions the command hooks run (``governance.hook.run``,
``governance.session.briefing``) on the request body, so both transports give the same answer.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

from governance.errors import StorageError
from governance.hook import payload
from governance.ledger import chain
from governance.project import governance_dir
from governance.server import credential, protocol
from governance.server.cstp import Service, credential_key
from governance.server.hooks import HOOKS, hook_answer
from governance.server.identity import Caller, Verifier, tokens_for
from governance.server.ratelimit import RateLimiter
from governance.server.relay import Relay
from governance.server.token_watch import TokenWatch
from governance.server.workers import WORKERS, Workers, WorkerStopped, answer, stopped
from governance.storage.database import PROJECT_ID

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1", "localhost.localdomain"})
CSTP_MAX_BODY = 1024 * 1024
PROJECT_HEADER = b"x-governance-project"   # the project a request acts in, on a team server


@dataclass
class Settings:
    """How one server runs: its project and token, who may address it, and its limits."""

    project: str
    token: str
    host: str = "127.0.0.1"            # an extra name the Host header may carry
    check_host: bool = True            # off on a unix socket, which no web page can reach
    max_body: int = CSTP_MAX_BODY
    max_hook_body: int = payload.MAX_BYTES
    body_timeout: float = 10.0
    rate: float = 20.0                 # CSTP calls per second per agent
    burst: int = 60
    workers: int = WORKERS             # CSTP worker processes; 0: threads of this process
    token_cache: float = 2.0           # seconds a minted token's lookup is kept (revoke bound)
    ship_ledger: bool = False          # record the ledger in the team database as it grows
    hosts: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        self.hosts = LOOPBACK | {self.host.lower().strip("[]")}


class Refused(Exception):
    """A request answered with an HTTP error before it reaches a handler."""

    def __init__(self, status: int, message: str, headers: list[tuple[bytes, bytes]] | None = None
                 ) -> None:
        super().__init__(message)
        self.status = status
        self.headers = headers or []


def host_name(value: str) -> str:
    """The name in a Host header, without its port: ``[::1]:8080`` -> ``::1``."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def version() -> str:
    """The installed package's version, or "unknown" when run from a bare checkout."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("claude-governance")
    except PackageNotFoundError:
        return "unknown"


# Threads for the calls that read or write the decision store when the server runs without
# worker processes (Settings.workers = 0).
CSTP_WORKERS = 2
QUICK_WORKERS = 2  # bodies the rate limit refuses, and every call when there are no workers
QUICK_METHODS = (b"cstp.checkGuardrails",)


def _quick(body: bytes) -> bool:
    """Whether a JSON-RPC body is one guardrail check (a batch goes with the others)."""
    if not body.lstrip().startswith(b"{") or body.count(b'"method"') != 1:
        return False
    try:
        found = json.loads(body)
    except ValueError:
        return False
    return isinstance(found, dict) and str(found.get("method", "")).encode() in QUICK_METHODS


def _calls(body: bytes) -> int:
    """How many calls a JSON-RPC body holds (0 when it does not parse: the server's own
    process then says why)."""
    try:
        found = json.loads(body)
    except (ValueError, RecursionError):   # UnicodeDecodeError is a ValueError
        return 0
    if isinstance(found, dict):
        return 1
    return len(found) if isinstance(found, list) else 0


def readiness(project: str, database: str | None) -> tuple[bool, dict[str, Any]]:
    """Whether the server can answer CSTP calls now, and why not: the decision store opens and, on
    PostgreSQL, is reachable with no migration pending (``/readyz``, which needs no token, like
    ``/healthz``, which says only that the process answers). The answer names no host, user or
    database; errors.log has the driver's own words."""
    from governance.errors import GovernanceError

    if not database:
        from governance.decisions.store import DecisionStore, db_path

        try:
            DecisionStore(db_path(project)).close()
        except (OSError, sqlite3.Error, GovernanceError) as exc:
            chain.log_error(governance_dir(project), f"readyz: {type(exc).__name__}: {exc}")
            return False, {"status": "not ready", "engine": "sqlite",
                           "reason": "the decision store does not open (errors.log says why)"}
        return True, {"status": "ready", "engine": "sqlite"}
    from governance.storage import migration

    try:
        found = migration.status(database)
    except Exception as exc:   # the driver's own errors too: the database is not reachable
        chain.log_error(governance_dir(project), f"readyz: {type(exc).__name__}: {exc}")
        return False, {"status": "not ready", "engine": "postgresql",
                       "reason": "the database does not answer (errors.log says why)"}
    waiting = found["pending"] + found["changed"]
    if waiting:
        return False, {"status": "not ready", "engine": "postgresql",
                       "reason": "migrations pending: " + ", ".join(waiting),
                       "fix": "governance db migrate"}
    return True, {"status": "ready", "engine": "postgresql", "version": found["version"]}


def named(caller: Caller, headers: dict[bytes, bytes]) -> Caller:
    """The caller, with the project its request names in the ``X-Governance-Project`` header
    (a project id, else 400)."""
    raw = headers.get(PROJECT_HEADER)
    if raw is None:
        return caller
    value = raw.decode("latin-1").strip()
    if not PROJECT_ID.fullmatch(value):
        raise Refused(400, f"X-Governance-Project is {value[:120]!r}, not a project id "
                           "(letters, digits, '.', '_', '-'; at most 100)")
    return replace(caller, named=value)


class App:
    """The ASGI application of one project's server."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.started = time.time()
        self.service = Service(settings.project, RateLimiter(settings.rate, settings.burst))
        # with a team database, the tokens looked up are kept until one changes (token_watch)
        self.watch = TokenWatch(self.service.database) if self.service.database else None
        self.verifier = Verifier(tokens_for(settings.project, self.service.database),
                                 settings.token_cache, self.watch)
        self._project_id: str | None = None
        self.workers = Workers(settings.project, settings.workers) if settings.workers else None
        self.cstp_worker = ThreadPoolExecutor(CSTP_WORKERS, thread_name_prefix="governance-cstp")
        self.cstp_quick = ThreadPoolExecutor(QUICK_WORKERS,
                                             thread_name_prefix="governance-cstp-quick")
        self._openapi: bytes | None = None
        self.version = version()
        # --ship-ledger: the served project's ledger recorded in the team database as it grows
        self.relay = Relay(settings.project) \
            if settings.ship_ledger and self.service.database else None

    # -- ASGI ----------------------------------------------------------------------------------
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        try:
            status, body, headers = await self._handle(scope, receive)
        except Refused as exc:
            status, headers = exc.status, exc.headers
            body = json.dumps({"error": str(exc)}).encode()
        except Exception as exc:  # a bug of ours: said, logged, never a dropped connection
            log = chain.log_error(governance_dir(self.settings.project),
                                  f"server: {type(exc).__name__}: {exc}")
            status, headers = 500, []
            body = json.dumps({"error": "internal error", "log": log}).encode()
        await self._send(send, status, body, headers)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                if self.workers is not None:
                    self.workers.start()
                if self.relay is not None:
                    self.relay.start()
                if self.watch is not None:
                    self.watch.start()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self.watch is not None:
                    self.watch.stop(wait=False)
                if self.workers is not None:    # calls under way finish and are recorded
                    await self.workers.close()
                self.cstp_worker.shutdown(wait=True)
                self.cstp_quick.shutdown(wait=True)
                self.service.close()
                if self.relay is not None:      # what the last calls appended, recorded
                    await asyncio.get_running_loop().run_in_executor(None, self.relay.stop)
                await send({"type": "lifespan.shutdown.complete"})
                return

    @staticmethod
    async def _send(send: Send, status: int, body: bytes,
                    headers: list[tuple[bytes, bytes]]) -> None:
        head = [(b"content-length", str(len(body)).encode()),
                (b"cache-control", b"no-store"), *headers]
        if body and not any(name == b"content-type" for name, _value in headers):
            head.append((b"content-type", b"application/json"))
        await send({"type": "http.response.start", "status": status, "headers": head})
        await send({"type": "http.response.body", "body": body})

    # -- routing -------------------------------------------------------------------------------
    async def _handle(self, scope: Scope, receive: Receive
                      ) -> tuple[int, bytes, list[tuple[bytes, bytes]]]:
        headers = {k.lower(): v for k, v in scope.get("headers", [])}
        if self.settings.check_host:
            host = host_name(headers.get(b"host", b"").decode("latin-1"))
            if host not in self.settings.hosts:
                raise Refused(403, "this server answers only to a loopback host name")
        path, method = scope.get("path", ""), scope.get("method", "")
        if path == "/healthz":
            if method not in ("GET", "HEAD"):
                raise Refused(405, "use GET", [(b"allow", b"GET, HEAD")])
            return 200, json.dumps({"status": "ok", "service": "claude-governance",
                                    "version": self.version,
                                    "uptime_s": round(time.time() - self.started, 1)}).encode(), []
        if path == "/readyz":
            if method not in ("GET", "HEAD"):
                raise Refused(405, "use GET", [(b"allow", b"GET, HEAD")])
            ready, found = await asyncio.get_running_loop().run_in_executor(
                None, readiness, self.settings.project, self.service.database)
            return (200 if ready else 503), json.dumps(found).encode(), []
        if path == "/org/bundle" and method in ("GET", "HEAD"):   # no token: signed, not secret
            return await self._org_bundle(method, headers, receive, None)
        given = credential.bearer(headers.get(b"authorization"))
        caller = Caller(credential_key(given, scope.get("client"))) \
            if credential.matches(given, self.settings.token) else await self._minted(given)
        if caller.role != "admin" and path != "/cstp" and path != "/openapi.json":
            raise Refused(403, f"{path} takes the project's token or an admin token; "
                               f"{caller.agent}'s token has the role {caller.role!r}")
        if path == "/openapi.json":
            if method != "GET":
                raise Refused(405, "use GET", [(b"allow", b"GET")])
            return 200, self._openapi_document(), []
        if path == "/cstp":
            return await self._cstp(method, headers, receive, named(caller, headers))
        if path.startswith("/hooks/"):
            return await self._hook(path[len("/hooks/"):], method, scope, headers, receive)
        if path == "/report":     # the live report page (governance.server.report_page)
            from governance.server.report_page import answer as report_answer

            return await asyncio.get_running_loop().run_in_executor(
                None, report_answer, self.settings.project, method, scope.get("query_string", b""),
                caller.project)
        if path in ("/ledger/ship", "/ledger/head"):   # the central copy (governance.server.audit)
            from governance.server import audit

            body = await self._body(headers, receive, audit.MAX_BODY) if method == "POST" else b""
            return await asyncio.get_running_loop().run_in_executor(
                None, audit.answer, self.settings.project, method, path,
                scope.get("query_string", b""), body, caller.project)
        if path == "/org/bundle":   # publishing it (governance.server.org_bundle), admin only
            return await self._org_bundle(method, headers, receive, caller)
        raise Refused(404, "no such endpoint; see /openapi.json")

    async def _org_bundle(self, method: str, headers: dict[bytes, bytes], receive: Receive,
                          caller: Caller | None) -> tuple[int, bytes, list[tuple[bytes, bytes]]]:
        from governance.server import org_bundle

        body = await self._body(headers, receive, org_bundle.MAX_BODY) if method == "PUT" else b""
        return await asyncio.get_running_loop().run_in_executor(
            None, org_bundle.answer, self.settings.project, method, body, headers, caller)

    async def _minted(self, given: str | None) -> Caller:
        """The caller of a minted token (looked up by its hash off the event loop: a file or a
        database; one looked up within the verifier's few seconds is answered at once), or a 401;
        on a server of one project (no team database) a token scoped to another project: 403 (a
        team server serves every project: the token acts in its own)."""
        found: Caller | None = None
        if given:
            known, found = self.verifier.known(given)
            try:
                if not known:
                    found = await asyncio.get_running_loop().run_in_executor(
                        None, self.verifier.caller, given)
            except StorageError as exc:   # the tokens' database is down: say so, retry later
                raise Refused(503, f"the token cannot be checked now: {exc.render()}",
                              [(b"retry-after", b"5")]) from None
        if found is None:
            raise Refused(401, "unauthorized", [(b"www-authenticate", b"Bearer")])
        if found.project is not None and not self.service.database:
            if self._project_id is None:
                from governance.storage.database import project_id

                self._project_id = project_id(self.settings.project)
            if found.project != self._project_id:
                raise Refused(403, f"this token acts in project {found.project}; this server "
                                   f"serves {self._project_id}")
        return found

    def _openapi_document(self) -> bytes:
        if self._openapi is None:
            from governance.server.openapi import document

            self._openapi = json.dumps(document()).encode()
        return self._openapi

    async def _body(self, headers: dict[bytes, bytes], receive: Receive, limit: int) -> bytes:
        declared = headers.get(b"content-length")
        if declared is not None:
            try:
                size = int(declared)
            except ValueError:
                raise Refused(400, "Content-Length is not a number") from None
            if size > limit:
                raise Refused(413, f"the body is {size} bytes; at most {limit} are accepted")
        chunks: list[bytes] = []
        total = 0
        deadline = time.monotonic() + self.settings.body_timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Refused(408, "the body did not arrive in time")
            try:
                message = await asyncio.wait_for(receive(), left)
            except TimeoutError:
                raise Refused(408, "the body did not arrive in time") from None
            if message["type"] == "http.disconnect":
                raise Refused(400, "the client went away")
            chunk = message.get("body", b"")
            total += len(chunk)
            if total > limit:
                raise Refused(413, f"the body is over {limit} bytes")
            chunks.append(chunk)
            if not message.get("more_body"):
                return b"".join(chunks)

    async def _cstp(self, method: str, headers: dict[bytes, bytes], receive: Receive,
                    who: Caller) -> tuple[int, bytes, list[tuple[bytes, bytes]]]:
        if method != "POST":
            raise Refused(405, "use POST with a JSON-RPC 2.0 body", [(b"allow", b"POST")])
        body = await self._body(headers, receive, self.settings.max_body)
        loop = asyncio.get_running_loop()
        if _quick(body):    # one guardrail check: no database, under a millisecond
            answer_ = answer(self.service, body, who)
        elif self.workers is not None and self._admitted(body, who):
            try:
                answer_ = await self.workers.call(body, who)
            except WorkerStopped as exc:   # said in errors.log; another worker is started
                answer_ = protocol.answer(body, stopped(str(exc)))
        else:
            pool = self.cstp_quick if self.workers is not None else self.cstp_worker
            answer_ = await loop.run_in_executor(pool, answer, self.service, body, who)
        return (200, answer_, []) if answer_ is not None else (204, b"", [])

    def _admitted(self, body: bytes, who: Caller) -> bool:
        """Whether the rate limit lets every call of ``body`` through now (their tokens are
        spent); a body it refuses, or that does not parse, is answered in this process, which
        says why call by call."""
        if self.service.limiter.rate <= 0:
            return True
        calls = _calls(body)
        return calls > 0 and self.service.limiter.take(who.key, calls) == 0.0

    async def _hook(self, event: str, method: str, scope: Scope, headers: dict[bytes, bytes],
                    receive: Receive) -> tuple[int, bytes, list[tuple[bytes, bytes]]]:
        if event not in HOOKS:
            raise Refused(404, f"no hook for {event!r}; served: {', '.join(HOOKS)}")
        if method != "POST":
            raise Refused(405, "use POST with the hook input as JSON", [(b"allow", b"POST")])
        on_error = ""
        for pair in scope.get("query_string", b"").decode("latin-1").split("&"):
            name, _, value = pair.partition("=")
            if name == "on_error" and value in ("block", "allow"):
                on_error = value
        body = await self._body(headers, receive, self.settings.max_hook_body)
        # On the event loop itself: a decision takes well under a millisecond, and handing it to
        # a thread would cost more than that in waits for the interpreter lock.
        return 200, hook_answer(event, body, on_error), []
