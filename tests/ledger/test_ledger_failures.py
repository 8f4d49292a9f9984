"""Failures: a full disk, a read-only ledger or a held lock raise LedgerError and never leave a
partial record; the hooks fail open (or closed when configured) and PostToolUse never blocks."""

from __future__ import annotations

import errno
import fcntl
import io
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from governance import system
from governance.errors import LedgerError
from governance.hook import run as hook
from governance.ledger import chain as ledger
from governance.ledger.verifier import verify
from tests.helpers import PAYLOAD_DIR
from tests.ledger.records import pre_record


def _mount(target: Path, options: str) -> bool:
    target.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        return False
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(target)],
                          capture_output=True, check=False)
    return done.returncode == 0


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    mnt = tmp_path / "tiny"
    if not _mount(mnt, "size=64k,mode=0700"):
        pytest.skip("cannot mount a tmpfs here (not root or not permitted)")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_full_disk_real_tmpfs(tiny_disk: Path) -> None:
    gov = tiny_disk / "gov"
    written = 0
    with pytest.raises(LedgerError, match=r"cannot write the ledger|short write"):
        for i in range(10_000):
            ledger.append(str(gov), pre_record(i, reason="r" * 900))
            written += 1
    assert written > 10
    report = verify(str(gov))
    assert report.ok and report.records == written  # no partial record was left behind
    assert (gov / ledger.LEDGER).read_bytes().endswith(b"\n")


def test_full_disk_simulated(gov: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ledger.append(str(gov), pre_record(0))
    size = (gov / ledger.LEDGER).stat().st_size
    real_write = os.write

    def full(fd: int, data: Any) -> int:
        if len(data) > 200:  # the record, not the head
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(system, "write", full)
    with pytest.raises(LedgerError, match="No space left on device") as caught:
        ledger.append(str(gov), pre_record(1))
    assert caught.value.file == str(gov / ledger.LEDGER) and caught.value.fix
    monkeypatch.undo()
    assert (gov / ledger.LEDGER).stat().st_size == size
    assert ledger.append(str(gov), pre_record(2))["seq"] == 2


def test_short_write_is_rolled_back(gov: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ledger.append(str(gov), pre_record(0))
    real_write = os.write
    monkeypatch.setattr(system, "write", lambda fd, data: real_write(fd, data[:len(data) // 2])
                        if len(data) > 200 else real_write(fd, data))
    with pytest.raises(LedgerError, match="short write"):
        ledger.append(str(gov), pre_record(1))
    monkeypatch.undo()
    assert verify(str(gov)).ok


def test_read_only_ledger(tmp_path: Path) -> None:
    gov = tmp_path / "ro"
    ledger.append(str(gov), pre_record(0))
    if not _mount(tmp_path / "ro_mnt", "size=64k,mode=0700"):
        pytest.skip("cannot mount a tmpfs here")
    mnt = tmp_path / "ro_mnt"
    try:
        ledger.append(str(mnt), pre_record(0))
        subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
        with pytest.raises(LedgerError, match="Read-only file system"):
            ledger.append(str(mnt), pre_record(1))
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_read_only_simulated(gov: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ledger.append(str(gov), pre_record(0))
    real_open = os.open

    def read_only(path: Any, flags: int, *args: Any) -> int:
        if flags & (os.O_WRONLY | os.O_RDWR) and str(path).endswith(ledger.LEDGER):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(system, "open", read_only)
    with pytest.raises(LedgerError, match="Read-only file system"):
        ledger.append(str(gov), pre_record(1))
    monkeypatch.undo()
    assert verify(str(gov)).records == 1


def test_lock_timeout(gov: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ledger.append(str(gov), pre_record(0))
    monkeypatch.setattr(ledger, "LOCK_TIMEOUT_S", 0.05)
    fd = os.open(gov / ledger.LOCK, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        with pytest.raises(LedgerError, match=r"lock was not free within 0\.05 s"):
            ledger.append(str(gov), pre_record(1))
    finally:
        os.close(fd)
    assert ledger.append(str(gov), pre_record(1))["seq"] == 2


def _hook_payload(name: str, project: Path) -> bytes:
    data = json.loads((PAYLOAD_DIR / name).read_text())
    data["cwd"] = str(project)
    return json.dumps(data).encode()


def _run_hook(func: Any, payload: bytes, argv: list[str]) -> dict[str, Any]:
    out = io.StringIO()
    assert func(argv=argv, stdin=io.BytesIO(payload), stdout=out) == 0
    text = out.getvalue().strip()
    return json.loads(text) if text else {}


@pytest.fixture
def held_lock(project: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    gov = project / ".claude" / "governance"
    gov.mkdir(parents=True, exist_ok=True)
    monkeypatch.setattr(ledger, "LOCK_TIMEOUT_S", 0.05)
    fd = os.open(gov / ledger.LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    yield gov
    os.close(fd)


def test_hook_fails_open_when_the_ledger_lock_is_held(project: Path, held_lock: Path) -> None:
    answer = _run_hook(hook.pre_tool_use, _hook_payload("PreToolUse-Bash.json", project), [])
    assert "fail-open" in answer["systemMessage"] and "lock" in answer["systemMessage"]
    assert answer["hookSpecificOutput"].get("permissionDecision") != "deny"
    assert "lock was not free" in (held_lock / ledger.ERRORS).read_text()


def test_hook_fails_closed_when_configured(project: Path, held_lock: Path) -> None:
    answer = _run_hook(hook.pre_tool_use, _hook_payload("PreToolUse-Bash.json", project),
                       ["--on-error", "block"])
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "lock" in answer["hookSpecificOutput"]["permissionDecisionReason"]


def test_post_tool_use_never_blocks(project: Path, held_lock: Path) -> None:
    answer = _run_hook(hook.post_tool_use, _hook_payload("PostToolUse-Bash.json", project),
                       ["--on-error", "block"])
    assert "lock" in answer["systemMessage"]
    assert "permissionDecision" not in json.dumps(answer)
    assert answer.get("decision") != "block"
