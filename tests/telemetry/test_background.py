"""The server's background exporter: ``governance serve`` with an OTLP endpoint in its environment
sends the ledger, records the server itself writes included; without one it starts nothing."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.proto", reason="the otel extra is not installed: "
                                                  "pip install 'claude-governance[otel]'")

from governance.telemetry import background
from tests.helpers import install, recorded, set_state
from tests.server.conftest import start_server, stop_server
from tests.telemetry.receiver import Got, Receiver, attributes


def wait_for(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "not within the time"
        time.sleep(0.05)


def test_nothing_starts_without_an_endpoint(project: Path) -> None:
    said: list[str] = []
    assert background.start(str(project), said.append, {}) is None
    assert background.start(str(project), said.append,
                            {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318",
                             "OTEL_LOGS_EXPORTER": "none"}) is None
    assert said == []


def test_a_wrong_variable_is_said_and_the_server_goes_on_without_export(project: Path) -> None:
    said: list[str] = []
    assert background.start(str(project), said.append,
                            {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318",
                             "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}) is None
    assert len(said) == 1 and said[0].startswith("OpenTelemetry export is off: ")
    assert "grpc and http/json are not supported" in said[0]


def test_the_server_sends_the_ledger_as_it_grows(
        project: Path, fill: Callable[[int], list[dict[str, Any]]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    install(project)
    set_state(project, "implementation-cycle/DO/WORK-064")
    before = fill(3)
    got = Got()
    receiver = Receiver(got).start()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
    served = start_server(project)
    try:
        wait_for(lambda: len(got.logs) >= len(before))
        status, _ = served.hook("PreToolUse", recorded("PreToolUse-WebFetch.json", project))
        assert status == 200
        wait_for(lambda: any(attributes(log.attributes).get("governance.tool") == "WebFetch"
                             for log in got.logs))
    finally:
        code = stop_server(served)
        receiver.stop()
    assert code == 0
    output = served.process.stdout.read().decode() if served.process.stdout else ""
    assert f"OpenTelemetry export: sending the ledger to {receiver.url}/v1/logs" in output
    ids = got.ids()
    assert ids[:3] == [rec["hash"] for rec in before] and len(ids) == len(set(ids))
