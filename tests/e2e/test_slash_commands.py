"""The /cycle and /governance-state commands in a real session, through our CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from claude_runner import ClaudeRunner
from fake_api import Text, ToolUse

REPO = Path(__file__).resolve().parents[2]


def _cli_shim(folder: Path) -> Path:
    """A `governance` executable that runs this checkout's CLI."""
    shim = folder / "governance"
    shim.write_text(f'#!/bin/sh\nPYTHONPATH={REPO} exec {sys.executable} -m governance.commands.cli "$@"\n')
    shim.chmod(0o755)
    return shim


def _install(project: Path, shim: Path) -> None:
    from governance.install.session_entries import slash_commands

    done = subprocess.run([str(shim), "install", "--project", str(project), "--no-sandbox"],
                          capture_output=True,
                          text=True, timeout=60, check=False, env=dict(os.environ))
    assert done.returncode == 0, done.stderr
    folder = project / ".claude" / "commands"
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in slash_commands(sys.executable).items():   # as install writes them
        (folder / name).write_text(text)


def _state(project: Path) -> dict[str, str]:
    data: dict[str, str] = json.loads(
        (project / ".claude" / "governance" / "state.json").read_text())
    return data


def test_cycle_command_sets_the_state_without_a_tool_call(
    claude: ClaudeRunner, project: Path, tmp_path: Path
) -> None:
    shim = _cli_shim(tmp_path)
    _install(project, shim)
    run = claude.run(project, "/cycle implementation-cycle/DO/WORK-9", [[Text("state noted")]],
                     permission_mode="default")
    assert run.returncode == 0, run.stderr
    state = _state(project)
    assert (state["cycle"], state["phase"], state["work_item"]) == \
        ("implementation-cycle", "DO", "WORK-9")
    (body,) = run.log.message_requests()
    sent = json.dumps(body["messages"])
    assert "implementation-cycle/DO/WORK-9 (state DO)" in sent  # the CLI's answer
    assert "Do not try to change the state yourself" in sent
    # No tool call happened: the expansion ran the CLI, so no PreToolUse was recorded.
    ledger = (project / ".claude" / "governance" / "ledger.jsonl").read_text()
    assert '"event":"PreToolUse"' not in ledger and '"event":"StateChange"' in ledger


def test_state_command_shows_the_state(claude: ClaudeRunner, project: Path, tmp_path: Path) -> None:
    shim = _cli_shim(tmp_path)
    _install(project, shim)
    subprocess.run([str(shim), "state", "set", "implementation-cycle/DO/W-2", "--project",
                    str(project)], check=True, capture_output=True, timeout=60)
    run = claude.run(project, "/governance-state", [[Text("summary")]], permission_mode="default")
    assert run.returncode == 0, run.stderr
    (body,) = run.log.message_requests()
    sent = json.dumps(body["messages"])
    assert "State: DO" in sent and "web-fetch" in sent


def test_the_model_cannot_run_the_cycle_command(
    claude: ClaudeRunner, project: Path, tmp_path: Path
) -> None:
    shim = _cli_shim(tmp_path)
    _install(project, shim)
    subprocess.run([str(shim), "state", "set", "implementation-cycle/DO/W-3", "--project",
                    str(project)], check=True, capture_output=True, timeout=60)
    run = claude.run(project, "model tries the slash command", [
        [ToolUse("Skill", {"skill": "cycle", "args": "investigation-cycle/EXPLORE"})],
        [Text("could not")],
    ])
    assert run.returncode == 0, run.stderr
    assert _state(project)["phase"] == "DO"
    (result,) = run.tool_results()
    assert result.get("is_error") is True
    assert "disable-model-invocation" in str(result["content"])  # refused before any hook
