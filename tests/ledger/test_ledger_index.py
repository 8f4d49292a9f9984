"""The id index of a sealed segment: ``explain`` reads only the lines of the call in each sealed
segment, and an index that does not describe its segment (stale, forged, torn) never gives a wrong
answer."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from governance.bench.ledger import generate
from governance.ledger import chain, index, reader
from tests.ledger.records import pre_record


def _every(gov_dir: str, tool_use_id: str) -> dict[str, Any]:
    found = [rec for rec in reader.records(gov_dir) if rec.get("tool_use_id") == tool_use_id]
    return {"tool_use_id": tool_use_id,
            "decisions": [r for r in found if r.get("event") == "PreToolUse"],
            "results": [r for r in found if r.get("event") != "PreToolUse"]}


@pytest.fixture
def ledger(tmp_path: Path) -> str:
    gov_dir = str(tmp_path / "governance")
    generate(gov_dir, 3000, segment_bytes=150_000)      # about 15 sealed segments
    return gov_dir


def test_the_index_lists_every_id_at_the_start_of_its_line(ledger: str) -> None:
    segment = os.path.join(ledger, chain.segments(ledger)[1])
    assert index.build(segment)
    data = Path(segment).read_bytes()
    starts = [0] + [i + 1 for i, byte in enumerate(data[:-1]) if byte == 0x0A]
    assert len(index.entries(segment)) == len(starts)
    for start in starts[:50]:
        line = data[start:data.index(b"\n", start) + 1]
        value = json.dumps(json.loads(line)["tool_use_id"]).encode()
        assert start in (index.offsets(segment, value) or [])
    assert index.offsets(segment, b'"toolu_nowhere"') == []


def test_explain_of_an_old_call_reads_its_lines_not_the_segments(
        ledger: str, monkeypatch: pytest.MonkeyPatch) -> None:
    oldest = "toolu_010000000000000000000000"
    assert reader.explain(ledger, oldest) == _every(ledger, oldest)     # builds the indexes
    names = chain.segments(ledger)
    assert all(os.path.exists(index.path_for(os.path.join(ledger, n))) for n in names)
    scanned: list[str] = []
    read = [0]
    real_scan, real_pread = index.scan, os.pread

    def scan(path: str, needle: bytes) -> list[bytes]:
        scanned.append(os.path.basename(path))
        return real_scan(path, needle)

    def pread(fd: int, length: int, offset: int) -> bytes:
        data = real_pread(fd, length, offset)
        read[0] += len(data)
        return data

    monkeypatch.setattr(index, "scan", scan)
    monkeypatch.setattr(os, "pread", pread)
    assert reader.explain(ledger, oldest) == _every(ledger, oldest)
    assert scanned == [chain.LEDGER]        # the live ledger only; the segments by their index
    sealed = sum(os.path.getsize(os.path.join(ledger, n)) for n in names)
    assert read[0] < 20_000 * len(names) < sealed / 5


def test_a_stale_index_is_built_again(ledger: str) -> None:
    segment = os.path.join(ledger, chain.segments(ledger)[0])
    old, new = "toolu_010000000000000000000003", "toolu_019999999999999999999999"
    assert reader.explain(ledger, old)["decisions"]
    data = Path(segment).read_bytes()
    info = os.stat(segment)
    Path(segment).write_bytes(data.replace(old.encode(), new.encode()))    # same size
    os.utime(segment, ns=(info.st_atime_ns, info.st_mtime_ns))             # same mtime
    assert index.offsets(segment, json.dumps(new).encode()) is None       # ctime moved: stale
    assert reader.explain(ledger, new) == _every(ledger, new) and _every(ledger, new)["decisions"]
    assert reader.explain(ledger, old) == _every(ledger, old)


def test_an_index_that_does_not_fit_its_segment_makes_explain_scan(ledger: str) -> None:
    segment = os.path.join(ledger, chain.segments(ledger)[0])
    call = "toolu_010000000000000000000005"
    index.build(segment)
    table = bytearray(Path(index.path_for(segment)).read_bytes())
    for at in range(48 + 8, len(table), 16):        # every offset now points mid-line
        table[at:at + 8] = (7).to_bytes(8, "little")
    Path(index.path_for(segment)).write_bytes(bytes(table))
    assert reader.explain(ledger, call) == _every(ledger, call) and _every(ledger, call)["decisions"]
    Path(index.path_for(segment)).write_bytes(b"GLIDX")                      # torn
    assert reader.explain(ledger, call) == _every(ledger, call)


@pytest.mark.parametrize("tool_use_id", ['toolu_"quoted"', "toolu_back\\slash\\", "toolu_ünï",
                                         "toolu_\\\"both"])
def test_ids_that_json_escapes_are_found_through_the_index(gov: Path, tool_use_id: str) -> None:
    for i in range(30):
        extra = {"tool_use_id": tool_use_id} if i == 2 else {}
        chain.append(str(gov), pre_record(i, **extra), max_bytes=3000)
    assert len(chain.segments(str(gov))) >= 3
    first = os.path.join(str(gov), chain.segments(str(gov))[0])
    assert index.build(first)
    assert reader.explain(str(gov), tool_use_id) == _every(str(gov), tool_use_id)
    assert len(reader.explain(str(gov), tool_use_id)["decisions"]) == 1


def test_scan_finds_the_lines_holding_the_bytes(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    lines = [(b"x" * (n * 7919 % 300_000)) + (b"NEEDLE" if n % 3 == 0 else b"") + b"\n"
             for n in range(40)] + [b"torn NEEDLE"]
    path.write_bytes(b"".join(lines))
    assert index.scan(str(path), b"NEEDLE") == [line for line in lines if b"NEEDLE" in line]
