"""Tamper evidence in the real client, where no sandbox runs: a script the model wrote rewrites
the state and the matrix, and the very next call is still governed by the accepted ones; the user
is told in the stream, the model in its context, and the ledger records it."""

from __future__ import annotations

import json
from pathlib import Path

from claude_runner import ClaudeRunner
from fake_api import Text, ToolUse
from test_sandbox import TAMPER
from test_scenarios import DO, decisions, denied_ids, governance, governed, tool_use_ids


def test_a_script_that_rewrites_governance_changes_nothing_on_the_next_call(
        claude: ClaudeRunner, project: Path) -> None:
    governed(project, DO)
    run = claude.run(project, "tamper evidence scenario", [
        [ToolUse("Write", {"file_path": str(project / "tools" / "w.py"), "content": TAMPER})],
        [ToolUse("Bash", {"command": "python3 tools/w.py", "description": "run the tool"})],
        [ToolUse("WebFetch", {"url": "https://example.com/doc", "prompt": "summarise"})],
        [Text("done")],
    ])
    assert run.returncode == 0, run.stderr[-2000:]
    (bash,) = tool_use_ids(run, "Bash")
    (fetch,) = tool_use_ids(run, "WebFetch")
    assert "state.json: written" in json.dumps(run.log.tool_result(bash)["content"])
    assert "DONE" in (project / ".claude" / "governance" / "state.json").read_text()
    # the model is still in DO, and told why
    assert fetch in denied_ids(run)
    reason = json.dumps(run.log.tool_result(fetch)["content"])
    assert "[STATE: DO]" in reason and "(web-fetch) is blocked" in reason, reason
    assert "accepted versions are in force" in run.log.text_after(fetch)
    # the user sees what changed and how to accept it
    notices = [e["content"] for e in run.events if e.get("subtype") == "informational"]
    assert any("keeps the accepted state implementation-cycle/DO/WORK-064" in n
               and "without `governance validate`" in n for n in notices), notices
    record = decisions(project)[fetch]
    assert record["unaccepted"] == ["matrix", "state"] and record["state"] == "DO"
    # accepting from a terminal ends it
    governance("accept", "--project", str(project))
    said = governance("state", "show", "--project", str(project))
    assert said.startswith("State: DONE")
