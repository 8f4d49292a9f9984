"""Hooks through MCP in the real Claude Code (`governance install --mcp-hooks`): Claude Code starts
the `governance-hooks` server from `.mcp.json`, its `mcp_tool` hooks call `decide_tool_call`, and
the tool's text is the hook's answer. The DO denial reaches the model with its reason, the context
line follows an allowed call, both are in the ledger, and the agent never sees the tool. A server
that cannot start is Claude Code's failure policy: fail-open by default, every call denied with
`--fail-closed`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from claude_runner import ClaudeRunner
from fake_api import Text, ToolUse
from test_scenarios import (
    DO,
    assert_web_denied_bash_ran,
    denied_ids,
    governance,
    tool_use_ids,
    web_then_bash,
)

HOOK_TOOL = "mcp__governance-hooks__decide_tool_call"


def mcp_governed(project: Path, *flags: str) -> None:
    governance("install", "--project", str(project), "--mcp-hooks", "--no-sandbox", *flags)
    governance("state", "set", DO, "--project", str(project))
    hooks = json.loads((project / ".claude" / "settings.json").read_text())["hooks"]
    assert hooks["PreToolUse"][0]["hooks"][0]["type"] == "mcp_tool"


def test_do_denial_through_mcp_reaches_the_model(claude: ClaudeRunner, project: Path) -> None:
    mcp_governed(project)
    run = claude.run(project, "mcp hooks scenario", web_then_bash("mcp-marker"))
    assert_web_denied_bash_ran(run, project, "mcp-marker")
    init = next(e for e in run.events if e.get("subtype") == "init")
    assert {"name": "governance-hooks", "status": "connected", "source": "project"} in \
        init["mcp_servers"]
    assert HOOK_TOOL not in init["tools"]   # hidden by the deny rule, yet the hooks call it
    offered = [t.get("name") for body in run.log.message_requests() for t in body.get("tools", [])]
    assert HOOK_TOOL not in offered


@pytest.mark.parametrize("flags, denied", [((), False), (("--fail-closed",), True)],
                         ids=["fail-open", "fail-closed"])
def test_a_server_that_cannot_start_is_claude_codes_failure_policy(
        claude: ClaudeRunner, project: Path, flags: tuple[str, ...], denied: bool) -> None:
    mcp_governed(project, *flags)
    path = project / ".mcp.json"
    entry = json.loads(path.read_text())
    entry["mcpServers"]["governance-hooks"]["args"][1] = "governance.server.not_there"
    path.write_text(json.dumps(entry))
    run = claude.run(project, "mcp server down", [
        [ToolUse("Bash", {"command": "touch down-marker", "description": "work"})],
        [Text("done")],
    ])
    assert run.returncode == 0, run.stderr[-2000:]
    (bash,) = tool_use_ids(run, "Bash")
    assert (bash in denied_ids(run)) is denied
    assert (project / "down-marker").exists() is not denied
