"""The organisation's layer in the real Claude Code: managed hooks and a locked org matrix hold
where the project allows the act, the project dropped its hooks and the user switched all hooks
off.

Everything runs in a private mount namespace with an overlay on /etc (``tests/managed_root.py``):
``governance install --managed --managed-only`` writes Claude Code's managed settings there, and
the client, its hooks and the fake model run inside the same namespace (one ``unshare`` that also
gives the private network, through ``ClaudeRunner.wrap``). No test touches the machine's /etc.

What the client (2.1.330) was seen to do, with ``allowManagedHooksOnly: true`` in the managed
settings, ``"disableAllHooks": true`` in the user's ``~/.claude/settings.json`` and no ``hooks``
in the project's ``.claude/settings.json``:

- The managed hooks run all the same: SessionStart (a ``hook_started``/``hook_response`` pair in
  the stream, its briefing in the first request) and PreToolUse. ``disableAllHooks`` in the
  user's settings does not switch managed hooks off.
- The managed PreToolUse hook's deny is honoured like a project hook's: the call is listed in the
  result's ``permission_denials``, its tool result (``is_error``) is our
  ``permissionDecisionReason``, and the ``additionalContext`` reaches the model after it.
- The managed hook finds what governance owns changed (the user's ``disableAllHooks``): it takes
  ``disableAllHooks`` out, with a notice in the stream (``hook/owned.py``); the project's hook
  entries it does not write back, since the managed ones run the same hooks. The user's file it
  checks is the one under the HOME of the ``governance install`` that sealed the project, so the
  project is installed here with the client's HOME.
- An org refusal (an untrusted org file) is recorded in the project's ledger as
  ``{"event": "PreToolUse", "layer": "org", "decision": "deny", "org_refused": ...}`` with the
  call's ``tool_use_id``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from claude_runner import ClaudeRunner
from fake_api import Text, ToolUse
from test_scenarios import DO, denied_ids, ledger, tool_use_ids

from tests import managed_root
from tests.managed_root import ManagedRoot

REPO = Path(__file__).resolve().parents[2]
PAYLOADS = REPO / "tests" / "payloads" / "claude-code-2.1.330"
ORG_MESSAGE = "ORG-RULE-7: the organisation never lets the agent fetch web pages."
ORG_MATRIX = f"""\
version: "1.0"
rules:
  web-fetch:
    _all_states: {{action: block, message: "{ORG_MESSAGE}"}}
"""
# The project's own matrix allows what its default blocks in DO: only the org's floor denies it.
PROJECT_MATRIX = """\
version: "1.0"
extends: default
rules:
  web-fetch:
    DO: {action: allow, message: "This project lets the agent read documentation pages in DO."}
"""
ORG_FILE = Path("/etc/claude-code/governance/activity_matrix.yaml")
FETCH = {"url": "https://example.com/doc", "prompt": "summarise"}


@pytest.fixture
def root(tmp_path: Path) -> ManagedRoot:
    managed_root.require()
    return ManagedRoot(tmp_path / "root")


def managed(root: ManagedRoot, *args: str) -> str:
    """The CLI of this checkout inside the private /etc, as root (``tests/install/test_managed``)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("CLAUDE_PROJECT_DIR", None)
    done = root.run([sys.executable, "-m", "governance.commands", *args], env=env, cwd="/",
                    timeout=120)
    assert done.returncode == 0, f"governance {' '.join(args)}: {done.stdout}{done.stderr}"
    return done.stdout


def org_layer(root: ManagedRoot, mode: int = 0o644) -> Path:
    """Managed hooks only (allowManagedHooksOnly) and an org matrix that locks web-fetch."""
    managed(root, "install", "--managed", "--managed-only", "--no-sandbox")
    matrix = root.org / "activity_matrix.yaml"
    matrix.write_text(ORG_MATRIX)
    if os.geteuid() == 0:   # otherwise ours, which the user namespace maps to root
        os.chown(matrix, 0, 0)
    matrix.chmod(mode)
    return matrix


def cli(home: Path, *args: str) -> str:
    """Our CLI from a terminal of the user whose HOME the client runs with (the seal binds the
    user's settings file at install time)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "HOME": str(home)}
    env.pop("CLAUDE_PROJECT_DIR", None)
    done = subprocess.run([sys.executable, "-m", "governance.commands.cli", *args], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, f"governance {' '.join(args)}: {done.stdout}{done.stderr}"
    return done.stdout


def allowing_project(project: Path, home: Path) -> Path:
    """Installed before the managed layer (our hooks in its settings) in DO, with an accepted
    matrix that allows web-fetch."""
    (home / ".claude").mkdir(parents=True, exist_ok=True)
    cli(home, "install", "--project", str(project), "--no-sandbox")
    cli(home, "state", "set", DO, "--project", str(project))
    (project / ".claude" / "governance" / "activity_matrix.yaml").write_text(PROJECT_MATRIX)
    cli(home, "validate", "--project", str(project))
    cli(home, "accept", "--project", str(project))
    return project


def test_the_org_floor_denies_what_the_project_allows_with_its_hooks_off(
        claude: ClaudeRunner, root: ManagedRoot, project: Path, tmp_path: Path) -> None:
    """The project allows WebFetch in DO; the org's locked cell blocks it. The project's settings
    drop our hooks and the user's settings say ``disableAllHooks``: the managed hooks still run
    and deny the call, with ``[ORG]`` and the org's rule, and the project's ledger records
    ``"layer": "org"``."""
    home = tmp_path / "home"
    allowing_project(project, home)
    settings = project / ".claude" / "settings.json"
    assert json.loads(settings.read_text()).get("hooks")   # the project install registered ours
    settings.write_text("{}\n")
    user_settings = home / ".claude" / "settings.json"
    user_settings.write_text(json.dumps({"disableAllHooks": True}))
    org_layer(root)
    assert json.loads((root.managed / "managed-settings.json").read_text())[
        "allowManagedHooksOnly"] is True

    inside = dataclasses.replace(claude, wrap=root.wrap, wrap_env=root.env({}))
    run = inside.run(project, "organisation floor scenario", [
        [ToolUse("WebFetch", FETCH)],
        [Text("gave up")],
    ], home=home)
    assert run.returncode == 0, run.stderr[-2000:]
    (fetch,) = tool_use_ids(run, "WebFetch")
    assert fetch in denied_ids(run)
    result = run.log.tool_result(fetch)
    said = json.dumps(result["content"])
    assert result["is_error"] is True
    assert "[STATE: DO] [ORG] Blocked: WebFetch (web-fetch)" in said, said
    assert ORG_MESSAGE in said and "/etc/claude-code/governance/activity_matrix.yaml" in said
    assert f"[ORG] Blocked: WebFetch (web-fetch): {ORG_MESSAGE}" in run.log.text_after(fetch)
    # the managed SessionStart hook ran too: its briefing names web-fetch blocked in DO
    assert any(e.get("subtype") == "hook_started" and e.get("hook_event") == "SessionStart"
               for e in run.events)
    opening = json.dumps(run.log.conversation("organisation floor scenario")[0]["messages"])
    blocked_line = opening.split("Blocked in DO: ", 1)[1].split("\\n", 1)[0]
    assert "web-fetch" in blocked_line.split(", "), blocked_line
    (record,) = [r for r in ledger(project) if r.get("tool_use_id") == fetch
                 and r.get("event") == "PreToolUse"]
    assert (record["layer"], record["decision"], record["state"]) == ("org", "deny", "DO"), record
    assert record["layers"]["org"] == {"action": "block", "file": str(ORG_FILE),
                                       "rule": "rules.web-fetch._all_states"}
    assert record["layers"]["project"]["action"] == "allow"
    # the managed hook put back what governance owns, the user's `disableAllHooks` included
    notices = [e["content"] for e in run.events if e.get("subtype") == "informational"]
    assert any(f"{user_settings} sets disableAllHooks to true" in n for n in notices), notices
    assert "disableAllHooks" not in json.loads(user_settings.read_text())
    # the project's hook entries are not put back: the managed ones run them, and a second copy
    # would decide and record every call twice
    assert not json.loads(settings.read_text()).get("hooks")
    assert len([r for r in ledger(project) if r.get("tool_use_id") == fetch
                and r.get("event") == "PreToolUse"]) == 1


def _hook(root: ManagedRoot) -> list[str]:
    """The exact PreToolUse command ``install --managed`` registered."""
    data = json.loads((root.managed / "managed-settings.json").read_text())
    (group,) = data["hooks"]["PreToolUse"]
    (handler,) = [h for h in group["hooks"] if "pre_tool_use" in str(h.get("command"))]
    return shlex.split(str(handler["command"]))


def test_a_world_writable_org_matrix_fails_closed(root: ManagedRoot, project: Path,
                                                  tmp_path: Path) -> None:
    """An org matrix anyone could have rewritten is neither applied nor left out: the installed
    managed hook (run as Claude Code runs it, inside the private /etc) denies every call, even one
    the project allows, and says why; the ledger records the refusal as the org layer's."""
    allowing_project(project, tmp_path / "home")
    org_layer(root, mode=0o666)
    payload = json.loads((PAYLOADS / "PreToolUse-WebFetch.json").read_text())
    payload.update(cwd=str(project), tool_use_id="toolu_org_untrusted")
    env = {key: value for key, value in os.environ.items()
           if key not in ("CLAUDE_PROJECT_DIR", "PYTHONPATH")}
    env["HOME"] = str(tmp_path / "home")
    done = root.run(_hook(root), env=env, input=json.dumps(payload), cwd=str(project))
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    out = answer["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny", answer
    reason = out["permissionDecisionReason"]
    assert "the organisation's policy is not trusted" in reason, reason
    assert "writable by its group and others (mode 666)" in reason
    assert "/etc/claude-code/governance/activity_matrix.yaml" in reason
    assert "not trusted" in answer.get("systemMessage", ""), answer
    # the refusal is recorded as the org layer's, for this call
    (refused,) = [r for r in ledger(project) if r.get("org_refused")]
    assert refused["tool_use_id"] == "toolu_org_untrusted"
    assert (refused["event"], refused["layer"], refused["decision"]) == ("PreToolUse", "org", "deny")
    assert "not trusted" in refused["org_refused"]
    # made root's alone again, the same call is decided by the org's rule
    (root.org / "activity_matrix.yaml").chmod(0o644)
    payload["tool_use_id"] = "toolu_org_trusted"
    done = root.run(_hook(root), env=env, input=json.dumps(payload), cwd=str(project))
    out = json.loads(done.stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny" and ORG_MESSAGE in out["permissionDecisionReason"]
    (record,) = [r for r in ledger(project) if r.get("tool_use_id") == "toolu_org_trusted"]
    assert record["layer"] == "org" and record["layers"]["project"]["action"] == "allow"


