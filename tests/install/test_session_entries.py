"""The settings entries for the session hooks, the status line and the slash commands."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

from governance.install import settings
from governance.install.session_entries import (
    check,
    merge_statusline,
    remove_statusline,
    session_hook_entries,
    slash_commands,
    statusline_command,
    statusline_entry,
    write_slash_commands,
)

REPO = Path(__file__).resolve().parents[2]


def test_session_hook_entries_run_our_scripts_like_the_tool_hooks() -> None:
    entries = session_hook_entries("/venv/bin/python")
    assert sorted(entries) == ["SessionStart", "UserPromptSubmit"]
    for event, script in (("SessionStart", "session_start.py"),
                          ("UserPromptSubmit", "user_prompt_submit.py")):
        (handler,) = entries[event]
        assert handler["type"] == "command"
        assert handler["command"].startswith("/venv/bin/python -I ")
        assert handler["command"].endswith(f"hooks/{script}")
        assert "onFailure" not in handler  # a briefing never blocks a session
        assert settings.is_ours(handler)


def test_entries_merge_into_settings_and_are_removed_by_uninstall(tmp_path: Path) -> None:
    data = {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "echo hi"}]}]}}
    settings.add_ours(data, session_hook_entries(sys.executable))
    assert len(data["hooks"]["SessionStart"]) == 2
    assert settings.our_commands(data).keys() == {"SessionStart", "UserPromptSubmit"}
    settings.remove_ours(data)
    assert data == {"hooks": {"SessionStart": [
        {"hooks": [{"type": "command", "command": "echo hi"}]}]}}


def test_statusline_command_runs_the_hook_script_with_the_venv_python(tmp_path: Path) -> None:
    python = tmp_path / "bin" / "python"
    command = shlex.split(statusline_command(str(python)))
    assert command[:3] == [str(python), "-I", "-S"]
    assert command[3].endswith("statusline.py") and os.path.isfile(command[3])


def test_statusline_is_added_replaced_but_never_clobbered() -> None:
    ours = statusline_entry("/venv/bin/python")
    data: dict[str, object] = {}
    assert merge_statusline(data, ours)[0] is True and data["statusLine"] == ours
    assert merge_statusline(data, ours) == (False, "The governance status line is already "
                                                   "registered.")
    moved = {"type": "command", "command": "/new/bin/governance statusline", "padding": 0}
    assert merge_statusline(data, moved)[0] is True and data["statusLine"] == moved

    foreign = {"type": "command", "command": "~/.claude/my-line.sh"}
    data = {"statusLine": foreign}
    changed, message = merge_statusline(data, ours)
    assert not changed and data["statusLine"] == foreign
    assert "Kept the existing status line (~/.claude/my-line.sh)" in message
    assert merge_statusline(data, ours, replace=True)[0] is True and data["statusLine"] == ours


def test_remove_statusline_only_removes_ours() -> None:
    foreign = {"statusLine": {"type": "command", "command": "my-line"}}
    assert remove_statusline(foreign) is False and "statusLine" in foreign
    ours = {"statusLine": statusline_entry("/x/python")}
    assert remove_statusline(ours) is True and ours == {}


def test_slash_commands_call_the_cli_by_absolute_path(tmp_path: Path) -> None:
    commands = slash_commands(governance="/opt/venv/bin/governance")
    cycle = commands["cycle.md"]
    assert "!`/opt/venv/bin/governance state set $ARGUMENTS`" in cycle
    assert "allowed-tools: Bash(/opt/venv/bin/governance state set:*)" in cycle
    assert "disable-model-invocation: true" in cycle  # the model cannot run /cycle itself
    assert "!`/opt/venv/bin/governance state show`" in commands["governance-state.md"]
    written = write_slash_commands(str(tmp_path), "/opt/venv/bin/python")
    assert sorted(os.path.basename(p) for p in written) == ["cycle.md", "governance-state.md"]
    # install writes the interpreter, isolated (-I: the project's files never run in its place)
    cli = f"/opt/venv/bin/python -I {settings.hook_scripts_dir()}/launch.py governance.commands"
    text = (tmp_path / ".claude" / "commands" / "cycle.md").read_text()
    assert f"!`{cli} state set $ARGUMENTS`" in text
    assert f"allowed-tools: Bash({cli} state set:*)" in text


def test_check_reports_each_piece(tmp_path: Path) -> None:
    project = str(tmp_path)
    lines = check(project, {})
    assert [ok for ok, _, _ in lines] == [False] * len(lines)
    fixes = {fix for _, _, fix in lines}
    assert fixes == {"governance install --session-hooks", "governance install --statusline",
                     "governance install --slash-commands"}

    data: dict[str, object] = {}
    settings.add_ours(data, session_hook_entries(sys.executable))
    merge_statusline(data, statusline_entry(sys.executable))
    write_slash_commands(project, sys.executable)
    lines = check(project, data)
    assert all(ok for ok, _, _ in lines), lines
    assert any("SessionStart hook registered" in what for _, what, _ in lines)

    # a registration that cannot run is named by registration.broken (doctor: its fix is
    # `governance install --repair`), and check gives it no line of its own
    from governance.install.registration import broken

    data["statusLine"] = {"type": "command", "command": "/gone/governance statusline"}
    gone = broken(project, data)
    assert [(item.where, item.missing) for item in gone] == [("status line", "/gone/governance")]
    lines = check(project, data, {item.where for item in gone})
    assert all(ok for ok, _, _ in lines) and not any("status line" in w for _, w, _ in lines)


def test_plugin_commands_are_the_path_form() -> None:
    for name, text in slash_commands(governance="governance").items():
        assert (REPO / "commands" / name).read_text() == text
    assert json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())["name"] == "governance"
