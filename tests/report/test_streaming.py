"""Counting as records stream past: exact percentiles, bounded top lists, coarsening time buckets,
the reading of the ledger's lines, and memory that does not grow with the number of records."""

from __future__ import annotations

import io
import random
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from governance.errors import LedgerError
from governance.ledger import chain
from governance.ledger.reader import percentile
from governance.report.figures import Sections, records
from governance.report.progress import Progress
from governance.report.tally import MAX_CELLS, Distribution, Timeline, TopCounts
from tests.ledger.records import pre_record


def test_distribution_percentiles_equal_the_list_percentiles() -> None:
    rng = random.Random(7)
    for size in (1, 2, 3, 10, 101, 1000):
        values = [round(rng.uniform(0, 50), rng.choice((0, 1, 3))) for _ in range(size)]
        found = Distribution()
        for value in values:
            found.add(value)
        for pct in (0, 1, 50, 95, 99, 100):
            assert found.percentile(pct) == percentile(values, pct), (size, pct)
    assert Distribution().percentile(50) == 0.0


def test_top_counts_are_exact_within_capacity_and_keep_the_frequent_beyond() -> None:
    top = TopCounts(capacity=3)
    for key in "aabbbcd":
        top.add(key, note=key.upper())
    assert top.top(2) == [("b", 3, "B"), ("a", 2, "A")]
    assert top.top(10)[2:] == [("c", 1, "C"), ("d", 1, "D")]   # ties: first seen first
    for number in range(1000):
        top.add(f"rare-{number}")
        top.add("b")
    assert top.top(1) == [("b", 1003, "B")]
    assert len(top.counts) <= 2 * top.capacity and top.dropped > 900


def test_timeline_coarsens_from_hours_to_days_to_months() -> None:
    line = Timeline()
    line.add("2026-05-01T10:00:00Z", "allow")
    line.add("2026-05-01T10:30:00Z", "block")
    line.add("2026-05-01T11:00:00Z", "allow")
    assert line.rows() == ("hour", [{"bucket": "2026-05-01T10", "counts": {"allow": 1, "block": 1}},
                                    {"bucket": "2026-05-01T11", "counts": {"allow": 1}}])
    assert line.rows(max_rows=1) == ("day", [{"bucket": "2026-05-01",
                                              "counts": {"allow": 2, "block": 1}}])
    line.add("", "allow")                                  # no time: not counted
    assert sum(line.kinds.values()) == 3
    years = Timeline()
    for day in range(3 * 365):                             # three years, hour by hour
        for hour in range(24):
            years.add(f"{2024 + day // 365}-{1 + day % 365 // 31:02d}-{1 + day % 31:02d}"
                      f"T{hour:02d}:00", "allow")
    assert len(years.cells) <= MAX_CELLS and years.width == 10    # kept as days
    unit, rows = years.rows()                                     # shown as months
    assert unit == "month" and sum(r["counts"]["allow"] for r in rows) == 3 * 365 * 24


def _ledger(gov: Path, lines: list[bytes]) -> None:
    gov.mkdir(parents=True, exist_ok=True)
    (gov / "ledger.jsonl").write_bytes(b"".join(lines))


def test_records_skip_what_is_not_a_record_and_refuse_a_later_format(tmp_path: Path) -> None:
    gov = tmp_path / "gov"
    _ledger(gov, [b'{"ts":"2026-05-01T10:00:00Z","event":"A"}\n', b"not json\n", b"[1, 2]\n",
                  b'{"event":"B"} {"event":"C"}\n', b'  {"event":"D"}\n', b"\xff\xfe\n",
                  b'{"event":"E","ts":"2026-05-02T00:00:00Z"}'])
    assert [r["event"] for r in records(str(gov))] == ["A", "D", "E"]
    assert [r["event"] for r in records(str(gov), since="2026-05-02")] == ["D", "E"]
    _ledger(gov, [b'{"event":"A"}\n', b'{"v":2,"seq":2,"event":"B"}\n'])
    with pytest.raises(LedgerError, match="line 2: seq 2 is in ledger format 2"):
        list(records(str(gov)))


def test_records_read_every_segment_in_chain_order(tmp_path: Path) -> None:
    gov = tmp_path / "gov"
    for i in range(30):
        chain.append(str(gov), pre_record(i), max_bytes=2000)
    assert len(chain.segments(str(gov))) > 2
    assert [r["seq"] for r in records(str(gov))] == list(range(1, 31))


def _stream(count: int) -> Iterator[dict[str, Any]]:
    """``count`` varied records, made one at a time (a generator: read once, never kept)."""
    for i in range(count):
        action = ("allow", "allow", "allow", "block", "ask", "warn")[i % 6]
        yield {**pre_record(i, action=action, session=f"s{i % 40}",
                            ts=f"2026-05-01T{i % 24:02d}:00:00Z", duration_ms=float(i % 90),
                            acts=[{"action": action, "primitive": "vcs-push",
                                   "segment": f"git push origin b{i % 300}"}]),
               "knowledge": {"outcome": "blocked", "items": [f"sop:s{i % 7}"], "cache": "hit",
                             "lookup_ms": float(i % 50)}}
        yield {"event": "PostToolUse", "tool_use_id": f"toolu_{i:04d}", "outcome": "success",
               "ts": f"2026-05-01T{i % 24:02d}:00:01Z", "duration_ms": 1.0}


def _peak(count: int) -> int:
    tracemalloc.start()
    try:
        sections = Sections()
        sections.feed(_stream(count))
        sections.activity.figures()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_memory_does_not_grow_with_the_number_of_records() -> None:
    small, large = _peak(5_000), _peak(50_000)
    assert large < small * 1.3 + 200_000, (small, large)


def test_the_progress_bar_shows_on_a_terminal_only() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    shown = Terminal()
    bar = Progress("reading the ledger", 100, stream=shown)
    bar.advance(50)
    bar.draw()
    bar.say("verifying the chain")
    bar.done()
    assert "reading the ledger [###" in shown.getvalue() and "50%" in shown.getvalue()
    assert "verifying the chain" in shown.getvalue() and shown.getvalue().endswith("\r")
    quiet = io.StringIO()
    bar = Progress("reading the ledger", 100, stream=quiet)
    bar.advance(100)
    bar.say("verifying the chain")
    bar.done()
    assert quiet.getvalue() == ""
