"""The client side of a governance server: the ``--server`` address checked, the bearer token found,
one kept-alive HTTP(S) connection, and each request's status and body read back.

It knows no endpoint and no caller's wording: each command names the error class its users get and
what a failure means for them (``consequence``, like "nothing was published"), and reads the
statuses itself. It lives beside ``shipping``, its first user, because the ledger is the lowest part
that every command talking to a server may import. Not on the hot path: only the CLI imports it.
"""

from __future__ import annotations

import http.client
import json
import os
from dataclasses import dataclass
from typing import Any
from urllib.parse import SplitResult, urlsplit

from governance.errors import GovernanceError

TOKEN_ENV = "GOVERNANCE_SERVER_TOKEN"
TIMEOUT = 60.0
JSON = "application/json"
TOKEN_FIX = (f"pass --token or set {TOKEN_ENV} (the server's own: `governance serve --token` on "
             "its machine)")
REACH_FIX = "start it (`governance serve`) or check --server"


def sentence(text: str, consequence: str | None) -> str:
    """``text``, then what it means for the user when that is said."""
    return f"{text}; {consequence}" if consequence else text


def address(server: str, error: type[GovernanceError]) -> SplitResult:
    """``server`` (an http(s) URL, or ``host:port`` for http) split into its parts; ``error`` when
    it names no http(s) server."""
    parts = urlsplit(server if "://" in server else f"http://{server}")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise error(f"--server {server!r} is not an http(s) URL",
                    fix="give the server's address, like http://127.0.0.1:8765")
    return parts


def root(parts: SplitResult) -> str:
    """``scheme://host:port`` of an :func:`address`, as messages name the server."""
    return f"{parts.scheme}://{parts.netloc}"


def token(given: str | None, error: type[GovernanceError], *, consequence: str | None = None,
          fix: str = TOKEN_FIX) -> str:
    """The token given, else ``$GOVERNANCE_SERVER_TOKEN``; ``error`` when there is neither."""
    found = given or os.environ.get(TOKEN_ENV)
    if not found:
        raise error(sentence("no token for the server", consequence), fix=fix)
    return found


@dataclass(frozen=True)
class Answer:
    """A server's answer to one request: its status and its body, read whole."""

    status: int
    raw: bytes

    def document(self) -> Any:
        """The body as JSON: ``{}`` when empty, ``{"error": its first 200 bytes}`` when not JSON."""
        try:
            return json.loads(self.raw) if self.raw else {}
        except ValueError:
            return {"error": self.raw[:200].decode("utf-8", "replace")}


class Client:
    """One kept-alive connection to the server at ``parts``, each request carrying ``token``.

    A request that cannot reach the server closes the connection and raises ``error`` in one
    sentence naming ``url`` (by default the server's root), the reason and the ``consequence``.
    """

    def __init__(self, parts: SplitResult, token: str, error: type[GovernanceError], *,
                 url: str | None = None, consequence: str | None = None) -> None:
        self.url = url or root(parts)
        self.token = token
        self.error = error
        self.consequence = consequence
        kind = http.client.HTTPSConnection if parts.scheme == "https" \
            else http.client.HTTPConnection
        self.conn = kind(parts.hostname or "", parts.port, timeout=TIMEOUT)   # set: address()

    def send(self, method: str, path: str, data: bytes | None = None, *,
             content_type: str | None = JSON) -> Answer:
        """Send one request and read its answer whole."""
        headers = {"Authorization": f"Bearer {self.token}"}
        if content_type is not None:
            headers["Content-Type"] = content_type
        try:
            self.conn.request(method, path, data, headers)
            response = self.conn.getresponse()
            return Answer(response.status, response.read())
        except (OSError, http.client.HTTPException) as exc:
            self.conn.close()
            reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
            raise self.error(sentence(f"cannot reach the server {self.url} ({reason})",
                                      self.consequence), fix=REACH_FIX) from None

    def close(self) -> None:
        self.conn.close()
