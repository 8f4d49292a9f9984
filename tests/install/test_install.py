"""install / uninstall: merge into settings.json without losing anything, never duplicating."""

from __future__ import annotations

import argparse
import json
import os
import shlex
from pathlib import Path

import pytest

from governance.commands import uninstall as uninstall_cmd
from governance.errors import InstallError
from tests.helpers import install

OTHER = {
    "permissions": {"allow": ["Bash(npm test)"], "deny": ["Read(.env)"]},
    "env": {"FOO": "1"},
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "lint-bash.sh"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "notify.sh"}]}],
    },
}


def settings_of(project: Path) -> dict:
    return json.loads((project / ".claude" / "settings.json").read_text())


def test_fresh_install_registers_three_events_with_absolute_paths(project: Path) -> None:
    data = install(project)
    for event in ("PreToolUse", "PostToolUse", "PostToolUseFailure"):
        (group,) = data["hooks"][event]
        assert group["matcher"] == "*"
        (handler,) = group["hooks"]
        argv = shlex.split(handler["command"])
        assert os.path.isabs(argv[0]) and os.access(argv[0], os.X_OK) and argv[1:3] == ["-I", "-S"]
        assert os.path.isfile(argv[3]) and handler["timeout"] == 30
        assert "onFailure" not in handler
    assert (project / ".claude" / "governance" / ".gitignore").exists()


def test_install_keeps_everything_else_and_is_idempotent(project: Path) -> None:
    path = project / ".claude" / "settings.json"
    path.write_text(json.dumps(OTHER))
    first = install(project)
    assert first["permissions"] == OTHER["permissions"] and first["env"] == OTHER["env"]
    assert first["hooks"]["Stop"] == OTHER["hooks"]["Stop"]
    assert first["hooks"]["PreToolUse"][0] == OTHER["hooks"]["PreToolUse"][0]
    backup = project / ".claude" / "governance" / "backups" / "settings.json.bak"
    assert json.loads(backup.read_text()) == OTHER
    second = install(project)
    assert second == first
    assert json.loads(backup.read_text()) == OTHER  # nothing changed, no new backup
    assert not list(path.parent.glob("settings.json.bak*"))


def test_fail_closed_then_fail_open_replaces_in_place(project: Path) -> None:
    closed = install(project, fail_closed=True)
    handler = closed["hooks"]["PreToolUse"][0]["hooks"][0]
    assert handler["onFailure"] == "block" and handler["command"].endswith("--on-error block")
    opened = install(project)
    assert len(opened["hooks"]["PreToolUse"]) == 1
    assert "onFailure" not in opened["hooks"]["PreToolUse"][0]["hooks"][0]


def test_invalid_settings_are_left_untouched(project: Path) -> None:
    path = project / ".claude" / "settings.json"
    path.write_text("{ not json")
    with pytest.raises(InstallError, match="not valid JSON") as exc:
        install(project)
    assert str(path) in exc.value.render()
    assert path.read_text() == "{ not json"


def test_missing_project_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InstallError, match="no such project folder"):
        install(tmp_path / "nope")


def test_uninstall_removes_only_ours(project: Path) -> None:
    (project / ".claude" / "settings.json").write_text(json.dumps(OTHER))
    install(project)
    uninstall_cmd.run(argparse.Namespace(project=str(project), project_dir=None))
    assert settings_of(project) == OTHER
    uninstall_cmd.run(argparse.Namespace(project=str(project), project_dir=None))  # no-op
    assert settings_of(project) == OTHER


@pytest.mark.parametrize("name", [".claude/settings.local.json", ".mcp.json"])
@pytest.mark.parametrize("command", ["install", "uninstall"])
def test_a_broken_file_stops_install_and_uninstall_before_anything_is_written(
        project: Path, name: str, command: str) -> None:
    if command == "uninstall":
        install(project, False, "--http", "--port", "9911")
    before = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}
    broken = project / name
    broken.write_text("{ not json")
    with pytest.raises(InstallError, match="not valid JSON") as caught:
        if command == "install":
            install(project, False, "--http", "--port", "9911")
        else:
            uninstall_cmd.run(argparse.Namespace(project=str(project), project_dir=None))
    assert str(broken) in caught.value.render()
    after = {p: p.read_bytes() for p in project.rglob("*") if p.is_file() and p != broken}
    assert after == {p: data for p, data in before.items() if p != broken}
