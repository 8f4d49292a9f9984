"""Every figure of the report against the hand-computed fixture (tests/report/fixture.py), the
filters, and ``governance stats`` / ``governance knowledge stats`` counted by the same code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from governance.commands import cli
from governance.report.figures import build, ledger_stats
from governance.report.selection import Selection, parse
from tests.report import fixture
from tests.report.fixture import BYPASS, DAY1, DAY2, NO_INTENT, PUSH

NO_RESULT = "no result (refused by the user, or never finished)"


@pytest.fixture
def written(project: Path) -> Path:
    return fixture.write(project)


@pytest.fixture
def figures(written: Path) -> dict[str, Any]:
    return build(str(written), Selection(), show_progress=False)


def test_activity_counts_durations_and_timeline(figures: dict[str, Any]) -> None:
    a = figures["activity"]
    assert (a["records"], a["first"], a["last"]) == (24, f"{DAY1}T09:00:00.000Z",
                                                     f"{DAY2}T11:05:00.000Z")
    assert a["events"] == {"PreToolUse": 15, "PostToolUse": 4, "KnowledgeBypass": 2,
                           "StateChange": 1, "PostToolUseFailure": 1, "KnowledgeIgnored": 1}
    assert a["actions"] == {"allow": 7, "block": 5, "ask": 2, "warn": 1}
    assert a["primitives"] == {"shell-execute": 6, "file-write": 4, "vcs-push": 2,
                               "destructive": 2, "network": 1}
    assert a["states"] == {"DO": 13, "EXPLORE": 2}
    assert a["outcomes"] == {"success": 4, "failure": 1}
    assert a["denials_per_session"] == {"sess-0001": 4, "sess-0002": 1}
    # PreToolUse 2, 5, 4, 3, 3, 2, 2 -> sorted 2 2 2 3 3 4 5: p50 is the 4th, p95 the 7th
    assert a["hook_duration_ms"] == {
        "PostToolUse": {"count": 2, "p50": 1.0, "p95": 1.0, "p99": 1.0},
        "PostToolUseFailure": {"count": 1, "p50": 0.5, "p95": 0.5, "p99": 0.5},
        "PreToolUse": {"count": 7, "p50": 3.0, "p95": 5.0, "p99": 5.0},
        "all": {"count": 10, "p50": 2.0, "p95": 5.0, "p99": 5.0}}
    timeline = a["timeline"]
    assert timeline["unit"] == "hour" and timeline["actions"] == ["allow", "warn", "ask", "block"]
    assert [(row["bucket"], row["counts"]) for row in timeline["rows"]] == [
        (f"{DAY1}T09", {"allow": 1, "block": 1}), (f"{DAY1}T10", {"ask": 2, "block": 1}),
        (f"{DAY1}T11", {"warn": 1}), (f"{DAY2}T08", {"allow": 3}), (f"{DAY2}T09", {"allow": 1}),
        (f"{DAY2}T10", {"allow": 1, "block": 2}), (f"{DAY2}T11", {"allow": 1, "block": 1})]


def test_denials_by_primitive_state_and_command(figures: dict[str, Any]) -> None:
    d = figures["denials"]
    assert (d["total"], d["decisions"], d["rate"]) == (5, 15, round(5 / 15, 4))
    assert d["by_primitive"] == {"file-write": 3, "vcs-push": 2}
    assert d["by_state"] == {"DO": 4, "EXPLORE": 1}
    assert d["by_tool"] == {"Bash": 2, "Write": 2, "Edit": 1}
    assert [(c["command"], c["count"], c["reason"]) for c in d["top_commands"]] == [
        ("Write (file-write)", 2, "Writing files is not allowed in EXPLORE."),
        ("git push --force origin main", 1, PUSH), ("git push origin main", 1, PUSH),
        ("Edit (file-write)", 1, NO_INTENT)]


def test_asks_are_matched_with_their_results(figures: dict[str, Any]) -> None:
    assert figures["asks"] == {"total": 2, "answers": {"approved, ran": 1, NO_RESULT: 1},
                               "approved_rate": 0.5, "by_primitive": {"destructive": 2},
                               "refused_in_bypass_mode": 0}


def test_knowledge_rates_per_sop_ignored_blocks_and_bypasses(figures: dict[str, Any]) -> None:
    k = figures["knowledge"]
    assert {key: k[key] for key in ("consulted", "with_knowledge", "injected", "blocked",
                                    "acknowledged", "ignored", "bypassed", "bypass_switches",
                                    "repeat", "errors")} == {
        "consulted": 4, "with_knowledge": 4, "injected": 0, "blocked": 2, "acknowledged": 1,
        "ignored": 1, "bypassed": 1, "bypass_switches": 2, "repeat": 0, "errors": 0}
    assert k["acknowledgment_rate"] == 0.5
    assert k["cache"] == {"hit": 2, "built": 1, "stale": 1} and k["cache_hit_rate"] == 0.75
    assert k["lookup_ms"] == {"p50": 2.0, "p95": 4.0, "p99": 4.0}     # of 4, 1, 2, 3
    assert k["sops"] == {"docker-deploy": 3, "k8s": 1}
    assert k["per_sop"] == [
        {"sop": "docker-deploy", "shown": 1, "blocked": 1, "acknowledged": 1, "ignored": 0,
         "acknowledgment_rate": 1.0},
        {"sop": "k8s", "shown": 0, "blocked": 1, "acknowledged": 0, "ignored": 1,
         "acknowledgment_rate": 0.0}]
    assert k["memories"] == {"shown": 0, "blocked": 1, "acknowledged": 0, "ignored": 1}
    assert [(e["bypass"], e["reason"], e["by"]) for e in k["bypass_events"]] == [
        ("on", BYPASS, "alice"), ("off", "", "")]
    assert k["bypassed_by_reason"] == [{"reason": BYPASS, "calls": 1}]


def test_intents_traced_share_and_refusals(figures: dict[str, Any]) -> None:
    assert figures["intents"] == {
        "trace_records": 3, "edited_lines": 16, "traced_lines": 12, "traced_share": 0.75,
        "refused": {"no_intent": 1, "out_of_scope": 1, "other": 0},
        "per_intent": [
            {"intent": "WORK-1", "lines": 12, "files": 2, "calls": 1, "refused_out_of_scope": 1},
            {"intent": "(none)", "lines": 4, "files": 1, "calls": 0, "refused_out_of_scope": 0}]}


def test_decision_memory_reliability_bins_brier_and_reviews(figures: dict[str, Any]) -> None:
    m = figures["memory"]
    assert (m["decisions"], m["reviewed"], m["abandoned"], m["awaiting_review"]) == (8, 6, 1, 2)
    assert m["awaiting_by_category"] == {"deploy": 1, "testing": 1}
    assert [(d["category"], d["confidence"], d["created"]) for d in m["oldest_awaiting"]] == [
        ("deploy", 0.7, f"{DAY1}T08:00:00Z"), ("testing", 0.2, f"{DAY2}T12:00:00Z")]
    overall = m["overall"]
    # reviewed, not abandoned: 0.9 -> 1, 0.8 -> 0, 0.3 -> 0.5, 0.65 -> 1, 0.1 -> 0
    assert overall["sample_size"] == 5 and overall["accuracy"] == 0.5
    assert overall["brier"] == pytest.approx((0.01 + 0.64 + 0.04 + 0.1225 + 0.01) / 5, abs=1e-4)
    assert overall["ece"] == pytest.approx((0.1 + 0.2 + 0.35 + 2 * 0.35) / 5, abs=1e-4)
    assert [(b["range"], b["count"], b["mean_confidence"], b["mean_outcome"])
            for b in overall["bins"]] == [([0.0, 0.2], 1, 0.1, 0.0), ([0.2, 0.4], 1, 0.3, 0.5),
                                          ([0.6, 0.8], 1, 0.65, 1.0), ([0.8, 1.0], 2, 0.85, 0.5)]
    brier = {c["category"]: c["brier"] for c in m["categories"]}
    assert brier == pytest.approx({"deploy": 0.69 / 3, "testing": 0.1325 / 2}, abs=1e-4)


def test_tamper_evidence_and_a_chain_that_holds(figures: dict[str, Any]) -> None:
    chain = figures["tamper"]["chain"]
    assert chain["ok"] and chain["records"] == 24 and chain["problem"] is None
    assert figures["tamper"]["evidence"] == {
        "unaccepted": {"matrix": 1}, "tampered": {"intents.marshal": 1}, "org_refused": 0,
        "first_seen": f"{DAY2}T11:00:00.000Z", "last_seen": f"{DAY2}T11:05:00.000Z"}


def test_a_broken_chain_names_its_first_broken_record(written: Path) -> None:
    ledger = written / ".claude" / "governance" / "ledger.jsonl"
    lines = ledger.read_text().splitlines(keepends=True)
    lines[4] = lines[4].replace("git push origin main", "git push origin feature")
    ledger.write_text("".join(lines))
    chain = build(str(written), Selection(), show_progress=False)["tamper"]["chain"]
    assert not chain["ok"]
    assert (chain["problem"]["file"], chain["problem"]["line"], chain["problem"]["kind"]) == (
        "ledger.jsonl", 5, "edited")
    assert "git push origin feature" in chain["problem"]["text"]


@pytest.mark.parametrize(("chosen", "decisions", "denials", "reviewed"), [
    (Selection(state="DO"), 13, 4, 4),                 # d5 was decided in CHECK
    (Selection(state="EXPLORE"), 2, 1, 0),
    (Selection(agent="Explore"), 1, 0, 0),             # the sub-agent's warned fetch
    (Selection(agent="main"), 14, 5, 0),               # decisions: no agent is called "main"
    (Selection(agent="planner"), 0, 0, 4),             # a CSTP agent: decisions only
    (Selection(since=DAY2), 9, 3, 2),
    (Selection(until=f"{DAY1}T10"), 5, 2, 2),          # up to 10:59, as `governance log` reads
])
def test_filters_select_records_and_decisions(written: Path, chosen: Selection, decisions: int,
                                              denials: int, reviewed: int) -> None:
    found = build(str(written), chosen, verify=False, show_progress=False)
    assert found["denials"]["decisions"] == decisions
    assert found["denials"]["total"] == denials
    assert found["memory"]["overall"]["sample_size"] == reviewed
    assert found["selection"] == chosen.active


def test_the_time_window_selects_trace_records(written: Path) -> None:
    found = build(str(written), Selection(since=DAY2), verify=False, show_progress=False)
    assert found["intents"]["edited_lines"] == 12 and found["intents"]["traced_share"] == 1.0


def test_parse_reads_ages_and_dates_and_names_a_bad_one() -> None:
    assert parse("1d", now=86400 * 2).since == "1970-01-02T00:00:00"
    assert parse(until="2026-05-01").until == "2026-05-01"
    with pytest.raises(Exception, match="since: not a time: 'yesterday'") as caught:
        parse("yesterday")
    assert "7d" in str(getattr(caught.value, "fix", ""))


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = cli.main(list(argv))
    return code, capsys.readouterr().out


def test_stats_prints_the_reports_counts(written: Path, figures: dict[str, Any],
                                         capsys: pytest.CaptureFixture[str]) -> None:
    _code, out = _cli(capsys, "stats", "--project", str(written), "--json")
    stats = json.loads(out)
    assert stats == {key: figures["activity"][key] for key in stats}
    assert set(stats) == {"records", "first", "last", "events", "primitives", "actions",
                          "states", "outcomes", "denials_per_session", "hook_duration_ms"}
    _code, out = _cli(capsys, "stats", "--project", str(written), "--json", "--state", "EXPLORE")
    assert json.loads(out)["actions"] == {"block": 1, "allow": 1}
    gov = str(written / ".claude" / "governance")
    assert ledger_stats(gov, since=f"{DAY2}T10")["records"] == 6


def test_knowledge_stats_prints_the_reports_counts(written: Path, figures: dict[str, Any],
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    _code, out = _cli(capsys, "knowledge", "stats", "--project", str(written), "--json")
    stats = json.loads(out)
    assert stats == {key: figures["knowledge"][key] for key in stats}
    assert "per_sop" not in stats and stats["blocked"] == 2
    _code, out = _cli(capsys, "knowledge", "stats", "--project", str(written), "--json",
                      "--since", f"{DAY2}T08:05")
    assert json.loads(out)["consulted"] == 2     # the held kubectl call and the bypassed one


def test_a_large_ledger_is_verified_in_a_child_process_alike(written: Path,
                                                             figures: dict[str, Any],
                                                             monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    import multiprocessing

    from governance.report import figures as module

    started: list[Any] = []
    fork = multiprocessing.get_context("fork")
    monkeypatch.setattr(module, "APART_BYTES", 0)
    monkeypatch.setattr(module.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(multiprocessing, "get_context", lambda kind: started.append(kind) or fork)
    apart = build(str(written), Selection(), show_progress=False, fork=True)
    assert started == ["fork"]
    assert apart["tamper"] == figures["tamper"] and apart["denials"] == figures["denials"]
    ledger = written / ".claude" / "governance" / "ledger.jsonl"
    ledger.write_text(ledger.read_text().replace('"git status"', '"git stash"'))
    broken = build(str(written), Selection(), show_progress=False, fork=True)["tamper"]["chain"]
    assert not broken["ok"] and broken["problem"]["line"] == 24
