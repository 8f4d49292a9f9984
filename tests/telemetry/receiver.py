"""A loopback OTLP/HTTP receiver for the tests: ``http.server`` on 127.0.0.1, one request at a time,
decoding what it gets with ``opentelemetry-proto`` as a collector would.

It can stop after a number of log requests (its listening socket closed, as a collector that
dies), take a request and drop the connection without answering (a collector that stored a batch
but died before acknowledging it), or answer a given status.
"""

from __future__ import annotations

import gzip
import http.server
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)


def value(any_value: Any) -> Any:
    """A protobuf ``AnyValue`` as Python."""
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return [value(v) for v in any_value.array_value.values]
    return getattr(any_value, kind) if kind else None


def attributes(items: Any) -> dict[str, Any]:
    return {kv.key: value(kv.value) for kv in items}


@dataclass
class Got:
    """Everything received, across restarts of the receiver."""

    logs: list[Any] = field(default_factory=list)            # LogRecord messages, in order
    log_requests: list[ExportLogsServiceRequest] = field(default_factory=list)
    metrics: list[ExportMetricsServiceRequest] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    raw: list[bytes] = field(default_factory=list)           # every request body, decoded

    def ids(self) -> list[str]:
        return [attributes(log.attributes)["governance.record.id"] for log in self.logs]

    def metric(self, name: str) -> Any:
        """The last point list of metric ``name``."""
        for request in reversed(self.metrics):
            for resource in request.resource_metrics:
                for scope in resource.scope_metrics:
                    for metric in scope.metrics:
                        if metric.name == name:
                            return metric
        raise AssertionError(f"no metric {name} received")


class Receiver:
    """``Receiver(got)``; ``start()`` binds (``port`` 0: a free one), ``stop()`` closes."""

    def __init__(self, got: Got, port: int = 0, stop_after: int | None = None,
                 answer: Callable[[int], int | None] | None = None,
                 rejected: int = 0) -> None:
        self.got = got
        self.port = port
        self.stop_after = stop_after   # log requests answered before it closes its socket
        self.answer = answer           # log request number -> status (None: drop the connection)
        self.rejected = rejected       # partial_success.rejected_log_records in each answer
        self.log_requests = 0
        self.thread: threading.Thread | None = None
        self.closing = threading.Event()
        self.closed = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Receiver:
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                data = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.headers.get("Content-Encoding") == "gzip":
                    data = gzip.decompress(data)
                receiver.got.headers.append({k.lower(): v for k, v in self.headers.items()})
                receiver.got.raw.append(data)
                if self.path == "/v1/metrics":
                    receiver.got.metrics.append(ExportMetricsServiceRequest.FromString(data))
                    self._reply(200, b"")
                    return
                if self.path != "/v1/logs":
                    self._reply(404, b"not here")
                    return
                receiver.log_requests += 1
                request = ExportLogsServiceRequest.FromString(data)
                status = receiver.answer(receiver.log_requests) if receiver.answer else 200
                if status is None:           # stored, then gone before the answer
                    receiver._store(request)
                    self.close_connection = True
                    return
                if 200 <= status < 300:
                    receiver._store(request)
                    body = ExportLogsServiceResponse()
                    body.partial_success.rejected_log_records = receiver.rejected
                    self._reply(status, body.SerializeToString() if receiver.rejected else b"")
                else:
                    self._reply(status, b"try later")
                if receiver.stop_after and receiver.log_requests >= receiver.stop_after:
                    receiver.closing.set()

            def _reply(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/x-protobuf" if status < 300
                                 else "text/plain")
                self.send_header("Content-Length", str(len(body)))
                if status == 503:
                    self.send_header("Retry-After", "0")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        server = http.server.HTTPServer(("127.0.0.1", self.port), Handler)
        server.timeout = 0.02
        self.port = server.server_port

        def serve() -> None:
            try:
                while not self.closing.is_set():
                    server.handle_request()
            finally:
                server.server_close()
                self.closed.set()

        self.closing.clear()
        self.closed.clear()
        self.thread = threading.Thread(target=serve, daemon=True)
        self.thread.start()
        return self

    def _store(self, request: ExportLogsServiceRequest) -> None:
        self.got.log_requests.append(request)
        for resource in request.resource_logs:
            for scope in resource.scope_logs:
                self.got.logs.extend(scope.log_records)

    def stop(self) -> None:
        self.closing.set()
        self.closed.wait(5)
