"""Every payload recorded from Claude Code 2.1.330, through the hook in-process: whole answers."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from governance.hook import run as hook
from tests.helpers import PAYLOAD_DIR, accept, recorded, set_state

DO_LINE = ("[STATE: DO] Blocked: deploy-production, exfiltration, governance-admin, memory-search, "
           "memory-store, plan-enter, sandbox-escape, user-query, vcs-push, web-fetch, web-search")
HOW = ("It is allowed in EXPLORE, DESIGN, PLAN, CHECK, DONE: continue the DO work without it, or "
       "ask the user to change the cycle state: `governance state set CYCLE PHASE WORK-ID` or "
       "`governance state next` from a terminal.")
WEB = "DO is black-box: web research belongs in EXPLORE or DESIGN."

PRE = sorted(p.name for p in PAYLOAD_DIR.glob("PreToolUse-*.json"))
POST = sorted(p.name for p in PAYLOAD_DIR.glob("PostToolUse*.json"))


def _deny(tool: str, primitive: str) -> dict[str, Any]:
    return {"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": f"[STATE: DO] {tool} ({primitive}) is blocked: {WEB} {HOW} "
                                    f"(rule: rules.{primitive}.DO)",
        "additionalContext": f"{DO_LINE}\nDenied {tool} ({primitive}): {WEB}",
    }}


ALLOW = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": DO_LINE}}
EXPECTED_DO: dict[str, dict[str, Any]] = {name: ALLOW for name in PRE}
EXPECTED_DO["PreToolUse-WebFetch.json"] = _deny("WebFetch", "web-fetch")
EXPECTED_DO["PreToolUse-WebSearch.json"] = _deny("WebSearch", "web-search")


def run_pre(data: dict[str, Any] | bytes, argv: list[str] | None = None) -> tuple[int, str]:
    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    out = io.StringIO()
    code = hook.pre_tool_use(argv or [], stdin=io.BytesIO(raw), stdout=out)
    return code, out.getvalue()


def ledger_lines(project: Path) -> list[dict[str, Any]]:
    path = project / ".claude" / "governance" / "ledger.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_all_recorded_payloads_are_covered() -> None:
    assert len(PRE) == 15 and len(POST) >= 15


@pytest.mark.parametrize("name", PRE)
def test_pre_tool_use_in_do(project: Path, name: str) -> None:
    set_state(project, "implementation-cycle/DO/WORK-064")
    payload = recorded(name, project)
    code, stdout = run_pre(payload)
    assert code == 0
    assert json.loads(stdout) == EXPECTED_DO[name]
    record = ledger_lines(project)[-1]
    assert record["event"] == "PreToolUse" and record["tool_use_id"] == payload["tool_use_id"]
    assert (record["state"], record["cycle"], record["work_item"]) == (
        "DO", "implementation-cycle", "WORK-064")
    assert record["rule"]["key"].startswith(("rules.", "skill_"))
    if payload.get("agent_id"):
        assert record["agent_id"] == payload["agent_id"]


def test_write_warns_in_explore_and_the_model_sees_it(project: Path) -> None:
    set_state(project, "investigation-cycle/EXPLORE/WORK-1")
    code, stdout = run_pre(recorded("PreToolUse-Write.json", project))
    answer = json.loads(stdout)
    message = "EXPLORE is for investigation: prefer notes over new artifacts."
    line = ("[STATE: EXPLORE] Blocked: deploy-production, destructive, exfiltration, governance-admin, "
            "sandbox-escape, vcs-push")
    assert code == 0
    assert answer == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "additionalContext": f"{line}\nWarning for Write (file-write): {message}",
        },
        "systemMessage": f"governance [EXPLORE]: Warning for Write (file-write): {message} "
                         f"(rule: rules.file-write.EXPLORE in {_default()})",
    }


def _default() -> str:
    from governance.project import default_matrix_path

    return default_matrix_path()


@pytest.mark.parametrize("name", POST)
def test_post_tool_use_records_and_never_answers_a_decision(project: Path, name: str) -> None:
    set_state(project, "implementation-cycle/DO/WORK-064")
    payload = recorded(name, project)
    out = io.StringIO()
    code = hook.post_tool_use([], stdin=io.BytesIO(json.dumps(payload).encode()), stdout=out)
    assert (code, out.getvalue()) == (0, "")
    record = ledger_lines(project)[-1]
    assert record["event"] == payload["hook_event_name"]
    assert record["tool_use_id"] == payload["tool_use_id"]
    if payload["hook_event_name"] == "PostToolUseFailure":
        assert record["outcome"] == "failure" and record["error"] == payload["error"][:500]
    else:
        assert record["outcome"] == "success" and len(record["response_sha256"]) == 64


def test_pre_and_post_of_one_call_are_linked(project: Path) -> None:
    set_state(project, "implementation-cycle/DO/WORK-064")
    run_pre(recorded("PreToolUse-Bash.json", project))
    post = recorded("PostToolUse-Bash.json", project)
    hook.post_tool_use([], stdin=io.BytesIO(json.dumps(post).encode()), stdout=io.StringIO())
    pre_rec, post_rec = ledger_lines(project)[-2:]
    assert pre_rec["tool_use_id"] == post_rec["tool_use_id"] == post["tool_use_id"]
    assert post_rec["prev"] == pre_rec["hash"]


def _override(project: Path, text: str) -> None:
    path = project / ".claude" / "governance" / "activity_matrix.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    accept(project)  # as `governance validate` would


def test_grant_on_allow_emits_allow(project: Path) -> None:
    _override(project, "extends: default\nsettings:\n  grant_on_allow: true\n")
    set_state(project, "implementation-cycle/DO/WORK-064")
    code, stdout = run_pre(recorded("PreToolUse-Read.json", project))
    override = project / ".claude" / "governance" / "activity_matrix.yaml"
    assert (code, json.loads(stdout)) == (0, {"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "allow",
        "permissionDecisionReason": f"Allowed in DO by rules.file-read._all_states in {_default()}",
        "additionalContext": DO_LINE,
    }})
    assert override.exists()


def test_ask_and_redirect(project: Path) -> None:
    _override(project, "extends: default\nrules:\n  web-search:\n    DO: {action: redirect, "
                       "redirect_to: the research-notes agent, message: No live search in DO.}\n"
                       "  web-fetch:\n    DO: {action: ask, message: Fetching needs a human.}\n")
    set_state(project, "implementation-cycle/DO/WORK-064")
    override = project / ".claude" / "governance" / "activity_matrix.yaml"
    line = DO_LINE.replace("web-fetch, ", "")
    _, stdout = run_pre(recorded("PreToolUse-WebFetch.json", project))
    assert json.loads(stdout) == {"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "ask",
        "permissionDecisionReason": "Governance [DO]: WebFetch (web-fetch): Fetching needs a human. "
                                    f"(rule: rules.web-fetch.DO in {override})",
        "additionalContext": f"{line}\nWebFetch (web-fetch) needs the user's confirmation: "
                             "Fetching needs a human.",
    }}
    _, stdout = run_pre(recorded("PreToolUse-WebSearch.json", project))
    assert json.loads(stdout) == {"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": "[STATE: DO] WebSearch (web-search) is blocked: No live search "
                                    "in DO. Use the research-notes agent instead. "
                                    "(rule: rules.web-search.DO)",
        "additionalContext": f"{line}\nDenied WebSearch (web-search): No live search in DO.",
    }}
