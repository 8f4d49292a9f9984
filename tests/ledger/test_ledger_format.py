"""The ledger's format version: every record carries ``v``; a record without it (the first
ledgers') is format 1 and still verifies; a later format is refused by every reader with the fix."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from governance.errors import LedgerError
from governance.ledger import chain as ledger
from governance.ledger.reader import records
from governance.ledger.verifier import verify
from tests.ledger.records import pre_record


def _write_raw(gov: Path, recs: list[dict[str, Any]]) -> None:
    """Records chained by hand, as an older or a newer version would have written them."""
    gov.mkdir(parents=True, exist_ok=True)
    prev, lines = ledger.GENESIS, []
    for seq, rec in enumerate(recs, 1):
        full = {**rec, "ts": "2026-05-01T12:00:00.000Z", "seq": seq, "prev": prev}
        full["hash"] = prev = ledger.record_hash(full)
        lines.append(ledger.canonical(full) + b"\n")
    (gov / ledger.LEDGER).write_bytes(b"".join(lines))


def test_every_appended_record_says_its_format(gov: Path,
                                               fill: Callable[..., list[dict[str, Any]]]) -> None:
    assert {rec["v"] for rec in fill(3)} == {ledger.FORMAT_VERSION} == {1}


def test_records_without_a_version_verify_and_the_chain_goes_on_after_them(gov: Path) -> None:
    _write_raw(gov, [pre_record(0), pre_record(1)])
    appended = ledger.append(str(gov), pre_record(2))
    assert appended["seq"] == 3 and appended["v"] == 1
    report = verify(str(gov))
    assert report.ok and report.records == 3, report.problem
    assert [rec["seq"] for rec in records(str(gov))] == [1, 2, 3]


@pytest.mark.parametrize("version", [2, "1", None])
def test_a_record_in_a_later_format_is_refused_with_the_fix(gov: Path, version: object) -> None:
    _write_raw(gov, [{**pre_record(0), "v": 1}, {**pre_record(1), "v": version}])
    report = verify(str(gov))
    assert not report.ok and report.problem is not None
    assert (report.problem.file, report.problem.line, report.problem.kind) == (
        ledger.LEDGER, 2, "format")
    assert f"ledger format {version!r}" in report.problem.detail
    assert "upgrade claude-governance" in report.problem.detail
    with pytest.raises(LedgerError) as info:
        list(records(str(gov)))
    assert info.value.file == str(gov / ledger.LEDGER) and "line 2" in info.value.message
    assert "upgrade claude-governance" in (info.value.fix or "")


def test_the_verify_command_names_the_line_and_the_fix(gov: Path) -> None:
    _write_raw(gov, [{**pre_record(0), "v": 7}])
    report = verify(str(gov))
    assert report.problem is not None
    text = report.problem.render()
    assert text.startswith("ledger.jsonl:1: format: seq 1 is in ledger format 7")
    assert json.dumps(report.as_json())  # the JSON form carries it too
