"""Tampering: verify names the first bad line and what was done to it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from governance.commands import ledger as ledger_cmd
from governance.ledger import chain as ledger
from governance.ledger.verifier import verify
from tests.ledger.records import pre_record


def _rewrite(path: Path, change: Callable[[list[bytes]], list[bytes]]) -> None:
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(change(lines)))


def _edit(line: bytes, **fields: Any) -> bytes:
    rec = json.loads(line)
    rec.update(fields)
    return ledger.canonical(rec) + b"\n"


def _rehash(line: bytes, **fields: Any) -> bytes:
    rec = json.loads(line)
    rec.update(fields)
    rec["hash"] = ledger.record_hash(rec)
    return ledger.canonical(rec) + b"\n"


@pytest.fixture
def ten(gov: Path, fill: Callable[..., list[Any]]) -> Path:
    fill(10)
    assert verify(str(gov)).ok
    return gov / ledger.LEDGER


def _problem(gov: Path) -> tuple[str, int, str]:
    report = verify(str(gov))
    assert not report.ok and report.problem is not None
    return report.problem.file, report.problem.line, report.problem.kind


def test_edited_field(gov: Path, ten: Path) -> None:
    _rewrite(ten, lambda ls: [*ls[:4], _edit(ls[4], action="block"), *ls[5:]])
    assert _problem(gov) == ("ledger.jsonl", 5, "edited")


def test_edited_whitespace_only(gov: Path, ten: Path) -> None:
    _rewrite(ten, lambda ls: [*ls[:6], ls[6].replace(b'"action":', b'"action": '), *ls[7:]])
    assert _problem(gov) == ("ledger.jsonl", 7, "edited")


def test_edited_and_rehashed(gov: Path, ten: Path) -> None:
    _rewrite(ten, lambda ls: [*ls[:2], _rehash(ls[2], reason="nothing to see"), *ls[3:]])
    assert _problem(gov) == ("ledger.jsonl", 3, "edited")


def test_edited_last_line_rehashed_is_caught_by_the_head(gov: Path, ten: Path) -> None:
    _rewrite(ten, lambda ls: [*ls[:9], _rehash(ls[9], action="allow", reason="x")])
    assert _problem(gov) == ("ledger.jsonl", 10, "edited")


def test_deleted_middle(gov: Path, ten: Path) -> None:
    _rewrite(ten, lambda ls: ls[:3] + ls[5:])
    file, line, kind = _problem(gov)
    assert (file, line, kind) == ("ledger.jsonl", 4, "deleted")
    assert "2 records missing" in str(verify(str(gov)).problem)


def test_deleted_first(gov: Path, ten: Path) -> None:
    _rewrite(ten, lambda ls: ls[1:])
    assert _problem(gov) == ("ledger.jsonl", 1, "deleted")


def test_deleted_from_the_end(gov: Path, ten: Path) -> None:
    _rewrite(ten, lambda ls: ls[:7])
    assert _problem(gov) == ("ledger.jsonl", 8, "deleted")


def test_inserted_forged_with_valid_hash(gov: Path, ten: Path) -> None:
    def insert(ls: list[bytes]) -> list[bytes]:
        before = json.loads(ls[4])
        forged = {**pre_record(99), "ts": before["ts"], "v": 1, "seq": before["seq"] + 1,
                  "prev": before["hash"]}
        forged["hash"] = ledger.record_hash(forged)
        return [*ls[:5], ledger.canonical(forged) + b"\n", *ls[5:]]

    _rewrite(ten, insert)
    assert _problem(gov) == ("ledger.jsonl", 6, "inserted")


def test_inserted_without_a_valid_hash(gov: Path, ten: Path) -> None:
    _rewrite(ten, lambda ls: [*ls[:5], _edit(ls[2], reason="planted"), *ls[5:]])
    assert _problem(gov) == ("ledger.jsonl", 6, "inserted")


def test_inserted_duplicate(gov: Path, ten: Path) -> None:
    _rewrite(ten, lambda ls: [*ls[:5], ls[4], *ls[5:]])
    assert _problem(gov) == ("ledger.jsonl", 6, "inserted")


def test_reordered_swap(gov: Path, ten: Path) -> None:
    _rewrite(ten, lambda ls: [*ls[:3], ls[4], ls[3], *ls[5:]])
    assert _problem(gov) == ("ledger.jsonl", 4, "reordered")


def test_reordered_moved_far(gov: Path, ten: Path) -> None:
    _rewrite(ten, lambda ls: [*ls[:2], *ls[3:8], ls[2], *ls[8:]])
    file, line, kind = _problem(gov)
    assert (file, line, kind) == ("ledger.jsonl", 3, "reordered")
    assert "ledger.jsonl:8" in str(verify(str(gov)).problem)


def test_torn_last_line(gov: Path, ten: Path) -> None:
    _rewrite(ten, lambda ls: [*ls[:9], ls[9][:40]])
    assert _problem(gov) == ("ledger.jsonl", 10, "torn")


def test_torn_in_the_middle(gov: Path, ten: Path) -> None:
    _rewrite(ten, lambda ls: [*ls[:3], ls[3][:50] + b"\n", *ls[4:]])
    assert _problem(gov) == ("ledger.jsonl", 4, "torn")


def test_tampering_in_an_old_segment_is_named(gov: Path,
                                              fill: Callable[..., list[Any]]) -> None:
    fill(20, max_bytes=2500)
    segs = ledger.segments(str(gov))
    assert len(segs) >= 3
    _rewrite(gov / segs[1], lambda ls: [ls[0], _edit(ls[1], action="ask"), *ls[2:]])
    assert _problem(gov) == (segs[1], 2, "edited")


def test_a_deleted_segment_is_found(gov: Path, fill: Callable[..., list[Any]]) -> None:
    fill(20, max_bytes=2500)
    segs = ledger.segments(str(gov))
    (gov / segs[1]).unlink()
    file, line, kind = _problem(gov)
    assert (file, line, kind) == (segs[2], 1, "deleted")


def test_cli_exit_codes(gov: Path, ten: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import argparse

    project = str(gov.parent.parent)
    args = argparse.Namespace(project=project, json=False)
    assert ledger_cmd.run(args) == 0
    assert "OK: 10 record(s)" in capsys.readouterr().out
    _rewrite(ten, lambda ls: [*ls[:4], _edit(ls[4], action="block"), *ls[5:]])
    assert ledger_cmd.run(args) == 1
    out = capsys.readouterr().out
    assert "ledger.jsonl:5: edited" in out
    assert ledger_cmd.run(argparse.Namespace(project=project, json=True)) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is False and data["problem"]["line"] == 5
