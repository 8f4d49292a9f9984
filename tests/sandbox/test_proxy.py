"""Governance's proxy for sandboxed traffic, run as `governance sandbox on` starts it, against a
real upstream server on loopback: each connection is decided by the state in force when it is
made, refusals say why and are in the ledger, and what is let through reaches only that host."""

from __future__ import annotations

import json
import socket
import struct
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from governance.commands.cli import main
from governance.policy import matrix as matrix_module
from governance.sandbox import control, proxy_process
from governance.sandbox.probe import Probe
from governance.sandbox.proxy import host_allowed

CAN = Probe(True, "test machine")
# PLAN blocks vcs-push and allows package-install, whose only host here is 127.0.0.1; EXPLORE
# allows every network act, so its network is open.
MATRIX = ("extends: default\nrules:\n  vcs-push:\n    EXPLORE: {action: allow}\n"
          "sandbox_network:\n  vcs-push: []\n  web-fetch: []\n  package-install: [127.0.0.1]\n")


class Upstream:
    """A TCP server on loopback that records what each connection sent and answers 'pong'."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = int(self.sock.getsockname()[1])
        self.received: list[bytes] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                try:
                    data = conn.recv(65536)
                    self.received.append(data)
                    conn.sendall(b"pong:" + data[:20])
                except OSError:
                    pass


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    server = Upstream()
    yield server
    server.sock.close()


@pytest.fixture
def proxied(project: Path) -> Iterator[tuple[Path, int]]:
    override = project / ".claude" / "governance" / "activity_matrix.yaml"
    override.parent.mkdir(parents=True)
    override.write_text(MATRIX)
    assert main(["validate", "--project", str(project)]) == 0
    assert main(["state", "set", "--project", str(project), "implementation-cycle", "PLAN"]) == 0
    notes = control.turn_on(str(project), "PLAN", matrix_module.load(str(project)), checked=CAN)
    port = int(control.load_manifest(str(project))["proxy"]["port"])
    assert any(n.startswith(f"Sandbox proxy on 127.0.0.1:{port}") for n in notes), notes
    yield project, port
    control.turn_off(str(project))
    assert not proxy_process.running(port)


def _exchange(port: int, data: bytes, then: bytes = b"") -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(data)
        answer = conn.recv(65536)
        if then and answer.startswith(b"HTTP/1.1 200"):
            conn.sendall(then)
            answer += conn.recv(65536)
        return answer


def _socks(port: int, address: bytes, target_port: int, payload: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(b"\x05\x01\x00")
        assert conn.recv(2) == b"\x05\x00"
        conn.sendall(b"\x05\x01\x00" + address + struct.pack(">H", target_port))
        reply = conn.recv(10)
        if reply[1] != 0:
            return reply
        conn.sendall(payload)
        return reply + conn.recv(65536)


def _refusals(project: Path) -> list[dict[str, object]]:
    lines = (project / ".claude" / "governance" / "ledger.jsonl").read_text().splitlines()
    return [r for r in map(json.loads, lines) if r.get("event") == "SandboxNetwork"]


def test_a_host_of_an_allowed_act_is_tunnelled_and_any_other_is_refused_with_the_reason(
        proxied: tuple[Path, int], upstream: Upstream) -> None:
    project, port = proxied
    ok = _exchange(port, f"CONNECT 127.0.0.1:{upstream.port} HTTP/1.1\r\n\r\n".encode(), b"ping")
    assert ok.startswith(b"HTTP/1.1 200") and ok.endswith(b"pong:ping")
    refused = _exchange(port, f"CONNECT localhost:{upstream.port} HTTP/1.1\r\n\r\n".encode())
    assert refused.startswith(b"HTTP/1.1 403")
    text = refused.decode()
    assert f"localhost:{upstream.port} is not reachable" in text and "PLAN" in text
    assert "vcs-push" in text and "open only to 127.0.0.1 (for package-install)" in text
    assert upstream.received == [b"ping"]
    (record,) = _refusals(project)
    assert record["host"] == "localhost" and record["action"] == "block" and record["via"] == "http"


def test_a_plain_http_request_goes_to_its_own_host_only(proxied: tuple[Path, int],
                                                        upstream: Upstream) -> None:
    _project, port = proxied
    request = (f"GET http://127.0.0.1:{upstream.port}/simple/pip/ HTTP/1.1\r\n"
               f"Host: 127.0.0.1:{upstream.port}\r\n\r\n").encode()
    assert _exchange(port, request).startswith(b"pong:GET http://127.0.")
    assert upstream.received[0].startswith(b"GET http://127.0.0.1:")
    denied = _exchange(port, f"GET http://localhost:{upstream.port}/ HTTP/1.1\r\n\r\n".encode())
    assert denied.startswith(b"HTTP/1.1 403") and len(upstream.received) == 1
    for garbage in (b"\x16\x03\x01hello\r\n\r\n", b"GET /relative HTTP/1.1\r\n\r\n"):
        assert _exchange(port, garbage).startswith(b"HTTP/1.1 400")


def test_socks5_is_decided_the_same_way(proxied: tuple[Path, int], upstream: Upstream) -> None:
    project, port = proxied
    allowed = _socks(port, b"\x01" + socket.inet_aton("127.0.0.1"), upstream.port, b"hi")
    assert allowed[:2] == b"\x05\x00" and allowed.endswith(b"pong:hi")
    name = b"localhost"
    refused = _socks(port, b"\x03" + bytes([len(name)]) + name, upstream.port, b"hi")
    assert refused[:2] == b"\x05\x02"          # not allowed by ruleset
    assert _refusals(project)[-1]["via"] == "socks5"


def test_a_state_change_applies_to_the_next_connection(proxied: tuple[Path, int],
                                                       upstream: Upstream) -> None:
    project, port = proxied
    connect = f"CONNECT localhost:{upstream.port} HTTP/1.1\r\n\r\n".encode()
    assert _exchange(port, connect).startswith(b"HTTP/1.1 403")
    assert main(["state", "set", "--project", str(project), "investigation-cycle",
                 "EXPLORE"]) == 0
    assert _exchange(port, connect, b"x").startswith(b"HTTP/1.1 200")   # no restart
    assert main(["state", "set", "--project", str(project), "implementation-cycle", "DONE"]) == 0
    ip = f"CONNECT 127.0.0.1:{upstream.port} HTTP/1.1\r\n\r\n".encode()
    assert _exchange(port, ip).startswith(b"HTTP/1.1 403")   # DONE blocks package-install


def test_an_override_rewritten_behind_governances_back_changes_nothing(
        proxied: tuple[Path, int], upstream: Upstream) -> None:
    """The proxy decides by the accepted matrix, as the hooks do: a rewritten override that would
    open every host (or cannot be read) is not in force until the user accepts it."""
    project, port = proxied
    override = project / ".claude" / "governance" / "activity_matrix.yaml"
    connect = f"CONNECT localhost:{upstream.port} HTTP/1.1\r\n\r\n".encode()
    for text in ("extends: default\nsandbox_network: {}\nrules:\n  vcs-push:\n"
                 "    _all_states: {action: allow}\n", "rules: [\n"):
        override.write_text(text)
        assert _exchange(port, connect).startswith(b"HTTP/1.1 403")
    assert upstream.received == []


def test_a_session_start_starts_the_proxy_when_none_answers(project: Path) -> None:
    from governance.session.briefing import _keep_proxy

    control.turn_on(str(project), "DO", matrix_module.load(str(project)), checked=CAN)
    port = int(control.load_manifest(str(project))["proxy"]["port"])
    assert "stopped" in proxy_process.stop(str(project))
    assert not proxy_process.running(port)
    assert _keep_proxy(str(project)) == []
    assert proxy_process.wait(str(project), port)
    control.turn_off(str(project))


@pytest.mark.parametrize(("host", "patterns", "allowed"), [
    ("pypi.org", ["pypi.org"], True), ("PyPI.org.", ["pypi.org"], True),
    ("files.pythonhosted.org", ["*.pythonhosted.org"], True),
    ("pythonhosted.org", ["*.pythonhosted.org"], False),
    ("evilpythonhosted.org", ["*.pythonhosted.org"], False),
    ("pypi.org.evil.example", ["pypi.org"], False), ("151.101.0.223", ["pypi.org"], False),
    ("anything", [], False)])
def test_hosts_are_compared_by_name(host: str, patterns: list[str], allowed: bool) -> None:
    assert host_allowed(host, patterns) is allowed


def test_the_proxy_stops_once_the_sandbox_is_no_longer_governed(project: Path) -> None:
    import time

    from governance.project import sandbox_manifest_path

    control.turn_on(str(project), "DO", matrix_module.load(str(project)), checked=CAN)
    port = int(control.load_manifest(str(project))["proxy"]["port"])
    assert proxy_process.running(port)
    Path(sandbox_manifest_path(str(project))).unlink()    # the project's governance removed
    deadline = time.monotonic() + 10
    while proxy_process.running(port) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not proxy_process.running(port)
