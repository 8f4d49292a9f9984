"""Running the server: one per project, found through ``.claude/governance/server.json``.

``serve`` binds the socket itself (so the record names the real port, even for ``--port 0``),
holds ``server.lock`` while it runs (a second server for the same project is refused), writes the
record, and runs uvicorn on the socket until SIGTERM or SIGINT. Then it drains: it stops accepting,
lets the calls under way finish (at most :data:`DRAIN` seconds, then they are cancelled), stops the
worker processes once their calls are answered and writes the decisions still queued, and exits 0.
``status`` and ``stop`` read the record; ``stop`` sends SIGTERM and waits.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import socket
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from governance import system
from governance.errors import GovernanceError
from governance.project import SERVER_RECORD, ensure_dir, governance_dir, replace_file
from governance.project import read_record as read_json_record

LOCK_NAME = "server.lock"
DEFAULT_PORT = 8765
DRAIN = 10    # seconds the calls under way at SIGTERM have to finish


class ServerError(GovernanceError):
    """The server cannot start, or cannot be reached or stopped."""


@dataclass
class Listen:
    """Where to listen: a TCP host and port, or a unix socket path."""

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    socket_path: str | None = None

    def url(self, port: int | None = None) -> str:
        if self.socket_path:
            return f"unix:{self.socket_path}"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port if port is None else port}"


def record_path(project: str) -> str:
    return os.path.join(governance_dir(project), SERVER_RECORD)


def read_record(project: str) -> dict[str, Any] | None:
    return read_json_record(record_path(project))


def bind(listen: Listen) -> socket.socket:
    """The listening socket (loopback TCP by default; a unix socket is made 0600)."""
    if listen.socket_path:
        path = listen.socket_path
        if os.path.exists(path):
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                probe.connect(path)
            except OSError:
                os.unlink(path)   # left by a server that is gone
            else:
                probe.close()
                raise ServerError(f"something already listens on the socket {path}",
                                  fix="stop it, or pass another --socket")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            sock.bind(path)
        finally:
            os.umask(old)
    else:
        family = socket.AF_INET6 if ":" in listen.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((listen.host, listen.port))
        except OSError as exc:
            sock.close()
            raise ServerError(f"cannot listen on {listen.url()} ({exc.strerror})",
                              fix="pick another --port, or stop what uses it") from None
    sock.listen(512)
    sock.set_inheritable(True)
    return sock


def serve(project: str, listen: Listen, *, rate: float = 20.0, burst: int = 60,
          body_timeout: float = 10.0, ship_ledger: bool = False, announce: Any = print) -> int:
    """Run the server in this process until it is told to stop; returns the exit code."""
    import uvicorn

    from governance.server import credential
    from governance.server.app import App, Settings
    from governance.server.connection import Connection

    gov = governance_dir(project)
    ensure_dir(gov)
    lock = os.open(os.path.join(gov, LOCK_NAME), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(lock)
        running = read_record(project) or {}
        raise ServerError(f"a server for this project already runs (pid {running.get('pid')}, "
                          f"{running.get('url')})", fix="governance serve --stop") from None
    try:
        token = credential.load_or_create(project)
        sock = bind(listen)
        port = None if listen.socket_path else int(sock.getsockname()[1])
        url = listen.url(port)
        os.environ["CLAUDE_PROJECT_DIR"] = project   # what Claude Code gives command hooks
        settings = Settings(project=project, token=token, host=listen.host,
                            check_host=not listen.socket_path, rate=rate, burst=burst,
                            body_timeout=body_timeout, ship_ledger=ship_ledger)
        app = App(settings)
        config = uvicorn.Config(app, lifespan="on", log_level="warning", access_log=False,
                                server_header=False, date_header=False,
                                timeout_keep_alive=5, timeout_graceful_shutdown=DRAIN,
                                limit_concurrency=512, http=Connection, loop="uvloop")
        server = uvicorn.Server(config)
        # uvicorn finishes the calls under way on SIGTERM/SIGINT, then raises the signal again
        # with the handlers it found: these make that a normal return, so the record is removed.
        # A signal that comes before uvicorn listens for it (as soon as the record says the
        # server is up) asks it to stop once started, rather than being lost.
        for number in (signal.SIGTERM, signal.SIGINT):
            signal.signal(number, lambda *_: setattr(server, "should_exit", True))
        record = {"pid": os.getpid(), "url": url, "host": listen.host, "port": port,
                  "socket": listen.socket_path, "project": project,
                  "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                  "version": app.version}
        replace_file(record_path(project), (json.dumps(record) + "\n").encode(), mode=0o600)
        announce(f"governance server for {project} at {url} (pid {os.getpid()}); "
                 f"token in {credential.token_path(project)}")
        from governance.telemetry import background  # OTLP export, when configured

        exporter = background.start(project, announce)
        try:
            server.run(sockets=[sock])
        finally:
            if exporter is not None:
                exporter.stop()
            sock.close()
            if listen.socket_path:
                try:
                    os.unlink(listen.socket_path)
                except OSError:
                    pass
            if (read_record(project) or {}).get("pid") == os.getpid():
                os.unlink(record_path(project))
    finally:
        os.close(lock)
    return 0


def request(url: str, path: str, *, token: str | None = None, body: bytes | None = None,
            timeout: float = 2.0) -> tuple[int, bytes]:
    """(status, body) of one request to a running server (TCP or ``unix:PATH``)."""
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if url.startswith("unix:"):
        import http.client

        class UnixConnection(http.client.HTTPConnection):
            def connect(self) -> None:
                self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.sock.settimeout(timeout)
                self.sock.connect(url[len("unix:"):])

        conn = UnixConnection("localhost", timeout=timeout)
        try:
            conn.request("POST" if body is not None else "GET", path, body, headers)
            response = conn.getresponse()
            return response.status, response.read()
        finally:
            conn.close()
    req = urllib.request.Request(url + path, data=body, headers=headers,
                                 method="POST" if body is not None else "GET")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as response:
            return int(response.status), bytes(response.read())
    except urllib.error.HTTPError as exc:
        return int(exc.code), bytes(exc.read())


def status(project: str) -> dict[str, Any]:
    """What is known of the project's server: ``running`` (the process answers ``/healthz``),
    its record, and why not when it is not running."""
    record = read_record(project)
    if record is None:
        return {"running": False, "why": "no server has been started for this project"}
    if not system.alive(record.get("pid")):
        return {"running": False, "why": f"the server (pid {record.get('pid')}) is gone",
                **record}
    try:
        code, body = request(str(record["url"]), "/healthz")
        health = json.loads(body) if code == 200 else {}
    except (OSError, ValueError) as exc:
        return {"running": False, "why": f"the server does not answer ({exc})", **record}
    if health.get("status") != "ok":
        return {"running": False, "why": f"/healthz answered {code}", **record}
    return {"running": True, **record, "uptime_s": health.get("uptime_s")}


def stop(project: str, timeout: float = 15.0) -> str:
    """Stop the project's server (SIGTERM, then wait for it to finish its calls)."""
    record = read_record(project)
    pid = (record or {}).get("pid")
    if not isinstance(pid, int) or not system.alive(pid):
        return "No server is running for this project."
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:   # the server removes its record as it ends
        if not system.alive(pid) or (read_record(project) or {}).get("pid") != pid:
            return f"Stopped the server (pid {pid})."
        time.sleep(0.05)
    raise ServerError(f"the server (pid {pid}) did not stop within {timeout:.0f} s",
                      fix=f"kill {pid}")
