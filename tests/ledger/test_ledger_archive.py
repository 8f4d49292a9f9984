"""`governance ledger archive`: old sealed segments move to an archive folder with their id indexes;
`verify` still spans them (hashing them while they are there, by their recorded ends once they are
not), the anchor still matches, `log` and `explain` still read them, and the agent may not run it."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from governance.commands import cli
from governance.errors import LedgerError
from governance.ledger import archive, archiver, chain, index, reader
from governance.ledger.verifier import verify
from tests.helpers import hook_command, install, recorded, run_command, set_state
from tests.ledger.records import pre_record

MAX = 2500          # a few records per segment


@pytest.fixture
def filled(gov: Path) -> str:
    """A ledger written by real appends (so its anchor knows every sealed segment)."""
    for i in range(60):
        chain.append(str(gov), pre_record(i, ts=f"2026-0{1 + i // 20}-15T10:00:00.000Z"),
                     max_bytes=MAX)
    assert len(chain.segments(str(gov))) >= 8
    return str(gov)


def _ids(gov_dir: str) -> list[str]:
    return [str(rec["tool_use_id"]) for rec in reader.records(gov_dir)]


def _cli(capsys: pytest.CaptureFixture[str], gov_dir: str, *argv: str) -> tuple[int, str]:
    project = str(Path(gov_dir).parent.parent)
    code = cli.main([*argv, "--project", project])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_archived_segments_are_verified_with_the_chain_and_still_read(filled: str) -> None:
    before = _ids(filled)
    sealed = chain.segments(filled)
    done = archiver.run(filled, keep=2)
    assert done.names == sealed[:-2] and done.first_seq == 1
    assert chain.segments(filled) == sealed[-2:]
    folder = os.path.join(filled, "archive")
    for name in done.names:
        assert os.path.exists(os.path.join(folder, name))
        assert index.offsets(os.path.join(folder, name), b'"x"') == []      # index moved, current
    report = verify(filled)
    assert report.ok and report.records == 60, report.problem
    assert report.anchors[0].state == "matches", report.anchors[0].line()
    assert any("archived segments verified with the chain" in note for note in report.notes)
    assert _ids(filled) == before                                  # log, stats: every record
    assert reader.explain(filled, "toolu_0000")["decisions"][0]["seq"] == 1
    full = verify(filled, full=True)
    assert full.ok and full.records == 60


def test_absent_archived_segments_are_verified_by_their_recorded_ends(
        filled: str, tmp_path: Path) -> None:
    done = archiver.run(filled, keep=3)
    shutil.move(os.path.join(filled, "archive"), tmp_path / "offsite")
    report = verify(filled)
    assert report.ok and report.records == 60, report.problem
    assert report.anchors[0].state == "matches", report.anchors[0].line()
    count = len(done.names)
    assert any(note.startswith(f"{count} segments archived, verified by their recorded ends")
               for note in report.notes), report.notes
    assert reader.explain(filled, "toolu_0000")["decisions"] == []
    assert reader.explain(filled, "toolu_0059")["decisions"]
    shutil.move(tmp_path / "offsite", os.path.join(filled, "archive"))     # brought back
    assert verify(filled, full=True).ok


def test_a_chain_that_does_not_start_where_the_archive_ended_fails(filled: str) -> None:
    archiver.run(filled, keep=3)
    shutil.rmtree(os.path.join(filled, "archive"))
    os.unlink(os.path.join(filled, chain.segments(filled)[0]))     # the first segment kept
    report = verify(filled, sources=[])
    assert not report.ok and report.problem is not None and report.problem.kind == "deleted"
    manifest = json.loads(Path(filled, archive.MANIFEST).read_text())
    last = max(manifest["segments"])
    assert f"seq jumps from {manifest['segments'][last]['last_seq']}" in report.problem.detail


def test_a_manifest_whose_ends_do_not_join_fails(filled: str) -> None:
    archiver.run(filled, keep=3)
    shutil.rmtree(os.path.join(filled, "archive"))
    path = Path(filled, archive.MANIFEST)
    manifest = json.loads(path.read_text())
    second = sorted(manifest["segments"])[1]
    manifest["segments"][second]["first_seq"] += 1
    path.write_text(json.dumps(manifest))
    report = verify(filled, sources=[])
    assert not report.ok and report.problem is not None
    assert report.problem.file == second and report.problem.kind == "deleted"
    del manifest["segments"][second]["last_hash"]
    path.write_text(json.dumps(manifest))
    assert verify(filled, sources=[]).problem.file == archive.MANIFEST  # type: ignore[union-attr]
    path.write_text("{not json")
    broken = verify(filled, sources=[])
    assert not broken.ok and broken.problem is not None and broken.problem.file == archive.MANIFEST
    with pytest.raises(LedgerError, match="not an archive manifest"):
        list(reader.records(filled))


def test_a_tampered_archived_segment_is_found(filled: str) -> None:
    done = archiver.run(filled, keep=2)
    assert verify(filled).ok
    victim = Path(filled, "archive", done.names[1])
    data = victim.read_bytes()
    victim.write_bytes(data.replace(b"is allowed in DO", b"is allowed in DX", 1))
    report = verify(filled, sources=[])
    assert not report.ok and report.problem is not None
    assert report.problem.file == done.names[1] and report.problem.kind == "edited"


def test_archive_before_a_date_and_to_another_folder(filled: str, tmp_path: Path) -> None:
    target = tmp_path / "cold"
    done = archiver.run(filled, before="2026-02-01", to=str(target))
    assert done.names and all(
        reader.explain(filled, f"toolu_{i:04d}")["decisions"] for i in (0, 19))
    manifest = json.loads(Path(filled, archive.MANIFEST).read_text())["segments"]
    assert {entry["dir"] for entry in manifest.values()} == {str(target)}
    assert all(entry["last_ts"] < "2026-02-01" for entry in manifest.values())
    assert sorted(os.listdir(target)) == sorted(
        [*done.names, *(n.replace(".jsonl", ".idx") for n in done.names)])
    assert verify(filled).ok


def test_an_interrupted_archive_is_finished_by_running_it_again(filled: str,
                                                                monkeypatch: pytest.MonkeyPatch
                                                                ) -> None:
    calls = [0]
    real = archiver._move

    def crash_on_third(source: str, target: str) -> None:
        calls[0] += 1
        if calls[0] == 3:
            raise KeyboardInterrupt
        real(source, target)

    monkeypatch.setattr(archiver, "_move", crash_on_third)
    with pytest.raises(KeyboardInterrupt):
        archiver.run(filled, keep=2)
    assert verify(filled).ok                       # listed in the manifest, still here: read
    monkeypatch.setattr(archiver, "_move", real)
    again = archiver.run(filled, keep=2)
    assert again.names and verify(filled).ok
    assert archiver.run(filled, keep=2).names == []          # idempotent
    assert len(chain.segments(filled)) == 2


def test_archive_refuses_a_ledger_that_does_not_verify(filled: str) -> None:
    first = Path(filled, chain.segments(filled)[0])
    first.write_bytes(first.read_bytes().replace(b"sess-0001", b"sess-0002", 1))
    with pytest.raises(LedgerError, match="does not verify"):
        archiver.run(filled, keep=2)
    assert not Path(filled, archive.MANIFEST).exists() and not Path(filled, "archive").exists()


def test_the_command_says_what_it_did_and_refuses_bad_input(
        filled: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _cli(capsys, filled, "ledger", "archive", "--before", "last tuesday")
    assert code == 1 and "not a time: 'last tuesday'" in out and "--before 90d" in out
    code, out = _cli(capsys, filled, "ledger", "archive", "--keep", "0")
    assert code == 1 and "at least the newest sealed segment stays" in out
    code, out = _cli(capsys, filled, "ledger", "archive", "--before", "2020-01-01")
    assert code == 0 and out.startswith("Nothing to archive: no sealed segment")
    code, out = _cli(capsys, filled, "ledger", "archive", "--keep", "3")
    assert code == 0 and out.startswith("Archived ") and archive.MANIFEST in out, out
    code, out = _cli(capsys, filled, "ledger", "archive", "--keep", "3")
    assert code == 0 and "Nothing to archive" in out
    code, out = _cli(capsys, filled, "ledger", "archive", "--keep", "3", "--to", filled)
    assert code == 1 and "the governance folder itself" in out
    code, out = _cli(capsys, filled, "ledger", "verify")
    assert code == 0 and "archived segments verified with the chain" in out, out
    with pytest.raises(SystemExit):
        cli.main(["ledger", "archive"])                      # --before or --keep


def test_the_agent_may_not_archive_the_ledger(project: Path) -> None:
    install(project)
    set_state(project, "implementation-cycle/DO/WORK-7")
    payload = recorded("PreToolUse-Bash.json", project)
    for command in ("governance ledger archive --keep 1", "governance ledger archive --before 1d"):
        payload["tool_input"]["command"] = command
        out = json.loads(run_command(hook_command(project), json.dumps(payload)).stdout)
        assert out["hookSpecificOutput"].get("permissionDecision") == "deny", out
        assert "(governance-admin)" in out["hookSpecificOutput"]["permissionDecisionReason"], out


def test_explain_says_when_archived_segments_are_not_here(
        filled: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    archiver.run(filled, keep=3)
    code, out = _cli(capsys, filled, "explain", "toolu_0000")
    assert code == 0 and "decision (PreToolUse" in out
    shutil.move(os.path.join(filled, "archive"), tmp_path / "offsite")
    code, out = _cli(capsys, filled, "explain", "toolu_0000")
    assert code == 1 and "archived segment(s) are not on this machine" in out, out
