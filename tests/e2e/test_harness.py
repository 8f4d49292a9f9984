"""The harness itself: the real client, a tiny recording hook, the fake model."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from claude_runner import ClaudeRunner, ClaudeUnavailable, install_claude
from fake_api import Text, ToolUse

RECORDER = """\
import json, os, sys
payload = json.load(sys.stdin)
with open(os.path.join(os.path.dirname(__file__), "hook-calls.jsonl"), "a") as log:
    log.write(json.dumps(payload) + "\\n")
sys.exit(0)
"""


def _register_recorder(project: Path) -> Path:
    hook = project / "recorder.py"
    hook.write_text(RECORDER)
    settings = {"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [
        {"type": "command", "command": sys.executable, "args": [str(hook)]}]}]}}
    (project / ".claude" / "settings.json").write_text(json.dumps(settings))
    return project / "hook-calls.jsonl"


def test_bash_tool_runs_and_the_model_gets_its_result(
    claude: ClaudeRunner, project: Path
) -> None:
    calls = _register_recorder(project)
    run = claude.run(project, "smoke: touch the marker", [
        [ToolUse("Bash", {"command": "touch marker", "description": "make the marker"})],
        [Text("The marker is there.")],
    ])
    assert run.returncode == 0, run.stderr
    assert (project / "marker").exists()
    assert run.result["result"] == "The marker is there."
    # The hook saw the call as Claude Code reports it.
    recorded = [json.loads(line) for line in calls.read_text().splitlines()]
    assert [(c["hook_event_name"], c["tool_name"]) for c in recorded] == [("PreToolUse", "Bash")]
    assert recorded[0]["tool_input"]["command"] == "touch marker"
    # The second request to the model carries the tool result.
    bodies = run.log.conversation("smoke: touch the marker")
    assert len(bodies) == 2
    tool_use_id = recorded[0]["tool_use_id"]
    result = run.log.tool_result(tool_use_id)
    assert result.get("is_error") is not True
    last_user = bodies[1]["messages"][-1]
    assert any(b.get("tool_use_id") == tool_use_id for b in last_user["content"])


def test_network_sandbox_holds_only_loopback(claude: ClaudeRunner, project: Path) -> None:
    """Inside the sandbox the tools see one network interface: loopback."""
    if not claude.isolate:
        pytest.skip("e2e: `unshare -n` is not available; runs use plain loopback")
    run = claude.run(project, "sandbox probe", [
        [ToolUse("Bash", {"command": "cat /proc/net/dev", "description": "list interfaces"})],
        [Text("ok")],
    ])
    assert run.returncode == 0, run.stderr
    (result,) = run.tool_results()
    lines = str(result["content"]).splitlines()[2:]
    assert [line.split(":")[0].strip() for line in lines if ":" in line] == ["lo"]


def test_install_failure_is_reported_as_unavailable(tmp_path: Path) -> None:
    """No registry reachable: the fixture turns this into a skip, never a failure."""
    env = {
        "npm_config_registry": "http://127.0.0.1:9/",
        "npm_config_fetch_retries": "0",
        "npm_config_cache": str(tmp_path / "npm-cache"),
    }
    with pytest.MonkeyPatch.context() as patch:
        for key, value in env.items():
            patch.setenv(key, value)
        with pytest.raises(ClaudeUnavailable, match="installing @anthropic-ai/claude-code"):
            install_claude(tmp_path / "cache")
