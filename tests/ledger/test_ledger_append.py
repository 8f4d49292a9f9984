"""Appending: the record format, the chain, the head sidecar, file modes, rotation."""

from __future__ import annotations

import itertools
import json
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from governance.ledger import chain as ledger
from governance.ledger.verifier import verify
from tests.ledger.records import pre_record


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_records_are_chained_and_hashed(gov: Path, fill: Callable[..., list[Any]]) -> None:
    written = fill(5)
    stored = _lines(gov / ledger.LEDGER)
    assert stored == written
    assert [r["seq"] for r in stored] == [1, 2, 3, 4, 5]
    assert stored[0]["prev"] == ledger.GENESIS
    for before, after in itertools.pairwise(stored):
        assert after["prev"] == before["hash"]
    for rec in stored:
        assert rec["hash"] == ledger.record_hash(rec)
        assert rec["v"] == 1 and rec["ts"].endswith("Z")
    # one canonical line per record: sorted keys, no spaces
    raw = (gov / ledger.LEDGER).read_bytes().splitlines()
    assert raw[0] == ledger.canonical(stored[0])


def test_head_sidecar_tracks_the_chain(gov: Path, fill: Callable[..., list[Any]]) -> None:
    written = fill(3)
    head = json.loads((gov / ledger.HEAD).read_text())
    assert head == {"hash": written[-1]["hash"], "seq": 3,
                    "size": (gov / ledger.LEDGER).stat().st_size, "segment": 0}


def test_modes_are_private(gov: Path, fill: Callable[..., list[Any]]) -> None:
    fill(1)
    assert stat.S_IMODE(gov.stat().st_mode) == 0o700
    for name in (ledger.LEDGER, ledger.HEAD, ledger.LOCK):
        assert stat.S_IMODE((gov / name).stat().st_mode) == 0o600, name


def test_caller_record_is_not_mutated_and_ts_is_kept(gov: Path) -> None:
    record = pre_record(1, ts="2026-01-02T03:04:05.000Z")
    copy = dict(record)
    out = ledger.append(str(gov), record)
    assert record == copy
    assert out["ts"] == "2026-01-02T03:04:05.000Z"


def test_lost_head_is_rebuilt_from_the_ledger(gov: Path, fill: Callable[..., list[Any]]) -> None:
    written = fill(4)
    (gov / ledger.HEAD).unlink()
    nxt = ledger.append(str(gov), pre_record(9))
    assert nxt["seq"] == 5 and nxt["prev"] == written[-1]["hash"]
    assert verify(str(gov)).ok


def test_append_reads_only_the_head_not_the_ledger(gov: Path, fill: Callable[..., list[Any]],
                                                   monkeypatch: Any) -> None:
    fill(3)
    reads: list[int] = []
    real_pread = os.pread
    real_read = os.read
    ledger_file = (gov / ledger.LEDGER).stat().st_ino

    def pread(fd: int, n: int, offset: int) -> bytes:
        if os.fstat(fd).st_ino == ledger_file:   # the anchor, outside the project, is read
            reads.append(n)
        return real_pread(fd, n, offset)

    def read(fd: int, n: int) -> bytes:
        if os.fstat(fd).st_ino == ledger_file:
            reads.append(n)
        return real_read(fd, n)

    monkeypatch.setattr(os, "pread", pread)
    monkeypatch.setattr(os, "read", read)
    ledger.append(str(gov), pre_record(3))
    assert reads == []  # the head comes from the sidecar (read via open()), the ledger is untouched


def test_rotation_continues_the_chain(gov: Path, fill: Callable[..., list[Any]]) -> None:
    written = fill(30, max_bytes=2000)
    segs = ledger.segments(str(gov))
    assert len(segs) >= 5
    assert segs == sorted(segs) and segs[0] == "ledger.000001.jsonl"
    for name in [*segs, ledger.LEDGER]:
        assert (gov / name).stat().st_size <= 2000
        assert stat.S_IMODE((gov / name).stat().st_mode) == 0o600
    stored = [r for name in [*segs, ledger.LEDGER] for r in _lines(gov / name)]
    assert stored == written
    report = verify(str(gov))
    assert report.ok and report.records == 30 and len(report.files) == len(segs) + 1
    assert json.loads((gov / ledger.HEAD).read_text())["segment"] == len(segs)


def test_rotation_crash_between_rename_and_head(gov: Path, fill: Callable[..., list[Any]]) -> None:
    written = fill(3)
    os.rename(gov / ledger.LEDGER, gov / ledger.segment_name(1))  # head still names the old file
    nxt = ledger.append(str(gov), pre_record(3))
    assert nxt["prev"] == written[-1]["hash"] and nxt["seq"] == 4
    assert verify(str(gov)).ok
    assert not (gov / ledger.ERRORS).exists()  # a consistent rotation is no error


def test_a_record_larger_than_max_bytes_still_lands(gov: Path) -> None:
    ledger.append(str(gov), pre_record(0), max_bytes=100)
    ledger.append(str(gov), pre_record(1), max_bytes=100)
    assert verify(str(gov)).records == 2
    assert ledger.segments(str(gov)) == ["ledger.000001.jsonl"]
