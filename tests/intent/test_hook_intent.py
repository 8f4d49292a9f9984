"""``require_intent`` through the installed PreToolUse hook: denied without an intent, the context
line names the active one, out-of-scope writes denied, off by default."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from governance.intent import selection
from tests.helpers import hook_command, install, run_command, set_state
from tests.intent.test_spec_selection import declare


@pytest.fixture
def pre(project: Path) -> str:
    install(project)
    set_state(project, "implementation-cycle/DO")
    declare(project)
    return hook_command(project, "PreToolUse")


def require(project: Path) -> None:
    from tests.helpers import accept

    path = project / ".claude" / "governance" / "activity_matrix.yaml"
    path.write_text("version: '1.0'\nextends: default\nsettings:\n  require_intent: true\n")
    accept(project)


def call(project: Path, pre: str, tool: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    data = {"session_id": "s1", "transcript_path": "/dev/null", "cwd": str(project),
            "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input,
            "tool_use_id": "toolu_1", "permission_mode": "default"}
    done = run_command(pre, json.dumps(data))
    assert done.returncode == 0, done.stderr
    out: dict[str, Any] = json.loads(done.stdout)["hookSpecificOutput"]
    return out


def test_off_by_default(project: Path, pre: str) -> None:
    out = call(project, pre, "Write", {"file_path": str(project / "README.md"), "content": "x"})
    assert out.get("permissionDecision") != "deny" and "[INTENT:" not in out["additionalContext"]


def test_required(project: Path, pre: str) -> None:
    require(project)
    out = call(project, pre, "Write", {"file_path": str(project / "src/auth/a.py"), "content": ""})
    assert out["permissionDecision"] == "deny"
    assert "No intent is active" in out["permissionDecisionReason"]
    assert "WORK-064 (JWT auth)" in out["permissionDecisionReason"]
    assert "(rule: settings.require_intent)" in out["permissionDecisionReason"]
    read = call(project, pre, "Read", {"file_path": str(project / "src/auth/a.py")})
    assert read.get("permissionDecision") != "deny"
    selection.choose(str(project), "WORK-064", "s1", by="agent")
    out = call(project, pre, "Edit", {"file_path": str(project / "src/auth/a.py"),
                                      "old_string": "a", "new_string": "b"})
    assert out.get("permissionDecision") != "deny"
    assert out["additionalContext"].startswith("[STATE: DO] [INTENT: WORK-064 JWT auth] Blocked:")
    out = call(project, pre, "Bash", {"command": "echo x > docs/notes.md"})
    assert out["permissionDecision"] == "deny"
    assert "docs/notes.md is outside the scope of intent WORK-064" in \
        out["permissionDecisionReason"]
    ledger = [json.loads(line) for line in
              (project / ".claude/governance/ledger.jsonl").read_text().splitlines()]
    assert [r.get("intent") for r in ledger if r.get("event") == "PreToolUse"][-2:] == [
        "WORK-064", "WORK-064"]


def test_the_agent_selects_through_the_mcp_tool(project: Path, pre: str) -> None:
    from governance.decisions import mcp_server

    require(project)
    mcp_server.ServerConfig.project_dir = str(project)
    spec = mcp_server.select_active_intent("WORK-064")
    assert spec["owned_scope"] == ["src/auth/", "tests/auth/"] and spec["selected"]
    with pytest.raises(Exception, match=r"not an active intent\. Active intents: WORK-064"):
        mcp_server.select_active_intent("INT-002")
    post = hook_command(project, "PostToolUse")

    def completed(intent_id: str, session: str = "s1") -> None:
        data = {"session_id": session, "transcript_path": "/dev/null", "cwd": str(project),
                "hook_event_name": "PostToolUse",
                "tool_name": "mcp__governance__select_active_intent",
                "tool_input": {"intent_id": intent_id}, "tool_response": {"selected": True},
                "tool_use_id": "toolu_2"}
        assert run_command(post, json.dumps(data)).returncode == 0

    completed("INT-002")                                  # done: not bound
    assert selection.selected(str(project), "s1") == ("", "")
    completed("WORK-064")
    assert selection.selected(str(project), "s1") == ("WORK-064", "session")
    assert selection.selected(str(project), "s2") == ("", "")
    out = call(project, pre, "Write", {"file_path": str(project / "tests/auth/t.py"),
                                       "content": ""})
    assert out.get("permissionDecision") != "deny"


@pytest.mark.parametrize(("matrix_extra", "denied"), [("", True), ("  on_error: allow\n", False)])
def test_an_internal_error_fails_closed_unless_the_project_says_allow(
        project: Path, pre: str, matrix_extra: str, denied: bool) -> None:
    from tests.helpers import accept

    path = project / ".claude" / "governance" / "activity_matrix.yaml"
    path.write_text("version: '1.0'\nextends: default\nsettings:\n  require_intent: true\n"
                    + matrix_extra)
    accept(project)
    declare(project, "intents: [\n")                     # broken: the guard cannot read it
    data = {"session_id": "s1", "transcript_path": "/dev/null", "cwd": str(project),
            "hook_event_name": "PreToolUse", "tool_name": "Write",
            "tool_input": {"file_path": str(project / "src/auth/a.py"), "content": ""},
            "tool_use_id": "toolu_1", "permission_mode": "default"}
    done = run_command(pre, json.dumps(data))
    answer = json.loads(done.stdout)
    assert "active_intents.yaml" in answer["systemMessage"]
    assert (answer["hookSpecificOutput"].get("permissionDecision") == "deny") is denied
