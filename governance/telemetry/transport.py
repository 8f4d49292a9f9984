"""One OTLP/HTTP request and what its answer means for the exporter.

A batch is posted once, with no retry here: the exporter decides what follows from the answer.
As the OTLP specification says, a 2xx is an acknowledgement (its ``partial_success`` may still
reject some records, which must not be sent again); 429, 502, 503 and 504, a timeout or a
connection that fails are worth retrying (with the server's ``Retry-After`` when it gives one);
any other status will fail the same way again until something is changed (an endpoint, a token).
"""

from __future__ import annotations

import gzip
import ssl
import urllib.error
import urllib.request
from dataclasses import dataclass
from email.message import Message

from governance.telemetry.settings import Signal

RETRYABLE = frozenset({429, 502, 503, 504})
TOO_LARGE = 413


@dataclass
class Answer:
    """What became of one request. ``status`` None: no HTTP answer at all."""

    status: int | None
    body: bytes = b""
    problem: str = ""
    retry_after: float | None = None

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300

    @property
    def retryable(self) -> bool:
        return self.status is None or self.status in RETRYABLE

    def describe(self, signal: Signal) -> str:
        """A sentence part: what the collector at the signal's URL did."""
        where = signal.shown()
        if self.status is None:
            return f"the collector at {where} could not be reached ({self.problem})"
        return f"the collector at {where} answered HTTP {self.status}" + (
            f" ({self.problem})" if self.problem else "")


def _context(signal: Signal) -> ssl.SSLContext | None:
    if not signal.url.startswith("https:"):
        return None
    context = ssl.create_default_context(cafile=signal.certificate)
    if signal.client_certificate:
        context.load_cert_chain(signal.client_certificate, signal.client_key)
    return context


def _retry_after(headers: Message | None) -> float | None:
    value = headers.get("Retry-After") if headers is not None else None
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None   # an HTTP date: the exporter's own backoff applies


def _problem(body: bytes, content_type: str) -> str:
    """The collector's reason, when it gave one as text (a protobuf ``Status`` is not read)."""
    if "protobuf" in content_type or not body:
        return ""
    return " ".join(body[:300].decode("utf-8", "replace").split())


def post(signal: Signal, body: bytes, user_agent: str) -> Answer:
    """POST a serialized export request to the signal's URL; never raises for the network."""
    headers = {**signal.headers, "Content-Type": "application/x-protobuf",
               "User-Agent": user_agent}
    if signal.gzip:
        body = gzip.compress(body)
        headers["Content-Encoding"] = "gzip"
    request = urllib.request.Request(signal.url, data=body, headers=headers, method="POST")
    try:
        context = _context(signal)
        with urllib.request.urlopen(request, timeout=signal.timeout_s,
                                    context=context) as response:
            return Answer(int(response.status), bytes(response.read()))
    except urllib.error.HTTPError as exc:
        try:
            text = exc.read()
        except OSError:
            text = b""
        return Answer(int(exc.code), text, _problem(text, exc.headers.get("Content-Type", "")
                                                    if exc.headers else ""),
                      _retry_after(exc.headers))
    except urllib.error.URLError as exc:
        return Answer(None, problem=str(exc.reason))
    except (OSError, ValueError) as exc:   # reset, timeout, a bad certificate file
        return Answer(None, problem=str(exc) or type(exc).__name__)
