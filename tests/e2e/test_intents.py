"""Intents in the real Claude Code: with require_intent on, the model's Edit without an intent is
denied; it calls select_active_intent on our MCP server; its retried Edit runs; and
`governance trace show` names the intent and the session for the changed lines."""

from __future__ import annotations

import json
from pathlib import Path

from claude_runner import ClaudeRunner
from fake_api import Text, ToolUse
from test_scenarios import DO, decisions, denied_ids, governance, governed, tool_use_ids

INTENTS = """intents:
  - id: INT-007
    title: JWT auth
    owned_scope: [src/]
    constraints: Keep the public API.
"""


def test_edit_needs_an_intent_selected_through_mcp_then_is_traced(claude: ClaudeRunner,
                                                                   project: Path) -> None:
    governed(project, DO, "--mcp")
    matrix = project / ".claude" / "governance" / "activity_matrix.yaml"
    matrix.write_text("version: '1.0'\nextends: default\nsettings:\n  require_intent: true\n")
    governance("accept", "--project", str(project))
    (project / ".orchestration").mkdir()
    (project / ".orchestration" / "active_intents.yaml").write_text(INTENTS)
    source = project / "src" / "app.py"
    source.parent.mkdir()
    source.write_text("def token():\n    return None\n")
    edit = {"file_path": str(source), "old_string": "    return None",
            "new_string": "    return sign()"}
    run = claude.run(project, "intent scenario", [
        [ToolUse("Edit", edit)],
        # MCP tools are deferred in 2.1.330: the model loads the schema first, as the client says
        [ToolUse("ToolSearch", {"query": "select:mcp__governance__select_active_intent"})],
        [ToolUse("mcp__governance__select_active_intent", {"intent_id": "INT-007"})],
        [ToolUse("Edit", edit)],
        [Text("done")],
    ], args=["--mcp-config", str(project / ".mcp.json")])
    assert run.returncode == 0, run.stderr[-2000:]
    first, retry = tool_use_ids(run, "Edit")
    (select,) = tool_use_ids(run, "mcp__governance__select_active_intent")
    assert first in denied_ids(run) and retry not in denied_ids(run)
    said = json.dumps(run.log.tool_result(first)["content"])
    assert "No intent is active" in said and "INT-007 (JWT auth)" in said, said
    selected = json.dumps(run.log.tool_result(select)["content"])
    assert "src/" in selected and "Keep the public API." in selected, selected
    assert "return sign()" in source.read_text()
    session = decisions(project)[retry]["session"]
    shown = json.loads(governance("trace", "show", "src/app.py:2", "--json",
                                  "--project", str(project)))
    assert shown[0]["intent"] == "INT-007" and shown[0]["session"] == session
    assert shown[0]["unchanged"] is True
    assert "[INTENT: INT-007 JWT auth]" in run.log.text_after(retry)
