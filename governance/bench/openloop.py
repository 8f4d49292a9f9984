"""An open-loop HTTP load: requests sent on a fixed schedule, whatever the answers before them.

Request ``i`` is due at ``start + i / rate``; it is handed to a pool of client threads (each with
its own kept-alive connection) at that moment, and its latency is measured from when it was due,
not from when a thread got to send it: a slow answer delays the requests queued behind it, and
that delay is counted (no coordinated omission).
"""

from __future__ import annotations

import http.client
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
        problem = _call(local, port, request, answered)
        spent = (time.perf_counter() - due) * 1000
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


def _call(local: threading.local, port: int, request: Request,
          answered: Callable[[int, bytes], str | None]) -> str | None:
    """One request on this thread's kept-alive connection; what went wrong, or None. A kept
    connection the server closed while idle is opened again once, as HTTP clients do."""
    path, body, headers = request
    for attempt in (1, 2):
        conn = getattr(local, "conn", None)
        fresh = conn is None
        if conn is None:
            conn = local.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        try:
            conn.request("POST", path, body, headers)
            response = conn.getresponse()
            return answered(response.status, response.read())
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            local.conn = None
            if fresh or attempt == 2:
                return type(exc).__name__
    return None


def sequential(port: int, requests: Callable[[int], Request], count: int,
               answered: Callable[[int, bytes], str | None]) -> dict[str, Any]:
    """``count`` requests from one client, each sent when the one before was answered: the time
    a call takes, without queueing."""
    local = threading.local()
    latencies: list[float] = []
    errors: Counter[str] = Counter()
    began = time.perf_counter()
    for index in range(count):
        start = time.perf_counter()
        problem = _call(local, port, requests(index), answered)
        latencies.append((time.perf_counter() - start) * 1000)
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
