"""The server's background exporter: while ``governance serve`` runs, a thread follows the ledger
and sends its records, when the ``otel`` extra is installed and the environment names an OTLP
endpoint (``OTEL_EXPORTER_OTLP_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_LOGS_ENDPOINT``).

It never stops the server: a missing extra or a wrong variable is said once and the server runs
without it; a collector that is down is retried with backoff (``Exporter.follow``). The thread
reads the ledger's files only; the hooks the server answers never wait for it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping

from governance.errors import GovernanceError

STOP_WAIT_S = 5.0


class Background:
    """A running background exporter."""

    def __init__(self, thread: threading.Thread, stop_event: threading.Event) -> None:
        self.thread = thread
        self.stop_event = stop_event

    def stop(self, timeout: float = STOP_WAIT_S) -> None:
        """Ask the thread to stop and wait for it (at most ``timeout``: a request under way ends
        with its own timeout; the thread is a daemon and cannot keep the process alive)."""
        self.stop_event.set()
        self.thread.join(timeout)


def start(project: str, say: Callable[[str], None],
          env: Mapping[str, str] | None = None) -> Background | None:
    """Start the background exporter of ``project``'s ledger, or return None (saying why when
    it was asked for but cannot run)."""
    from governance.telemetry import settings

    environ = os.environ if env is None else env
    if not settings.configured(environ):
        return None
    try:
        from governance.telemetry.exporter import Exporter

        exporter = Exporter(project, settings.load(environ),
                            say=lambda text: say(f"OpenTelemetry export: {text}"))
    except GovernanceError as exc:
        say(f"OpenTelemetry export is off: {exc.render()}")
        return None
    stop_event = threading.Event()
    thread = threading.Thread(target=exporter.follow, args=(stop_event,),
                              kwargs={"progress": False}, name="governance-otlp-export",
                              daemon=True)
    thread.start()
    say(f"OpenTelemetry export: sending the ledger to {exporter.settings.logs.shown()}")
    return Background(thread, stop_event)
