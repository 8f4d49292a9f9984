"""The HTTP connection: uvicorn's httptools protocol, plus a deadline for a request's headers.

uvicorn times out an idle keep-alive connection but not one that sends its headers slowly (or
never finishes them), so a client could hold connections open forever. Here every request's
headers must be complete within :data:`HEADER_TIMEOUT` seconds of its first byte (of the
connection, for the first request); otherwise the connection is closed.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

HEADER_TIMEOUT = 10.0


class Connection(HttpToolsProtocol):
    """One client connection, with the header deadline."""

    _header_timer: asyncio.TimerHandle | None = None

    def _arm(self) -> None:
        if self._header_timer is None:
            self._header_timer = self.loop.call_later(HEADER_TIMEOUT, self._headers_late)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_late(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            self.transport.close()

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._arm()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._arm()

    def on_headers_complete(self) -> None:
        self._disarm()
        super().on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)
