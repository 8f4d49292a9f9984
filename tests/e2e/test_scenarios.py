"""Governance in the real Claude Code: each scenario checks what the tool did (a marker file)
and what the next request to the model contained.

Every project is set up by our own CLI: ``governance install`` writes its .claude/settings.json
and ``governance state set`` its cycle state.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from claude_runner import ClaudeRun, ClaudeRunner, FollowUp
from fake_api import Text, ToolUse

REPO = Path(__file__).resolve().parents[2]
DO = "implementation-cycle/DO/WORK-064"
EXPLORE = "investigation-cycle/EXPLORE"
QUESTION = {"questions": [{
    "question": "Which database?", "header": "Database", "multiSelect": False,
    "options": [{"label": "sqlite", "description": "file"},
                {"label": "postgres", "description": "server"}],
}]}


def governance(*args: str) -> str:
    """Run our CLI from this checkout, as a user would from a terminal."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, "-m", "governance.commands.cli", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, f"governance {' '.join(args)}: {done.stdout}{done.stderr}"
    return done.stdout


def governed(project: Path, state: str | None, *install_args: str) -> Path:
    """Installed (without the sandbox unless ``install_args`` ask for it), in ``state``."""
    sandbox = [] if {"--sandbox", "--no-sandbox"} & set(install_args) else ["--no-sandbox"]
    governance("install", "--project", str(project), *sandbox, *install_args)
    if state is not None:
        governance("state", "set", state, "--project", str(project))
    return project


def ledger(project: Path) -> list[dict[str, Any]]:
    path = project / ".claude" / "governance" / "ledger.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def decisions(project: Path) -> dict[str, dict[str, Any]]:
    """PreToolUse ledger records by tool_use_id."""
    return {r["tool_use_id"]: r for r in ledger(project) if r.get("event") == "PreToolUse"}


def tool_use_ids(run: ClaudeRun, name: str) -> list[str]:
    ids = []
    for body in run.log.message_requests():
        for message in body.get("messages", []):
            for block in message.get("content") if isinstance(message.get("content"), list) else []:
                if block.get("type") == "tool_use" and block.get("name") == name:
                    ids.append(block["id"])
    return list(dict.fromkeys(ids))


def denied_ids(run: ClaudeRun) -> set[str]:
    return {d["tool_use_id"] for d in run.permission_denials}


def web_then_bash(marker: str) -> list[list[Any]]:
    """The model fetches a page (blocked in DO), then touches ``marker`` with Bash."""
    return [[ToolUse("WebFetch", {"url": "https://example.com/doc", "prompt": "summarise"})],
            [ToolUse("Bash", {"command": f"touch {marker}", "description": "work"})],
            [Text("finished")]]


def assert_web_denied_bash_ran(run: ClaudeRun, project: Path, marker: str) -> None:
    """In DO, through whichever transport carries the hooks: the fetch is denied with its reason,
    the Bash call runs with the context line after it, and the ledger has both decisions and the
    Bash call's PostToolUse."""
    assert run.returncode == 0, run.stderr[-2000:]
    (fetch,) = tool_use_ids(run, "WebFetch")
    (bash,) = tool_use_ids(run, "Bash")
    said = json.dumps(run.log.tool_result(fetch)["content"])
    assert fetch in denied_ids(run) and "[STATE: DO] WebFetch (web-fetch) is blocked" in said
    assert (project / marker).exists() and bash not in denied_ids(run)
    assert "[STATE: DO] Blocked: " in run.log.text_after(bash)
    recorded = decisions(project)
    assert recorded[fetch]["decision"] == "deny" and recorded[bash]["action"] == "allow"
    assert any(r.get("event") == "PostToolUse" and r.get("tool_use_id") == bash
               for r in ledger(project))


def test_do_state_denies_web_and_questions_and_briefs_reads(
    claude: ClaudeRunner, project: Path
) -> None:
    governed(project, DO)
    (project / "notes.txt").write_text("NOTES-CONTENT-42\n")
    run = claude.run(project, "do-state scenario", [
        [ToolUse("WebFetch", {"url": "https://example.com/doc", "prompt": "summarise"})],
        [ToolUse("AskUserQuestion", QUESTION)],
        [ToolUse("Read", {"file_path": str(project / "notes.txt")})],
        [ToolUse("Bash", {"command": "touch do-marker", "description": "work"})],
        [Text("finished")],
    ], args=["--permission-prompt-tool", "stdio"])  # offers AskUserQuestion under -p
    assert run.returncode == 0, run.stderr
    (fetch,) = tool_use_ids(run, "WebFetch")
    (ask,) = tool_use_ids(run, "AskUserQuestion")
    (read,) = tool_use_ids(run, "Read")
    (bash,) = tool_use_ids(run, "Bash")

    for denied, primitive in ((fetch, "web-fetch"), (ask, "user-query")):
        result = run.log.tool_result(denied)
        assert result["is_error"] is True
        text = json.dumps(result["content"])
        assert "[STATE: DO]" in text and f"({primitive}) is blocked" in text, text
        assert "DO is black-box" in text
        # the project has no justfile: the reason names the CLI that works anywhere, no recipe
        assert "`governance state set CYCLE PHASE WORK-ID`" in text and "just " not in text
    assert {fetch, ask} <= denied_ids(run)

    read_text = run.log.text_after(read)
    assert "NOTES-CONTENT-42" in read_text
    assert "[STATE: DO] Blocked: " in read_text and "web-fetch" in read_text
    assert (project / "do-marker").exists()

    recorded = decisions(project)
    assert recorded[fetch]["decision"] == "deny" and recorded[ask]["decision"] == "deny"
    assert recorded[read]["action"] == "allow" and recorded[bash]["action"] == "allow"


def test_explore_state_lets_write_run_with_a_warning(claude: ClaudeRunner, project: Path) -> None:
    governed(project, EXPLORE)
    target = project / "draft.md"
    run = claude.run(project, "explore-state scenario", [
        [ToolUse("Write", {"file_path": str(target), "content": "draft\n"})],
        [Text("written")],
    ], permission_mode="acceptEdits")
    assert run.returncode == 0, run.stderr
    assert target.read_text() == "draft\n"
    (write,) = tool_use_ids(run, "Write")
    assert run.log.tool_result(write).get("is_error") is not True
    context = run.log.text_after(write)
    assert "[STATE: EXPLORE]" in context
    assert "Warning for Write (file-write): EXPLORE is for investigation" in context
    # The user sees the warning too (systemMessage), in the stream.
    notices = [e["content"] for e in run.events if e.get("subtype") == "informational"]
    assert any("governance [EXPLORE]" in n and "Write" in n for n in notices), notices
    assert decisions(project)[write]["action"] == "warn"


def test_an_allowed_call_grants_no_permission(claude: ClaudeRunner, project: Path) -> None:
    """In default mode Claude Code refuses an unapproved file-writing command; our hook, which
    allows it in DO, must not turn that into an approval."""
    governed(project, DO)
    run = claude.run(project, "pass-grants-nothing scenario", [
        [ToolUse("Bash", {"command": "touch granted-marker", "description": "write"})],
        [Text("stopped")],
    ], permission_mode="default")
    assert run.returncode == 0, run.stderr
    (bash,) = tool_use_ids(run, "Bash")
    assert not (project / "granted-marker").exists()
    assert bash in denied_ids(run)
    result = run.log.tool_result(bash)
    assert result["is_error"] is True
    assert "[STATE: DO]" in run.log.text_after(bash)  # our hook ran and added only context
    recorded = decisions(project)[bash]
    assert recorded["action"] == "allow" and recorded["decision"] == "none"


def test_edit_of_the_hook_settings_is_denied(claude: ClaudeRunner, project: Path) -> None:
    governed(project, DO)
    settings = project / ".claude" / "settings.json"
    before = settings.read_text()
    run = claude.run(project, "self-protection edit scenario", [
        [ToolUse("Read", {"file_path": str(settings)})],
        # Claude Code checks an edit (unique match, valid settings afterwards) before any hook
        # runs, so only a valid edit reaches the hook: switching every hook off is one.
        [ToolUse("Edit", {"file_path": str(settings), "old_string": '"hooks": {',
                          "new_string": '"disableAllHooks": true, "hooks": {'})],
        [Text("gave up")],
    ])
    assert run.returncode == 0, run.stderr
    assert settings.read_text() == before
    (edit,) = tool_use_ids(run, "Edit")
    assert edit in denied_ids(run)
    text = json.dumps(run.log.tool_result(edit)["content"])
    assert "governance-admin" in text and "may not change its own governance" in text


def _shell_analysis_landed() -> bool:
    from governance.commands.cli import COMMANDS

    return "explain-command" in COMMANDS


@pytest.mark.skipif(not _shell_analysis_landed(),
                    reason="e2e: waits for shell analysis (`governance explain-command`)")
def test_bash_state_change_by_the_model_is_denied(claude: ClaudeRunner, project: Path) -> None:
    governed(project, DO)
    state_file = project / ".claude" / "governance" / "state.json"
    before = state_file.read_text()
    command = "just set-cycle investigation-cycle EXPLORE WORK-1 && touch shell-marker"
    run = claude.run(project, "self-protection bash scenario", [
        [ToolUse("Bash", {"command": command, "description": "switch state"})],
        [Text("gave up")],
    ])
    assert run.returncode == 0, run.stderr
    (bash,) = tool_use_ids(run, "Bash")
    assert bash in denied_ids(run)
    assert not (project / "shell-marker").exists()
    assert state_file.read_text() == before
    assert "governance-admin" in json.dumps(run.log.tool_result(bash)["content"])


def _corrupt_matrix(project: Path) -> None:
    """A matrix governance cannot read although it is the accepted one (as after an upgrade that
    no longer reads it): an internal failure, not a change made behind governance's back."""
    from governance.policy import seal

    override = project / ".claude" / "governance" / "activity_matrix.yaml"
    override.write_text("rules: [this is: not, a: matrix\n")
    seal.accept_matrix(str(project), override.read_bytes())


def test_fail_open_runs_the_tool_and_tells_the_user(claude: ClaudeRunner, project: Path) -> None:
    governed(project, DO)
    _corrupt_matrix(project)
    run = claude.run(project, "fail-open scenario", [
        [ToolUse("Bash", {"command": "touch open-marker", "description": "work"})],
        [Text("ran")],
    ])
    assert run.returncode == 0, run.stderr
    assert (project / "open-marker").exists()
    notices = [e["content"] for e in run.events if e.get("subtype") == "informational"]
    assert any("NOT checked (fail-open)" in n for n in notices), notices
    (bash,) = tool_use_ids(run, "Bash")
    assert "[GOVERNANCE ERROR]" in run.log.text_after(bash)


def test_fail_closed_blocks_the_tool(claude: ClaudeRunner, project: Path) -> None:
    governed(project, DO, "--fail-closed")
    hooks = json.loads((project / ".claude" / "settings.json").read_text())["hooks"]
    assert hooks["PreToolUse"][0]["hooks"][0]["onFailure"] == "block"
    _corrupt_matrix(project)
    run = claude.run(project, "fail-closed scenario", [
        [ToolUse("Bash", {"command": "touch closed-marker", "description": "work"})],
        [Text("blocked")],
    ])
    assert run.returncode == 0, run.stderr
    assert not (project / "closed-marker").exists()
    (bash,) = tool_use_ids(run, "Bash")
    assert bash in denied_ids(run)
    assert "set to fail closed" in json.dumps(run.log.tool_result(bash)["content"])


def test_parallel_tool_calls_are_each_decided_and_recorded(
    claude: ClaudeRunner, project: Path
) -> None:
    governed(project, DO)
    (project / "a.txt").write_text("A\n")
    run = claude.run(project, "parallel scenario", [
        [ToolUse("Read", {"file_path": str(project / "a.txt")}),
         ToolUse("Bash", {"command": "touch p1", "description": "one"}),
         ToolUse("WebFetch", {"url": "https://example.com", "prompt": "x"}),
         ToolUse("Bash", {"command": "touch p2", "description": "two"})],
        [Text("all four")],
    ])
    assert run.returncode == 0, run.stderr
    assert (project / "p1").exists() and (project / "p2").exists()
    ids = [*tool_use_ids(run, "Read"), *tool_use_ids(run, "Bash"), *tool_use_ids(run, "WebFetch")]
    assert len(ids) == 4
    recorded = decisions(project)
    assert set(ids) <= set(recorded)
    (fetch,) = tool_use_ids(run, "WebFetch")
    assert recorded[fetch]["decision"] == "deny"
    finished = {r["tool_use_id"] for r in ledger(project)
                if r.get("event") in ("PostToolUse", "PostToolUseFailure")}
    assert set(ids) - {fetch} <= finished
    assert denied_ids(run) == {fetch}


def test_subagent_tool_calls_are_governed(claude: ClaudeRunner, project: Path) -> None:
    governed(project, DO)
    sub_prompt = "SUBAGENT: research and build"
    run = claude.run(project, "subagent scenario", [
        [ToolUse("Agent", {"description": "delegate", "prompt": sub_prompt,
                           "subagent_type": "general-purpose", "run_in_background": False})],
        [Text("delegated")],
    ], other_scripts={sub_prompt: [
        [ToolUse("WebFetch", {"url": "https://example.com/x", "prompt": "y"})],
        [ToolUse("Bash", {"command": "touch sub-marker", "description": "build"})],
        [Text("sub-agent done")],
    ]})
    assert run.returncode == 0, run.stderr
    assert (project / "sub-marker").exists()
    (fetch,) = tool_use_ids(run, "WebFetch")
    (bash,) = tool_use_ids(run, "Bash")
    text = json.dumps(run.log.tool_result(fetch)["content"])
    assert "[STATE: DO]" in text and "(web-fetch) is blocked" in text
    sub_requests = run.log.conversation(sub_prompt)
    assert any(fetch in json.dumps(b["messages"][-3:]) for b in sub_requests)
    recorded = decisions(project)
    assert recorded[fetch]["decision"] == "deny"
    assert recorded[fetch].get("agent_id")
    assert recorded[fetch].get("agent_type") == "general-purpose"
    assert recorded[bash].get("agent_id") == recorded[fetch]["agent_id"]


def _with_session_hooks(project: Path) -> None:
    """Register our SessionStart and UserPromptSubmit hooks: through `governance install
    --session-hooks` where the installer offers it, else with the entries it would write."""
    if "--session-hooks" in governance("install", "--help"):
        governance("install", "--project", str(project), "--session-hooks", "--no-sandbox")
        return
    from governance.install import settings as settings_module
    from governance.install.session_entries import session_hook_entries

    path = settings_module.settings_path(str(project))
    data = settings_module.load(path)
    settings_module.add_ours(data, session_hook_entries(sys.executable))
    settings_module.save(path, data)


def test_session_briefing_and_state_change_line(claude: ClaudeRunner, project: Path) -> None:
    governed(project, EXPLORE)
    _with_session_hooks(project)
    change = FollowUp("session scenario two",
                      before=[sys.executable, "-m", "governance.commands.cli", "state", "set", DO,
                              "--project", str(project)],
                      before_cwd=str(REPO), before_env={"PYTHONPATH": str(REPO)})
    same = FollowUp("session scenario three")
    run = claude.run(project, "session scenario one",
                     [[Text("noted")], [Text("understood")], [Text("still")]],
                     follow_ups=[change, same])
    assert run.returncode == 0, run.stderr
    first, second, third = run.log.conversation("session scenario one")
    # SessionStart: the briefing opens the conversation.
    opening = json.dumps(first["messages"])
    assert "Current state: EXPLORE (investigation-cycle/EXPLORE)" in opening
    assert "Only the user changes the state" in opening
    assert "state changed" not in opening
    # UserPromptSubmit: one line after the user changed the state, nothing otherwise.
    line = ("The cycle state changed since this session last saw it: investigation-cycle/EXPLORE"
            " -> DO (implementation-cycle/DO/WORK-064)")
    assert json.dumps(second["messages"]).count(line) == 1
    assert json.dumps(third["messages"]).count(line) == 1  # the old line, not a new one
    assert "state changed" not in json.dumps(third["messages"][len(second["messages"]):])


def test_resumed_session_is_briefed_on_the_change(
    claude: ClaudeRunner, project: Path, tmp_path: Path
) -> None:
    governed(project, EXPLORE)
    _with_session_hooks(project)
    home = tmp_path / "home"
    first = claude.run(project, "resume scenario one", [[Text("noted")]], home=home)
    assert first.returncode == 0, first.stderr
    governance("state", "set", DO, "--project", str(project))
    second = claude.run(project, "resume scenario two", [[Text("understood")]], home=home,
                        args=["--resume", first.result["session_id"]])
    assert second.returncode == 0, second.stderr
    (body,) = [b for b in second.log.message_requests() if "resume scenario two" in json.dumps(b)]
    sent = json.dumps(body["messages"])
    assert "state changed since this session last saw it: investigation-cycle/EXPLORE -> DO" in sent
    assert "Current state: DO (implementation-cycle/DO/WORK-064)" in sent
