"""The exact command `governance install` writes, run through `sh -c` with JSON on stdin."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import (
    REPO,
    accept,
    hook_command,
    install,
    recorded,
    run_command,
    set_state,
)

# Modules that must never load in a hook process (each costs more than the whole decision).
HEAVY = {"yaml", "pydantic", "filelock", "typing", "dataclasses", "pathlib", "argparse", "enum",
         "logging", "subprocess", "json", "re", "hashlib", "governance.commands.cli",
         "governance.policy.compiler", "governance.policy.schema"}


def answer(done: subprocess.CompletedProcess[bytes]) -> dict[str, Any]:
    assert done.returncode == 0, done.stderr
    assert b"Traceback" not in done.stdout
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.fixture
def pre(project: Path) -> str:
    install(project)
    return hook_command(project, "PreToolUse")


def test_installed_command_is_absolute_and_runs_from_anywhere(project: Path, pre: str) -> None:
    argv = shlex.split(pre)
    assert argv[0].startswith("/") and argv[1:3] == ["-I", "-S"]
    assert argv[3].endswith("pre_tool_use.py")
    for cwd in ("/", str(project), "/tmp"):
        out = answer(run_command(pre, json.dumps(recorded("PreToolUse-Read.json", project)),
                                 cwd=cwd))
        assert out["hookSpecificOutput"]["additionalContext"].startswith("[STATE: EXPLORE]")


# --- the seed's four cases -------------------------------------------------------------------
def test_context_present_on_allow(project: Path, pre: str) -> None:
    out = answer(run_command(pre, json.dumps(recorded("PreToolUse-Read.json", project))))
    assert "permissionDecision" not in out["hookSpecificOutput"]  # allow grants nothing
    assert out["hookSpecificOutput"]["hookEventName"] == "PreToolUse"
    assert out["hookSpecificOutput"]["additionalContext"].startswith("[STATE: EXPLORE] Blocked: ")


def test_context_names_state_and_blocked_primitives(project: Path, pre: str) -> None:
    set_state(project, "implementation-cycle/DO/WORK-064")
    out = answer(run_command(pre, json.dumps(recorded("PreToolUse-Grep.json", project))))
    first = out["hookSpecificOutput"]["additionalContext"].splitlines()[0]
    assert first.startswith("[STATE: DO] Blocked: ")
    for prim in ("memory-search", "memory-store", "user-query", "web-fetch", "web-search"):
        assert prim in first


def test_deny_keeps_its_reason_and_gains_context(project: Path, pre: str) -> None:
    set_state(project, "implementation-cycle/DO/WORK-064")
    payload = recorded("PreToolUse-Read.json", project)
    payload.update(tool_name="AskUserQuestion", tool_input={"questions": [{
        "question": "Which DB?", "header": "DB", "multiSelect": False,
        "options": [{"label": "pg", "description": "x"}, {"label": "my", "description": "y"}]}]})
    out = answer(run_command(pre, json.dumps(payload)))["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny"
    assert "user-query" in out["permissionDecisionReason"]
    assert "no questions to the user" in out["permissionDecisionReason"]
    assert "rules.user-query.DO" in out["permissionDecisionReason"]
    assert out["additionalContext"].startswith("[STATE: DO] Blocked: ")


def test_governance_failure_degrades_gracefully(project: Path, pre: str) -> None:
    override = project / ".claude" / "governance" / "activity_matrix.yaml"
    override.write_text("rules:\n  web-fetch: [oops\n")
    accept(project)
    out = answer(run_command(pre, json.dumps(recorded("PreToolUse-WebFetch.json", project))))
    assert "permissionDecision" not in out["hookSpecificOutput"]
    assert "NOT checked" in out["systemMessage"] and "YAML syntax error" in out["systemMessage"]
    assert str(override) in out["systemMessage"]
    log = project / ".claude" / "governance" / "errors.log"
    assert "YAML syntax error" in log.read_text()


# --- failing open, on purpose ----------------------------------------------------------------
BAD_INPUTS = {
    "empty": b"",
    "not-json": b"this is not json",
    "array": b"[1, 2, 3]",
    "missing-tool-name": json.dumps({"hook_event_name": "PreToolUse", "cwd": "/tmp",
                                     "tool_input": {}}).encode(),
    "wrong-types": json.dumps({"hook_event_name": "PreToolUse", "cwd": "/tmp", "tool_name": 3,
                               "tool_input": "x"}).encode(),
    "invalid-utf8": b'{"hook_event_name": "PreToolUse", "tool_name": "\xff\xfe"}',
    "garbage-5mb": b"{" * (5 * 1024 * 1024),
    "nested-100k-deep": b"[" * 100_000 + b"]" * 100_000,
    "wrong-event": json.dumps({"hook_event_name": "Stop", "cwd": "/tmp"}).encode(),
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_bad_input_fails_open_with_a_message(project: Path, pre: str, name: str) -> None:
    done = run_command(pre, BAD_INPUTS[name], env={"CLAUDE_PROJECT_DIR": str(project)})
    out = answer(done)
    assert "NOT checked" in out["systemMessage"]
    specific = out["hookSpecificOutput"]
    assert specific["hookEventName"] == "PreToolUse" and "permissionDecision" not in specific
    assert "errors.log" in out["systemMessage"]


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_bad_input_fails_closed_when_asked(project: Path, name: str) -> None:
    install(project, fail_closed=True)
    command = hook_command(project, "PreToolUse")
    assert command.endswith("--on-error block")
    out = answer(run_command(command, BAD_INPUTS[name], env={"CLAUDE_PROJECT_DIR": str(project)}))
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "fail closed" in out["hookSpecificOutput"]["permissionDecisionReason"]


def test_a_5mb_payload_is_decided_normally(project: Path, pre: str) -> None:
    payload = recorded("PreToolUse-Write.json", project)
    payload["tool_input"]["content"] = "x" * (5 * 1024 * 1024)
    out = answer(run_command(pre, json.dumps(payload)))
    assert "systemMessage" in out and "file-write" in out["systemMessage"]  # the EXPLORE warning


def test_garbage_state_file_is_reported_not_fatal(project: Path, pre: str) -> None:
    (project / ".claude" / "governance" / "state.json").write_bytes(b"\x00garbage")
    accept(project)
    out = answer(run_command(pre, json.dumps(recorded("PreToolUse-Read.json", project))))
    context = out["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("[STATE: EXPLORE]") and "unreadable" in context


def test_unwritable_ledger_fails_open_and_a_deny_still_stands(project: Path, pre: str) -> None:
    (project / ".claude" / "governance" / "ledger.jsonl").mkdir()
    out = answer(run_command(pre, json.dumps(recorded("PreToolUse-Read.json", project))))
    assert "permissionDecision" not in out["hookSpecificOutput"] and "ledger" in out["systemMessage"]
    set_state(project, "implementation-cycle/DO")
    out = answer(run_command(pre, json.dumps(recorded("PreToolUse-WebFetch.json", project))))
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "ledger" in out["systemMessage"]


def test_read_only_project_fails_open(project: Path, pre: str, tmp_path: Path) -> None:
    # root ignores file modes, so make the governance folder impossible to create instead
    other = tmp_path / "ro"
    (other / ".claude").mkdir(parents=True)
    (other / ".claude" / "governance").write_text("not a folder")
    out = answer(run_command(pre, json.dumps(recorded("PreToolUse-Read.json", other))))
    assert "NOT checked" in out["systemMessage"]
    assert "permissionDecision" not in out["hookSpecificOutput"]


def test_fail_closed_from_the_matrix_setting_survives_a_broken_matrix(project: Path,
                                                                     pre: str) -> None:
    override = project / ".claude" / "governance" / "activity_matrix.yaml"
    override.write_text("settings:\n  on_error: block\nrules: [broken\n")
    accept(project)
    out = answer(run_command(pre, json.dumps(recorded("PreToolUse-Read.json", project))))
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_post_tool_use_never_blocks(project: Path) -> None:
    install(project, fail_closed=True)
    post = hook_command(project, "PostToolUse")
    out = answer(run_command(post, b"not json", env={"CLAUDE_PROJECT_DIR": str(project)}))
    assert "hookSpecificOutput" not in out and "NOT checked" in out["systemMessage"]
    done = run_command(post, json.dumps(recorded("PostToolUse-Bash.json", project)))
    assert (done.returncode, done.stdout) == (0, b"")


# Exactly what a PreToolUse call loads of ours (docs/architecture.md lists it): a new import on the
# hot path must be added here on purpose. The standard library part is bounded the same way.
HOT_PATH = {"bootstrap", "governance", "governance.errors", "governance.jsoncodec", "governance.system",
            "governance.project", "governance.hook", "governance.hook.run", "governance.hook.answer",
            "governance.hook.payload", "governance.ledger", "governance.ledger.chain",
            "governance.ledger.files", "governance.ledger.anchor", "governance.ledger.redaction",
            "governance.policy", "governance.policy.matrix", "governance.policy.managed",
            "governance.policy.layer", "governance.policy.decision", "governance.policy.state",
            "governance.shell", "governance.policy.seal"}
# Only for a call not denied, in a project whose guardrails hold a tool-call rule (while the memo
# says the sources hold none, the hook does not load them).
GUARDRAILS = {"governance.decisions", "governance.decisions.guardrails",
              "governance.decisions.condition"}
# Only for a deny: the commands its reason names, as the project has them (policy.remedy).
REMEDY = {"governance.policy.remedy"}
# The Read and Grep tools ask whether the file holds credentials (docs/secrets.md); WebFetch also
# parses its URL's host and reads the session's taint.
SECRETS = {"governance.policy.secrets"}
FETCH = SECRETS | {"governance.policy.taint", "governance.shell.endpoint"}
# A Write of an ordinary file shares no literal prefix with any protected glob (.claude/...): the
# glob matcher (governance.policy.wildcard) is not loaded for it.
# A PostToolUse call maps the tool and reads the state: no decision, no acts, no answer to give.
POST_PATH = HOT_PATH - {"governance.policy.decision", "governance.shell", "governance.hook.answer"}
SHELL_PATH = {"governance.shell.analysis", "governance.shell.words", "governance.shell.parser",
              "governance.shell.resolver", "governance.shell.rules"}
# No os: it costs a hook process a millisecond (governance.system stands in for it).
STDLIB = {"_io", "marshal", "posix", "_frozen_importlib_external", "time", "zipimport", "_codecs",
          "codecs", "encodings.aliases", "encodings", "encodings.utf_8", "_signal", "_abc", "abc",
          "io", "_stat", "__future__", "_json", "fcntl", "_sha256", "gc"}

def loaded_modules(command: str, stdin: str) -> set[str]:
    """The modules a hook process loads for ``stdin`` (run once before, so caches are warm),
    after checking that none is heavy and that the standard library part stays small."""
    argv = shlex.split(command)
    run_command(command, stdin)  # caches are built once, cold
    run_command(command, stdin)  # and the hook image takes in what this path imports
    done = subprocess.run([argv[0], "-X", "importtime", *argv[1:]], input=stdin.encode(),
                          capture_output=True, check=True)
    loaded = {line.split("|")[-1].strip() for line in done.stderr.decode().splitlines()
              if line.startswith("import time:") and line.count("|") == 2} - {"imported package"}
    assert not (loaded & HEAVY), sorted(loaded & HEAVY)
    assert {m for m in loaded if not m.startswith("governance")} - {"bootstrap"} <= STDLIB
    return {m for m in loaded if m.startswith("governance") or m == "bootstrap"}



@pytest.mark.parametrize(("name", "ours", "guarded"), [
    ("PreToolUse-Read.json", HOT_PATH | SECRETS, False),
    ("PostToolUse-Read.json", POST_PATH, False),
    ("PostToolUse-Bash.json", POST_PATH, True),
    ("PostToolUseFailure-Bash.json", POST_PATH | {"governance.hook.answer"}, False),  # clips the error
    ("PreToolUse-Read.json", HOT_PATH | SECRETS | GUARDRAILS, True),
    ("PreToolUse-WebFetch.json", HOT_PATH | FETCH | REMEDY, True),  # denied: no guardrail to ask
    ("PreToolUse-Write.json", HOT_PATH, False),
    ("PreToolUse-Bash.json", HOT_PATH | SHELL_PATH, False)])
def test_hook_loads_exactly_the_hot_path(project: Path, pre: str, name: str, ours: set[str],
                                         guarded: bool) -> None:
    if guarded:
        (project / ".claude" / "governance" / "guardrails.yaml").write_text(GUARDRAIL)
    set_state(project, "implementation-cycle/DO")
    command = hook_command(project, name.split("-")[0])
    assert loaded_modules(command, json.dumps(recorded(name, project))) == ours


def test_a_hook_ends_without_the_interpreter_teardown_and_its_answer_whole(project: Path,
                                                                          pre: str) -> None:
    """The hook process ends once its answer is flushed (``bootstrap.leave``): the answer is
    complete, and when Claude Code no longer reads it the exit code says so (as Python's own
    exit would) while the decision is still recorded."""
    set_state(project, "implementation-cycle/DO")
    big = dict(recorded("PreToolUse-Bash.json", project))
    big["tool_input"] = {"command": "echo " + "x" * 200_000, "description": "a long line"}
    out = answer(run_command(pre, json.dumps(big)))       # larger than any pipe buffer
    assert out["hookSpecificOutput"]["hookEventName"] == "PreToolUse"
    ledger = project / ".claude" / "governance" / "ledger.jsonl"
    before = ledger.read_text().count("\n")
    read_end, write_end = os.pipe()
    os.close(read_end)                                    # nobody reads the answer
    try:
        done = subprocess.run(shlex.split(pre), input=json.dumps(
            recorded("PreToolUse-Read.json", project)).encode(), stdout=write_end,
            stderr=subprocess.PIPE, timeout=60, check=False)
    finally:
        os.close(write_end)
    assert done.returncode == 120 and done.stderr == b""
    assert ledger.read_text().count("\n") == before + 1


GUARDRAIL = """version: 1
guardrails:
  - id: no-env-writes
    name: No writes to .env files
    severity: block
    condition:
      all:
        - {field: primitive, "==": file-write}
        - {field: paths, matches: '(^|/)\\.env$'}
    message: Writing .env files is not allowed.
    suggestion: Put the setting in config/settings.yaml instead.
  - id: careful-edits-in-check
    name: Careful edits in CHECK
    severity: warn
    scope: {states: [CHECK]}
    condition: {field: tool, "==": Edit}
    message: Edits in CHECK should be minimal.
    suggestion: Prefer reporting the issue.
"""


def test_tool_call_guardrails_run_in_the_hook(project: Path, pre: str) -> None:
    (project / ".claude" / "governance" / "guardrails.yaml").write_text(GUARDRAIL)
    set_state(project, "implementation-cycle/DO")
    payload = recorded("PreToolUse-Write.json", project)
    payload["tool_input"]["file_path"] = str(project / ".env")
    out = answer(run_command(pre, json.dumps(payload)))["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny"
    assert "Writing .env files is not allowed." in out["permissionDecisionReason"]
    assert "Put the setting in config/settings.yaml instead." in out["permissionDecisionReason"]
    assert "guardrails.no-env-writes" in out["permissionDecisionReason"]


def test_a_tool_call_guardrail_added_later_is_enforced_at_once(project: Path, pre: str) -> None:
    """The hook skips guardrails while their memo says the sources hold no tool-call rule; any
    write to a source (even one keeping its size and mtime) makes the memo stale."""
    set_state(project, "implementation-cycle/DO")
    payload = recorded("PreToolUse-Write.json", project)
    payload["tool_input"]["file_path"] = str(project / ".env")
    override = project / ".claude" / "governance" / "guardrails.yaml"
    harmless = GUARDRAIL.replace("primitive, \"==\": file-write", "primitive, \"==\": file-wrote")
    assert len(harmless) == len(GUARDRAIL) and harmless != GUARDRAIL
    override.write_text("version: 1\nguardrails: []\n")
    for _ in range(2):  # the first call compiles and remembers "no tool-call rule"; the second trusts it
        out = answer(run_command(pre, json.dumps(payload)))["hookSpecificOutput"]
        assert "permissionDecision" not in out or out["permissionDecision"] != "deny"
    override.write_text(harmless)
    out = answer(run_command(pre, json.dumps(payload)))["hookSpecificOutput"]
    assert out.get("permissionDecision") != "deny"
    before = override.stat()
    override.write_text(GUARDRAIL)
    os.utime(override, ns=(before.st_atime_ns, before.st_mtime_ns))  # same size, same mtime
    out = answer(run_command(pre, json.dumps(payload)))["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny"
    assert "guardrails.no-env-writes" in out["permissionDecisionReason"]
    ordinary = answer(run_command(pre, json.dumps(recorded("PreToolUse-Write.json", project))))
    assert "permissionDecision" not in ordinary["hookSpecificOutput"]
    set_state(project, "implementation-cycle/CHECK")
    edit = answer(run_command(pre, json.dumps(recorded("PreToolUse-Edit.json", project))))
    assert "permissionDecision" not in edit["hookSpecificOutput"]
    assert "Edits in CHECK should be minimal." in edit["hookSpecificOutput"]["additionalContext"]


def test_a_python_without_the_config_libraries_gets_an_actionable_message(
        project: Path, tmp_path: Path) -> None:
    """Plugin hooks run `python3` from PATH: without PyYAML and pydantic the first compile cannot
    happen, and the user is told exactly what to install (the call is not silently allowed)."""
    bare = tmp_path / "bare-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    script = REPO / "hooks" / "pre_tool_use.py"
    out = answer(run_command(f"{bare}/bin/python -I {script}",
                             json.dumps(recorded("PreToolUse-Read.json", project))))
    assert "NOT checked" in out["systemMessage"]
    assert "needs PyYAML and pydantic" in out["systemMessage"]
    assert "-m pip install pyyaml pydantic" in out["systemMessage"]


# With knowledge to consult (an SOP), a call the matrix lets through loads the knowledge reader;
# with none, the memo spares it (the cases above).
KNOWLEDGE = {"governance.knowledge", "governance.knowledge.lookup",
             "governance.knowledge.acknowledgment",
             "governance.knowledge.enforcement"}


def test_knowledge_loads_only_its_reader(project: Path, pre: str) -> None:
    set_state(project, "implementation-cycle/DO")
    (project / ".claude" / "sops").mkdir()
    (project / ".claude" / "sops" / "shop-api.ai.sop").write_text("## Preflight\nRun just test.\n")
    first = run_command(pre, json.dumps(recorded("PreToolUse-Read.json", project)))  # builds it
    assert "Run just test." in json.loads(first.stdout)["hookSpecificOutput"]["additionalContext"]
    assert loaded_modules(pre, json.dumps(recorded("PreToolUse-Read.json", project))) == \
        HOT_PATH | SECRETS | KNOWLEDGE


INTENT = {"governance.intent", "governance.intent.scope", "governance.intent.selection",
          "governance.intent.guard"}


@pytest.mark.parametrize(("event", "tool", "ours"), [
    ("PreToolUse", "Edit", HOT_PATH | INTENT),
    ("PostToolUse", "Edit", POST_PATH | INTENT | {"governance.intent.trace"})])
def test_require_intent_loads_only_the_intent_reader(project: Path, event: str, tool: str,
                                                     ours: set[str]) -> None:
    from governance.intent import selection
    from tests.helpers import accept, install
    from tests.intent.test_spec_selection import declare

    install(project)
    set_state(project, "implementation-cycle/DO")
    (project / ".claude/governance/activity_matrix.yaml").write_text(
        "version: '1.0'\nextends: default\nsettings:\n  require_intent: true\n")
    accept(project)
    declare(project)
    selection.choose(str(project), "WORK-064")
    (project / "src/auth").mkdir(parents=True)
    source = project / "src/auth/a.py"
    source.write_text("x = 1\n")
    data = {"session_id": "s1", "transcript_path": "/dev/null", "cwd": str(project),
            "hook_event_name": event, "tool_name": tool, "tool_use_id": "toolu_1",
            "tool_input": {"file_path": str(source), "old_string": "x = 0", "new_string": "x = 1"},
            "tool_response": {"success": True}, "permission_mode": "default"}
    assert loaded_modules(hook_command(project, event), json.dumps(data)) == ours
