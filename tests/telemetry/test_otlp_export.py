"""``governance export --otlp`` against a loopback OTLP/HTTP receiver that decodes what it gets with
opentelemetry-proto: one log record per ledger record, with its attributes and no secret; a
receiver that dies mid-export loses nothing and gets nothing twice; ``--follow`` sends what is
written later."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.proto", reason="the otel extra is not installed: "
                                                  "pip install 'claude-governance[otel]'")

from governance.commands.cli import main
from governance.ledger import chain
from governance.telemetry import settings
from governance.telemetry.cursor import Cursor, Lock
from governance.telemetry.exporter import Exporter
from governance.telemetry.record import time_ns
from tests.helpers import REPO
from tests.telemetry.conftest import SECRETS, gov_dir
from tests.telemetry.receiver import Got, Receiver, attributes

Fill = Callable[[int], list[dict[str, Any]]]


@pytest.fixture
def got() -> Got:
    return Got()


@pytest.fixture
def receiver(got: Got, monkeypatch: pytest.MonkeyPatch) -> Any:
    started = Receiver(got).start()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", started.url)
    yield started
    started.stop()


def export(project: Path, *extra: str) -> int:
    return main(["export", "--otlp", "--project", str(project), *extra])


def append_unredacted(project: Path, record: dict[str, Any]) -> dict[str, Any]:
    """A record chained as the ledger chains them but stored without redaction, as an older
    version or a hand might have written it."""
    gov = gov_dir(project)
    head = chain.read_head(gov)
    assert head is not None
    full = {"v": 1, "ts": chain.now_iso(), **record, "seq": head["seq"] + 1, "prev": head["hash"]}
    full["hash"] = chain.record_hash(full)
    with open(os.path.join(gov, "ledger.jsonl"), "ab") as fh:
        fh.write(chain.canonical(full) + b"\n")
    return full


def test_one_log_record_per_ledger_record_with_its_attributes_and_no_secret(
        project: Path, fill: Fill, receiver: Receiver, got: Got,
        capsys: pytest.CaptureFixture[str]) -> None:
    from tests.telemetry.conftest import AWS_KEY, GITHUB_TOKEN, record

    stored = fill(40)
    stored.append(append_unredacted(project, record(49)))   # 49: a secret, by hand
    assert AWS_KEY in (Path(gov_dir(project)) / "ledger.jsonl").read_text()
    assert len(list(Path(gov_dir(project)).glob("ledger.0*.jsonl"))) >= 2   # rotated

    assert export(project, "--batch", "7") == 0
    out = capsys.readouterr().out
    assert f"Sent {len(stored)} ledger records (seq 1–{len(stored)})" in out, out
    assert "in 6 requests; metrics sent." in out

    assert got.ids() == [rec["hash"] for rec in stored]          # each once, in ledger order
    for rec, log in zip(stored, got.logs, strict=True):
        attrs = attributes(log.attributes)
        assert attrs["governance.primitive"] == rec["primitive"]
        assert attrs["governance.state"] == rec["state"]
        assert attrs["governance.action"] == rec["action"]
        assert attrs["governance.tool"] == rec["tool"]
        assert attrs["governance.rule"] == rec["rule"]["key"]
        assert attrs["governance.rule.file"] == rec["rule"]["file"]
        assert attrs["session.id"] == rec["session"]
        assert attrs["governance.event"] == "PreToolUse"
        assert attrs["event.name"] == log.event_name == "governance.pre_tool_use"
        assert attrs["governance.record.seq"] == rec["seq"]
        assert attrs.get("governance.agent") == rec.get("agent_id")   # omitted when absent
        assert attrs.get("governance.layer") == rec.get("layer")
        assert log.time_unix_nano == log.observed_time_unix_nano == time_ns(rec["ts"]) > 0
        assert log.severity_text == ("WARN" if rec["action"] == "block" else "INFO")
    by_seq = {attributes(log.attributes)["governance.record.seq"]: log for log in got.logs}
    hand = attributes(by_seq[stored[-1]["seq"]].attributes)
    assert hand["governance.command"] == [
        "aws s3 ls --key [REDACTED:aws-access-key-id] && git push "
        "https://[REDACTED:github-token]@x", "ls"]
    assert by_seq[stored[-1]["seq"]].body.string_value == "token [REDACTED:github-token] seen"
    every_byte = b"".join(got.raw)
    for secret in (*SECRETS, GITHUB_TOKEN):
        assert secret.encode() not in every_byte
    resource = attributes(got.log_requests[0].resource_logs[0].resource.attributes)
    assert resource["service.name"] == "claude-governance"
    assert resource["governance.project"] == project.name


def test_a_receiver_that_dies_mid_export_loses_nothing_and_gets_nothing_twice(
        project: Path, fill: Fill, got: Got, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    stored = fill(30)
    first = Receiver(got, stop_after=2).start()           # acknowledges 2 batches, then dies
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", first.url)
    assert export(project, "--batch", "5") == 1
    assert first.closed.wait(5)
    err = capsys.readouterr().err
    assert f"the collector at {first.url}/v1/logs could not be reached" in err, err
    assert "10 records were sent and acknowledged in this run (seq 1–10)" in err
    assert "the records from seq 11 on were not acknowledged and stay unsent" in err
    assert "Fix: start the collector" in err
    assert Cursor.load(gov_dir(project)).position.seq == 10      # the cursor held
    assert len(got.logs) == 10

    fill(4)                                                   # the ledger grows meanwhile
    second = Receiver(got, port=first.port).start()           # the collector is back
    try:
        assert export(project, "--batch", "5") == 0
    finally:
        second.stop()
    everything = [json.loads(line) for path in sorted(Path(gov_dir(project)).glob("ledger*.jsonl"))
                  for line in path.read_text().splitlines()]
    assert len(everything) == len(stored) + 4
    counts = Counter(got.ids())
    assert set(counts) == {rec["hash"] for rec in everything}
    assert set(counts.values()) == {1}                        # nothing twice


def test_a_batch_whose_acknowledgement_was_lost_is_sent_again_identically(
        project: Path, fill: Fill, got: Got, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The one case of a record received twice: the collector stored batch 3 but never answered.
    The copy is the same log record (same id, same time), so a receiver can drop it by id."""
    stored = fill(20)
    receiver = Receiver(got, answer=lambda n: None if n == 3 else 200).start()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
    try:
        assert export(project, "--batch", "4") == 1
        assert "8 records were sent" in capsys.readouterr().err
        assert export(project, "--batch", "4") == 0
    finally:
        receiver.stop()
    counts = Counter(got.ids())
    assert set(counts) == {rec["hash"] for rec in stored}
    twice = {record_id for record_id, n in counts.items() if n == 2}
    assert twice == {rec["hash"] for rec in stored[8:12]} and max(counts.values()) == 2
    copies = [log.SerializeToString() for log in got.logs
              if attributes(log.attributes)["governance.record.id"] == stored[8]["hash"]]
    assert len(copies) == 2 and copies[0] == copies[1]


def test_a_collector_that_refuses_stops_the_export_and_says_what_to_check(
        project: Path, fill: Fill, got: Got, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    fill(3)
    receiver = Receiver(got, answer=lambda n: 401).start()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20sekret-value")
    try:
        assert export(project) == 1
    finally:
        receiver.stop()
    err = capsys.readouterr().err
    assert "answered HTTP 401 (try later)" in err and "OTEL_EXPORTER_OTLP_HEADERS" in err
    assert "sekret-value" not in err
    assert got.headers[0]["authorization"] == "Bearer sekret-value"
    assert not got.logs and Cursor.load(gov_dir(project)).position.seq == 0


def test_records_the_collector_rejects_are_reported_and_not_sent_again(
        project: Path, fill: Fill, got: Got, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    fill(3)
    receiver = Receiver(got, rejected=1).start()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
    try:
        assert export(project) == 0
        assert export(project) == 0
    finally:
        receiver.stop()
    out = capsys.readouterr().out
    assert "note: the collector rejected 1 of 3 records (seq 1–3); they are not sent again" in out
    assert "Nothing new to send" in out
    assert len(got.log_requests) == 1 and Cursor.load(gov_dir(project)).rejected == 1


def test_metrics_are_cumulative_across_runs(project: Path, fill: Fill, receiver: Receiver,
                                            got: Got) -> None:
    stored = fill(12)
    assert export(project) == 0
    fill(3)
    assert export(project) == 0
    decisions = got.metric("governance.decisions")
    assert decisions.sum.is_monotonic and decisions.sum.aggregation_temporality == 2
    totals = {tuple(attributes(p.attributes).get(f"governance.{k}") for k in
                    ("action", "primitive", "state")): p.as_int
              for p in decisions.sum.data_points}
    blocked = sum(1 for i in range(15) if i % 5 == 0)
    assert totals == {("allow", "shell-execute", "DO"): 15 - blocked,
                      ("block", "shell-execute", "DO"): blocked}
    (latency,) = got.metric("governance.hook.duration").histogram.data_points
    assert attributes(latency.attributes) == {"governance.event": "PreToolUse"}
    assert latency.count == 15 and sum(latency.bucket_counts) == 15
    assert latency.min == 1.0 and latency.max == 7.0
    first = got.metrics[0].resource_metrics[0]
    last = got.metrics[-1].resource_metrics[0]
    assert first.resource == last.resource                         # one series across runs
    start = {p.start_time_unix_nano for r in (first, last)
             for p in r.scope_metrics[0].metrics[0].sum.data_points}
    assert len(start) == 1 and len(stored) == 12


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_follow_sends_records_written_later_and_waits_out_a_collector_that_is_down(
        project: Path, fill: Fill, got: Got, monkeypatch: pytest.MonkeyPatch) -> None:
    stored = fill(5)
    port = free_port()
    said: list[str] = []
    exporter = Exporter(str(project), settings.load({"OTEL_EXPORTER_OTLP_ENDPOINT":
                                                     f"http://127.0.0.1:{port}"}),
                        batch=3, say=said.append)
    stop = threading.Event()
    thread = threading.Thread(target=exporter.follow, args=(stop,),
                              kwargs={"poll": 0.05, "backoff": (0.05, 0.2)}, daemon=True)
    thread.start()
    receiver = None
    try:
        time.sleep(0.4)                                    # down: retried, said once
        assert [s for s in said if "could not be reached" in s] == [said[0]]
        receiver = Receiver(got, port=port).start()
        wait_for(lambda: len(got.logs) == 5)
        stored += fill(4)                                  # written while it follows
        wait_for(lambda: len(got.logs) == 9)
        wait_for(lambda: bool(got.metrics))
    finally:
        stop.set()
        thread.join(5)
        if receiver is not None:
            receiver.stop()
    assert not thread.is_alive()
    assert got.ids() == [rec["hash"] for rec in stored]
    assert "the collector acknowledges again" in said


def wait_for(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "not within the time"
        time.sleep(0.02)


def test_one_exporter_at_a_time(project: Path, fill: Fill, receiver: Receiver,
                                capsys: pytest.CaptureFixture[str]) -> None:
    fill(2)
    other = Lock(gov_dir(project))
    assert other.acquire()
    try:
        assert export(project) == 1
    finally:
        other.release()
    assert "another exporter of this project's ledger is running" in capsys.readouterr().err
    assert export(project) == 0


def test_a_ledger_replaced_since_the_last_export_is_an_error(
        project: Path, fill: Fill, receiver: Receiver, got: Got,
        capsys: pytest.CaptureFixture[str]) -> None:
    fill(4)
    assert export(project) == 0
    for path in Path(gov_dir(project)).glob("ledger*"):
        path.unlink()
    fill(6)                                                # a new history, seq 1..6
    assert export(project) == 1
    err = capsys.readouterr().err
    assert "the ledger is not the one the exporter last sent (seq 4" in err, err
    assert "remove telemetry/otlp.cursor" in err
    assert len(got.logs) == 4


def test_grpc_is_refused_with_what_to_set(project: Path, fill: Fill, receiver: Receiver,
                                          monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    fill(1)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    assert export(project) == 2
    err = capsys.readouterr().err
    assert "OTEL_EXPORTER_OTLP_PROTOCOL is 'grpc'" in err
    assert "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL=http/protobuf" in err
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "http/protobuf")
    monkeypatch.setenv("OTEL_METRICS_EXPORTER", "none")   # its protocol stays grpc: metrics off
    assert export(project) == 0


def test_gzip_and_a_logs_endpoint_of_its_own(project: Path, fill: Fill, got: Got,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    fill(2)
    receiver = Receiver(got).start()
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")   # not used for logs
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", receiver.url + "/v1/logs")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", receiver.url + "/v1/metrics")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip")
    try:
        assert export(project) == 0
    finally:
        receiver.stop()
    assert len(got.logs) == 2 and got.metrics
    assert {h["content-encoding"] for h in got.headers} == {"gzip"}


def test_the_installed_command_in_a_process_of_its_own(project: Path, fill: Fill,
                                                       receiver: Receiver) -> None:
    stored = fill(9)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "governance.commands.cli", "export", "--otlp",
                           "--project", str(project), "--batch", "4", "--json"],
                          cwd=str(REPO), env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["sent"] == 9 and summary["batches"] == 3 and summary["metrics"] is True
    assert receiver.got.ids() == [rec["hash"] for rec in stored]

    env["OTEL_EXPORTER_OTLP_PROTOCOL"] = "grpc"
    refused = subprocess.run([sys.executable, "-m", "governance.commands.cli", "export",
                              "--otlp", "--project", str(project)], cwd=str(REPO), env=env,
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2
    assert "grpc and http/json are not supported" in refused.stderr


def test_follow_in_a_process_of_its_own_stops_cleanly_on_ctrl_c(project: Path, fill: Fill,
                                                                 receiver: Receiver) -> None:
    import signal

    stored = fill(2)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen([sys.executable, "-m", "governance.commands.cli", "export",
                                "--otlp", "--follow", "--project", str(project)],
                               cwd=str(REPO), env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    said: list[str] = []     # its lines as they come: Ctrl-C once it says the third is sent
    assert process.stdout is not None
    reader = threading.Thread(target=lambda: said.extend(iter(process.stdout.readline, "")),
                              daemon=True)
    reader.start()
    try:
        wait_for(lambda: len(receiver.got.logs) == 2)
        stored += fill(1)                                   # written while it follows
        wait_for(lambda: len(receiver.got.logs) == 3)
        wait_for(lambda: any("up to seq 3" in line for line in said))
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=20)
        reader.join(timeout=20)
        err = process.stderr.read() if process.stderr is not None else ""
    out = "".join(said)
    assert process.returncode == 0, err
    assert "sent 2 records (up to seq 2)" in out and "sent 1 record (up to seq 3)" in out
    assert "Stopped; 3 records sent in all, up to seq 3." in out
    assert receiver.got.ids() == [rec["hash"] for rec in stored]
