"""The ledger's readers follow what they show, not the ledger's size: ``log --limit`` reads from the
end, ``explain`` searches the live ledger's bytes and each sealed segment's id index newest file
first, ``verify`` hashes only what is new; ``ledger archive`` moves segments without reading them
into memory."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from governance.bench.ledger import generate
from governance.ledger import checkpoint, reader
from governance.ledger.verifier import verify
from tests.helpers import REPO

RECORDS = 100_000


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> str:
    gov_dir = str(tmp_path_factory.mktemp("small") / "governance")
    generate(gov_dir, 3000, segment_bytes=200_000)       # a dozen sealed segments
    return gov_dir


def _exhaustive(gov_dir: str, keep: reader.Filter, limit: int) -> list[dict[str, object]]:
    return [rec for rec in reader.records(gov_dir) if keep(rec)][-limit:]


@given(st.integers(min_value=1, max_value=400), st.sampled_from([None, "PreToolUse", "PostToolUse"]),
       st.sampled_from([None, "2026-05-01T12:00:01", "2026-05-01T12:00:02.5"]),
       st.sampled_from([None, "8c1f3a52-0000"]))
@settings(max_examples=40, deadline=None)
def test_the_last_records_are_those_of_a_full_read(small: str, limit: int, event: str | None,
                                                   since: str | None, session: str | None) -> None:
    keep = reader.Filter(event=event, since=since, session=session)
    assert reader.query(small, keep, limit) == _exhaustive(small, keep, limit)


@given(st.integers(min_value=0, max_value=1600))
@settings(max_examples=30, deadline=None)
def test_explain_finds_what_a_full_read_finds(small: str, call: int) -> None:
    tool_use_id = f"toolu_01{call:022d}"
    found = reader.explain(small, tool_use_id)
    every = [rec for rec in reader.records(small) if rec.get("tool_use_id") == tool_use_id]
    assert found["decisions"] == [r for r in every if r.get("event") == "PreToolUse"]
    assert found["results"] == [r for r in every if r.get("event") != "PreToolUse"]


def test_lines_read_backwards_are_the_lines(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    lines = [b"x" * (n % 70_000) + b"\n" for n in range(0, 400_000, 9_973)] + [b"torn"]
    path.write_bytes(b"".join(lines))
    assert list(reader.backward(str(path))) == lines[::-1]


def test_verify_hashes_only_what_is_new_and_still_sees_an_edit(tmp_path: Path) -> None:
    gov_dir = str(tmp_path / "governance")
    generate(gov_dir, 2000, segment_bytes=150_000)
    first = verify(gov_dir, sources=[])
    assert first.ok and first.records == 2000
    known = checkpoint.read(gov_dir)
    assert known and "ledger.jsonl" not in known
    again = verify(gov_dir, sources=[])
    assert again.ok and again.records == 2000 and again.last_hash == first.last_hash
    segment = os.path.join(gov_dir, sorted(known)[1])
    data = bytearray(Path(segment).read_bytes())
    at = data.find(b'"state":"DO"', 1000)
    data[at + 9:at + 11] = b"XX"              # same size, same mtime afterwards
    info = os.stat(segment)
    Path(segment).write_bytes(bytes(data))
    os.utime(segment, ns=(info.st_atime_ns, info.st_mtime_ns))
    broken = verify(gov_dir, sources=[])
    assert not broken.ok and broken.problem is not None
    assert broken.problem.kind == "edited" and broken.problem.file == os.path.basename(segment)
    assert not verify(gov_dir, sources=[], full=True).ok


def _capped(args: list[str], project: Path, mib: int) -> subprocess.CompletedProcess[str]:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (mib << 20, mib << 20))

    return subprocess.run([sys.executable, "-m", "governance.commands.cli", *args,
                           "--project", str(project)], capture_output=True, text=True,
                          timeout=300, cwd=str(REPO), preexec_fn=limit, check=False,
                          env={**os.environ, "PYTHONPATH": str(REPO)})


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> Path:
    project = tmp_path_factory.mktemp("large") / "p"
    generate(str(project / ".claude" / "governance"), RECORDS, segment_bytes=8 << 20)
    (project / ".claude" / "settings.json").write_text("{}")
    return project


OLDEST = "toolu_010000000000000000000000"


@pytest.mark.parametrize("args", [["log", "--limit", "20"], ["log", "--limit", "20", "--json"],
                                  ["explain", "toolu_010000000000000000000007"],  # builds indexes
                                  ["explain", OLDEST],                            # uses them
                                  ["explain", f"toolu_01{RECORDS // 2 - 1:022d}"],
                                  ["ledger", "verify"],
                                  ["ledger", "archive", "--keep", "3"],
                                  ["ledger", "verify"],                   # across the archive
                                  ["explain", OLDEST]])                   # from the archive
def test_readers_stay_under_a_memory_cap_at_100k_records(large: Path, args: list[str]) -> None:
    done = _capped(args, large, 160)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "MemoryError" not in done.stderr and done.stdout
    if args[0] == "explain":
        assert "decision (PreToolUse" in done.stdout
    if args[-1] == "3":
        assert done.stdout.startswith("Archived 7 segment(s), seq 1 to "), done.stdout
        assert (large / ".claude" / "governance" / "archive" / "ledger.000001.idx").exists()
