"""The sandbox proxy's process (``sandbox.proxy``): found by its port, started detached, stopped.

The SessionStart hook starts the proxy through ``governance.detached`` from what ``sandbox on``
recorded in the manifest (the command line and the log). One proxy per network namespace: the
port, bound by the first, keeps a second out.
"""

from __future__ import annotations

import signal
import time

from governance import system
from governance.detached import answers, spawn
from governance.project import governance_dir
from governance.project import read_record as read_json_record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

RECORD_NAME = "proxy.json"
LOG_NAME = "proxy.log"
IDLE_ENV = "GOVERNANCE_SANDBOX_PROXY_IDLE"   # seconds without a connection before it exits


def paths(project: str) -> tuple[str, str]:
    """The record (pid, port) and the log, in the governance folder."""
    gov = governance_dir(project)
    return system.join(gov, RECORD_NAME), system.join(gov, LOG_NAME)


def running(port: int) -> bool:
    """Whether something answers on the proxy's port here: binding the port is what keeps a second
    proxy out, so the port, not a lock, tells whether one runs in this network namespace."""
    return answers(port)


def read_record(project: str) -> dict[str, Any] | None:
    return read_json_record(paths(project)[0])


def start(project: str, port: int, argv: list[str]) -> bool:
    """Start the proxy detached (``argv``: its command line, as ``sandbox on`` recorded it in the
    manifest) unless one answers on ``port``; does not wait. True when one already ran."""
    if running(port):
        return True
    spawn(argv, paths(project)[1])
    return False


def wait(project: str, port: int, seconds: float = 10.0) -> bool:
    """Whether the proxy holds the lock and listens on ``port`` within ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        record = read_record(project)
        if record and record.get("port") == port and running(port):
            return True
        time.sleep(0.05)
    return False


def stop(project: str, seconds: float = 5.0) -> str:
    record = read_record(project)
    port = record.get("port") if record else None
    if not record or not isinstance(port, int) or not running(port):
        return "the sandbox proxy is not running"
    pid = int(record["pid"])
    try:
        system.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return "the sandbox proxy is not running"
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and running(port):
        time.sleep(0.05)
    return f"stopped the sandbox proxy (pid {pid})"
