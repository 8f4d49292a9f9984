"""The agent moves the cycle forward only with the user's approval: `governance state next` run by
the model is the primitive cycle-advance, whose default action is `ask`. What `ask` does depends
on how Claude Code runs; these runs record it for each permission mode (docs/shell.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from claude_runner import ClaudeRunner
from fake_api import Text, ToolUse
from test_scenarios import DO, REPO, denied_ids, governed, tool_use_ids

PLAN = "implementation-cycle/PLAN/WORK-064"


def _state(project: Path) -> str:
    return str(json.loads((project / ".claude" / "governance" / "state.json").read_text())["phase"])


def _advance(project: Path) -> str:
    return (f"PYTHONPATH={REPO} {sys.executable} -m governance.commands.cli state next "
            f"--project {project}")


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "bypassPermissions", "dontAsk",
                                  "plan", "auto"])
def test_ask_under_print_mode_refuses_in_every_permission_mode(
        claude: ClaudeRunner, project: Path, mode: str) -> None:
    governed(project, PLAN)
    run = claude.run(project, f"cycle advance in {mode}", [
        [ToolUse("Bash", {"command": _advance(project), "description": "next phase"})],
        [Text("done")],
    ], permission_mode=mode)
    assert run.returncode == 0, run.stderr[-2000:]
    (bash,) = tool_use_ids(run, "Bash")
    assert bash in denied_ids(run)  # under -p nobody can answer the prompt
    assert _state(project) == "PLAN"
    said = json.dumps(run.log.tool_result(bash)["content"])
    assert "next phase" in said, said


@pytest.mark.parametrize("mode", ["default", "bypassPermissions"])
def test_the_user_is_asked_in_the_terminal(claude: ClaudeRunner, project: Path,
                                           mode: str) -> None:
    governed(project, DO)
    run = claude.run_interactive(project, f"cycle advance interactive {mode}", [
        [ToolUse("Bash", {"command": _advance(project), "description": "next phase"})],
        [Text("done")],
    ], wait_for="Moving the cycle to its next phase",
        args=[] if mode == "default" else ["--permission-mode", mode])
    assert run.found, run.screen[-3000:]
    assert _state(project) == "DO"  # nothing ran while the prompt waits
