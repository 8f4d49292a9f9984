"""The open-loop load's HTTP client against a real HTTP/1.1 server on loopback: kept-alive
connections, answers read by their length, a closed connection opened again once."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest

from governance.bench import openloop


class _Echo(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    connections: ClassVar[set[int]] = set()

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        _Echo.connections.add(id(self.connection))
        answer = b'{"echo": "' + body + b'", "x": "' + self.headers.get("X-Test", "").encode() \
            + b'"}'
        self.send_response(404 if self.path == "/missing" else 200)
        self.send_header("Content-Length", str(len(answer)))
        if self.path == "/close":
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args: object) -> None:
        return None


@pytest.fixture
def port() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def test_answers_are_read_by_length_on_one_kept_connection(port: int) -> None:
    _Echo.connections.clear()
    conn = openloop.Connection(port)
    try:
        for k in range(3):
            status, body = conn.exchange(("/x", f"call{k}".encode(), {"X-Test": "yes"}))
            assert (status, body) == (200, f'{{"echo": "call{k}", "x": "yes"}}'.encode())
        assert conn.exchange(("/missing", b"", {}))[0] == 404
    finally:
        conn.close()
    assert len(_Echo.connections) == 1


def test_a_load_counts_every_answer_and_reopens_a_closed_connection(port: int) -> None:
    found = openloop.run(port, lambda i: ("/close" if i % 3 == 0 else "/x", b"b", {}), 40, 0.5,
                         lambda status, body: None if status == 200 and b"echo" in body
                         else f"HTTP {status}", clients=2)
    assert found["requests"] == 20 and found["errors"] == 0, found
    assert 0 < found["p50_ms"] <= found["p99_ms"]
    missing = openloop.sequential(port, lambda i: ("/missing", b"", {}), 3,
                                  lambda status, body: None if status == 200 else f"HTTP {status}")
    assert missing["errors"] == 3 and missing["error_kinds"] == {"HTTP 404": 3}


def test_a_server_that_is_gone_is_an_error_not_a_hang() -> None:
    import socket

    with socket.socket() as spare:
        spare.bind(("127.0.0.1", 0))
        free = spare.getsockname()[1]
    found = openloop.sequential(free, lambda i: ("/x", b"", {}), 2, lambda status, body: None)
    assert found["errors"] == 2 and set(found["error_kinds"]) == {"ConnectionRefusedError"}
