"""A deny names commands that exist where the user is: ``governance state ...`` always, the
project's ``just`` recipes only where its justfile has ours, ``select_active_intent`` only with our
MCP server registered. Through the hook in-process and through the exact installed command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers import REPO, hook_command, install, recorded, run_command, set_state
from tests.hook.test_recorded import run_pre
from tests.intent.test_hook_intent import call, require
from tests.intent.test_spec_selection import declare
from tests.policy.test_remedy import OTHER_NEXT, OURS

CLI = "`governance state set CYCLE PHASE WORK-ID` or `governance state next` from a terminal"
RECIPES = "this project's `just set-cycle CYCLE PHASE WORK-ID` or `just next`"


def _answer(project: Path, payload: dict[str, Any]) -> dict[str, Any]:
    code, stdout = run_pre(payload)
    assert code == 0
    out: dict[str, Any] = json.loads(stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny"
    return out


def _web_fetch_in_do(project: Path) -> dict[str, Any]:
    set_state(project, "implementation-cycle/DO/WORK-064")
    return _answer(project, recorded("PreToolUse-WebFetch.json", project))


def _admin(project: Path) -> dict[str, Any]:
    """The agent tries to set the state itself: governance-admin."""
    payload = recorded("PreToolUse-Bash.json", project)
    payload["tool_input"] = {"command": "governance state set implementation-cycle DO WORK-1"}
    return _answer(project, payload)


@pytest.mark.parametrize("deny", [_web_fetch_in_do, _admin])
def test_no_justfile_names_the_cli_and_no_just(project: Path, deny: Any) -> None:
    out = deny(project)
    assert CLI in out["permissionDecisionReason"]
    assert "just" not in out["permissionDecisionReason"] + out["additionalContext"]


@pytest.mark.parametrize("deny", [_web_fetch_in_do, _admin])
def test_a_justfile_with_our_recipes_is_named_as_well(project: Path, deny: Any) -> None:
    (project / "justfile").write_text(OURS)
    reason = deny(project)["permissionDecisionReason"]
    assert f"{CLI}, or {RECIPES}" in reason


@pytest.mark.parametrize("deny", [_web_fetch_in_do, _admin])
def test_a_justfile_whose_next_does_something_else_is_not_named(project: Path,
                                                                deny: Any) -> None:
    (project / "justfile").write_text(OTHER_NEXT)
    reason = deny(project)["permissionDecisionReason"]
    assert CLI in reason and "just" not in reason


def test_the_installed_command_names_what_the_project_has(project: Path) -> None:
    install(project)
    pre = hook_command(project)
    set_state(project, "implementation-cycle/DO/WORK-064")
    data = json.dumps(recorded("PreToolUse-WebFetch.json", project))
    first = json.loads(run_command(pre, data).stdout)["hookSpecificOutput"]
    assert CLI in first["permissionDecisionReason"] and "just" not in first[
        "permissionDecisionReason"]
    (project / "Justfile").write_text(OURS)
    second = json.loads(run_command(pre, data).stdout)["hookSpecificOutput"]
    assert f"{CLI}, or {RECIPES}" in second["permissionDecisionReason"]


def _strings(node: Any) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [s for key, value in node.items() if key in ("message", "reason") or
                not isinstance(value, str) for s in _strings(value)]
    if isinstance(node, list):
        return [s for item in node for s in _strings(item)]
    return []


def test_packaged_messages_name_no_project_specific_command() -> None:
    """Every message and reason of the packaged matrix is project-neutral: the code appends the
    commands the project has."""
    texts = _strings(yaml.safe_load((REPO / "config" / "activity_matrix.yaml").read_text()))
    assert len(texts) > 50
    for text in texts:
        assert "just set-cycle" not in text and "just next" not in text, text
        assert "select_active_intent" not in text, text


@pytest.fixture
def pre(project: Path) -> str:
    install(project)
    set_state(project, "implementation-cycle/DO")
    declare(project)
    require(project)
    return hook_command(project, "PreToolUse")


def test_intent_denial_without_our_mcp_server_names_the_cli(project: Path, pre: str) -> None:
    out = call(project, pre, "Write", {"file_path": str(project / "src/auth/a.py"), "content": ""})
    reason = out["permissionDecisionReason"]
    assert "Ask the user to select one from a terminal (`governance intent select ID`), then " \
           "retry." in reason
    assert "select_active_intent" not in reason


def test_intent_denial_with_our_mcp_server_names_its_tool(project: Path, pre: str) -> None:
    install(project, False, "--mcp")
    out = call(project, pre, "Write", {"file_path": str(project / "src/auth/a.py"), "content": ""})
    assert ("Select one with the select_active_intent tool "
            "(mcp__governance__select_active_intent), then retry.") in out["permissionDecisionReason"]


def test_out_of_scope_denial_names_how_to_select_another(project: Path, pre: str) -> None:
    from governance.intent import selection

    selection.choose(str(project), "WORK-064", "s1", by="agent")
    out = call(project, pre, "Write", {"file_path": str(project / "docs/x.md"), "content": ""})
    assert ("Stay inside it, ask the user to select another intent from a terminal "
            "(`governance intent select ID`), or ask the user to widen the scope."
            ) in out["permissionDecisionReason"]
