"""An open-loop HTTP load: requests sent on a fixed schedule, whatever the answers before them.

Request ``i`` is due at ``start + i / rate``; it is handed to a pool of client threads (each with
its own kept-alive connection) at that moment, and its latency is measured from when it was due,
not from when a thread got to send it: a slow answer delays the requests queued behind it, and
that delay is counted (no coordinated omission). It ends when the answer's last byte is read;
checking the answer (parsing its JSON) comes after.

The client speaks HTTP/1.1 on a plain socket (:class:`Connection`): a request is one ``sendall``
and an answer is read by its ``Content-Length``. ``http.client`` parses every answer's headers
with the ``email`` package; on the 2-core development machine it added about 0.3 ms to a call
that the server answers in 0.3 ms (docs/team.md).
"""

from __future__ import annotations

import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

Request = tuple[str, bytes, dict[str, str]]     # path, body, headers


def percentile(ordered: Sequence[float], q: float) -> float:
    """The ``q`` quantile (nearest rank) of sorted ``ordered``, in ms rounded to 0.01."""
    if not ordered:
        return 0.0
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)


def run(port: int, requests: Callable[[int], Request], rate: float, seconds: float,
        answered: Callable[[int, bytes], str | None], clients: int = 32) -> dict[str, Any]:
    """Send ``rate * seconds`` requests (``requests(i)`` the i-th) to 127.0.0.1:``port`` on
    schedule; ``answered(status, body)`` says what is wrong with an answer (None: nothing).
    Latency percentiles in ms, from the scheduled time; errors by kind."""
    local = threading.local()
    latencies: list[float] = []
    errors: Counter[str] = Counter()
    lock = threading.Lock()

    def send(due: float, request: Request) -> None:
        found = _exchange(local, port, request)
        spent = (time.perf_counter() - due) * 1000     # the answer is read: checked after
        problem = found if isinstance(found, str) else answered(*found)
        with lock:
            latencies.append(spent)
            if problem:
                errors[problem] += 1

    total = max(1, int(rate * seconds))
    with ThreadPoolExecutor(clients, thread_name_prefix="bench-client") as pool:
        start = time.perf_counter() + 0.05
        for index in range(total):
            due = start + index / rate
            request = requests(index)
            pause = due - time.perf_counter()
            if pause > 0:
                time.sleep(pause)
            pool.submit(send, due, request)
        sent_in = time.perf_counter() - start
    latencies.sort()
    return {"requests": total, "per_s": round(total / max(sent_in, 1e-9), 1),
            "errors": sum(errors.values()), "error_kinds": dict(errors.most_common(5)),
            "p50_ms": percentile(latencies, 0.50), "p95_ms": percentile(latencies, 0.95),
            "p99_ms": percentile(latencies, 0.99),
            "max_ms": round(latencies[-1], 2) if latencies else 0.0}


class Connection:
    """One kept-alive HTTP/1.1 connection to 127.0.0.1:``port``."""

    def __init__(self, port: int, timeout: float = 30.0) -> None:
        self.port = port
        self.socket = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.pending = b""

    def exchange(self, request: Request) -> tuple[int, bytes]:
        """POST ``request``; its answer's status and body. Raises OSError when the connection
        fails or the answer is not HTTP/1.1 with a length."""
        path, body, headers = request
        head = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        self.socket.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
                            f"Content-Length: {len(body)}\r\n{head}\r\n".encode("latin-1")
                            + body)
        while b"\r\n\r\n" not in self.pending:
            self._more()
        top, _, self.pending = self.pending.partition(b"\r\n\r\n")
        lines = top.split(b"\r\n")
        parts = lines[0].split(b" ", 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
            raise OSError(f"not an HTTP answer: {lines[0][:80]!r}")
        fields = {name.strip().lower(): value.strip() for name, _, value in
                  (line.partition(b":") for line in lines[1:])}
        length = fields.get(b"content-length")
        if length is None or not length.isdigit():
            raise OSError("an answer without Content-Length")
        while len(self.pending) < int(length):
            self._more()
        answer, self.pending = self.pending[:int(length)], self.pending[int(length):]
        if fields.get(b"connection", b"").lower() == b"close":
            self.close()
        return int(parts[1]), answer

    def _more(self) -> None:
        chunk = self.socket.recv(65536)
        if not chunk:
            raise ConnectionResetError("the server closed the connection")
        self.pending += chunk

    def close(self) -> None:
        self.socket.close()


def _exchange(local: threading.local, port: int, request: Request
              ) -> tuple[int, bytes] | str:
    """One request on this thread's kept-alive connection: the answer's status and body, or what
    went wrong. A kept connection the server closed while idle is opened again once, as HTTP
    clients do."""
    for attempt in (1, 2):
        conn: Connection | None = getattr(local, "conn", None)
        fresh = conn is None
        try:
            if conn is None:
                conn = local.conn = Connection(port)
            found = conn.exchange(request)
            if conn.socket.fileno() < 0:
                local.conn = None
            return found
        except OSError as exc:
            if conn is not None:
                conn.close()
            local.conn = None
            if fresh or attempt == 2:
                return type(exc).__name__
    return "unreachable"


def sequential(port: int, requests: Callable[[int], Request], count: int,
               answered: Callable[[int, bytes], str | None]) -> dict[str, Any]:
    """``count`` requests from one client, each sent when the one before was answered: the time
    a call takes, without queueing."""
    local = threading.local()
    latencies: list[float] = []
    errors: Counter[str] = Counter()
    began = time.perf_counter()
    for index in range(count):
        request = requests(index)
        start = time.perf_counter()
        found = _exchange(local, port, request)
        latencies.append((time.perf_counter() - start) * 1000)
        problem = found if isinstance(found, str) else answered(*found)
        if problem:
            errors[problem] += 1
    spent = time.perf_counter() - began
    latencies.sort()
    return {"requests": count, "per_s": round(count / max(spent, 1e-9), 1),
            "errors": sum(errors.values()), "error_kinds": dict(errors.most_common(5)),
            "p50_ms": percentile(latencies, 0.50), "p95_ms": percentile(latencies, 0.95),
            "p99_ms": percentile(latencies, 0.99), "max_ms": round(latencies[-1], 2)}


def rpc_problem(status: int, body: bytes) -> str | None:
    """What is wrong with a JSON-RPC answer over HTTP: its status, or its error code."""
    if status != 200:
        return f"HTTP {status}"
    import json

    try:
        found = json.loads(body)
    except ValueError:
        return "not JSON"
    if isinstance(found, dict) and "error" in found:
        error = found["error"]
        return f"JSON-RPC {error.get('code') if isinstance(error, dict) else error}"
    return None
