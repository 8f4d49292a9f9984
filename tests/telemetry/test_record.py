"""A ledger record as a log record: the chosen fields, redacted again; and the ledger read after a
position (no extra needed)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from governance.commands.cli import main
from governance.telemetry.record import event_name, log_fields, time_ns
from governance.telemetry.source import Position, unsent
from tests.telemetry.conftest import AWS_KEY, GITHUB_TOKEN, gov_dir


def test_every_text_is_redacted_even_when_the_ledger_was_not() -> None:
    record = {"event": "PostToolUseFailure", "tool": "Bash", "session": "s-1", "seq": 3,
              "hash": "h" * 64, "agent": f"bot {GITHUB_TOKEN}", "error": f"denied for {AWS_KEY}",
              "acts": [{"segment": f"curl -H 'Authorization: Bearer {GITHUB_TOKEN}' x"}],
              "rule": f"rules.{AWS_KEY}", "outcome": "failure", "input_sha256": "d" * 64,
              "ts": "2026-05-01T12:00:00.250Z", "duration_ms": 3.5}
    fields = log_fields(record)
    sent = json.dumps([fields.body, fields.attributes])
    assert AWS_KEY not in sent and GITHUB_TOKEN not in sent and GITHUB_TOKEN[4:] not in sent
    assert fields.body == "denied for [REDACTED:aws-access-key-id]"
    assert "input_sha256" not in sent and "d" * 64 not in sent   # chosen fields only
    assert fields.attributes["governance.outcome"] == "failure"
    assert fields.attributes["governance.duration_ms"] == 3.5
    assert fields.event_name == "governance.post_tool_use_failure"
    assert fields.time_ns == 1777636800_250_000_000


def test_fields_a_record_lacks_are_omitted() -> None:
    fields = log_fields({"event": "StateChange", "from": "PLAN", "to": "DO", "state": "DO",
                         "seq": 1, "hash": "x"})
    assert fields.attributes == {"event.name": "governance.state_change",
                                 "governance.record.id": "x", "governance.event": "StateChange",
                                 "governance.state": "DO", "governance.record.seq": 1}
    assert fields.body == "StateChange" and fields.severity_text == "INFO"


@pytest.mark.parametrize("event, name", [("PreToolUse", "governance.pre_tool_use"),
                                         ("CSTP", "governance.cstp"),
                                         ("guardrail_check", "governance.guardrail_check"),
                                         ("", "governance.record")])
def test_event_names(event: str, name: str) -> None:
    assert event_name(event) == name


@pytest.mark.parametrize("ts", [None, "", "yesterday", "2026-05-01T12:00:00"])
def test_a_time_that_cannot_be_read_is_zero(ts: Any) -> None:
    assert time_ns(ts) == 0


def test_a_line_still_being_written_waits_for_the_next_read(
        project: Path, fill: Callable[[int], list[dict[str, Any]]]) -> None:
    stored = fill(3)
    live = os.path.join(gov_dir(project), "ledger.jsonl")
    with open(live, "ab") as fh:
        fh.write(b'{"seq": 4, "hash": "half')
    found = unsent(gov_dir(project), Position(), 10)
    assert [entry.record["hash"] for entry in found.entries] == [rec["hash"] for rec in stored]
    after = unsent(gov_dir(project), found.entries[-1].position, 10)
    assert after.entries == []


def test_without_the_extra_the_command_says_how_to_install_it(
        project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    for name in [*list(sys.modules), "opentelemetry.proto", "opentelemetry.sdk"]:
        if name.startswith(("opentelemetry.proto", "opentelemetry.sdk")):
            monkeypatch.setitem(sys.modules, name, None)
    assert main(["export", "--otlp", "--project", str(project)]) == 2
    err = capsys.readouterr().err
    assert "the OpenTelemetry export needs the otel extra, which is not installed" in err
    assert "pip install 'claude-governance[otel]'" in err
    from governance.telemetry import background

    said: list[str] = []
    assert background.start(str(project), said.append,
                            {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"}) is None
    assert said and "pip install 'claude-governance[otel]'" in said[0]


def test_a_rotation_between_listing_and_reading_loses_nothing(
        project: Path, fill: Callable[[int], list[dict[str, Any]]],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The files are listed, then the live ledger is renamed to a segment the list lacks: the
    records of that segment are neither skipped nor sent out of order."""
    from governance.telemetry import source

    stored = fill(30)
    gov = gov_dir(project)
    real = source.chain_files(gov)
    assert len(real) >= 4
    stale = [path for path in real if path != real[-2]]         # the newest segment not listed
    listings = iter([stale, stale])
    monkeypatch.setattr(source, "chain_files", lambda _gov: next(listings, real))
    sent: list[str] = []
    position = Position()
    while True:
        found = source.unsent(gov, position, 100)
        if not found.entries:
            break
        assert found.skipped == 0
        sent += [entry.record["hash"] for entry in found.entries]
        position = found.entries[-1].position
    assert sent == [rec["hash"] for rec in stored]


def test_a_folder_without_governance_is_refused_and_left_untouched(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("opentelemetry.proto", reason="the otel extra is not installed: "
                                                      "pip install 'claude-governance[otel]'")
    assert main(["export", "--otlp", "--project", str(tmp_path)]) == 1
    assert "there is no ledger in" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
