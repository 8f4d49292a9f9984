"""A real server (``governance serve`` in its own process, uvicorn on a free loopback port) for a
temporary project; it is stopped with SIGTERM after the test."""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import REPO, install, set_state


@dataclass
class Served:
    project: Path
    process: subprocess.Popen[bytes]
    port: int
    token: str

    def request(self, method: str, path: str, body: bytes | None = None,
                headers: dict[str, str] | None = None, token: str | None = "default"
                ) -> tuple[int, dict[str, str], bytes]:
        sent = {"Content-Type": "application/json", **(headers or {})}
        if token == "default":
            token = self.token
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.request(method, path, body, sent)
            response = conn.getresponse()
            return (response.status, {k.lower(): v for k, v in response.getheaders()},
                    response.read())
        finally:
            conn.close()

    def rpc(self, payload: Any, **kwargs: Any) -> Any:
        status, _, body = self.request("POST", "/cstp", json.dumps(payload).encode(), **kwargs)
        assert status in (200, 204), (status, body)
        return json.loads(body) if body else None

    def hook(self, event: str, payload: dict[str, Any], query: str = "") -> tuple[int, bytes]:
        status, _, body = self.request("POST", f"/hooks/{event}{query}",
                                       json.dumps(payload).encode())
        return status, body


def start_server(project: Path, *extra: str) -> Served:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen(
        [sys.executable, "-m", "governance.commands", "serve", "--project", str(project),
         "--port", "0", *extra], cwd=str(REPO), env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    record = project / ".claude" / "governance" / "server.json"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the server stopped: {process.stderr.read().decode()[-3000:]}"
                                 if process.stderr else "the server stopped")
        if record.exists():
            found = json.loads(record.read_text())
            if found.get("pid") == process.pid:
                token = (project / ".claude" / "governance" / "server.token").read_text().strip()
                return Served(project, process, int(found["port"]), token)
        time.sleep(0.02)
    process.kill()
    raise AssertionError("the server did not start within 30 s")


def stop_server(served: Served) -> int:
    if served.process.poll() is None:
        served.process.send_signal(signal.SIGTERM)
    try:
        return served.process.wait(20)
    except subprocess.TimeoutExpired:
        served.process.kill()
        served.process.wait()
        raise AssertionError("the server did not stop on SIGTERM within 20 s") from None


@pytest.fixture
def served(project: Path) -> Iterator[Served]:
    install(project)
    set_state(project, "implementation-cycle/DO/WORK-064")
    server = start_server(project, "--rate", "5", "--burst", "5")
    try:
        yield server
    finally:
        stop_server(server)
