"""The repository is also a Claude Code plugin: the real client validates and installs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from claude_runner import ClaudeRunner
from fake_api import Text, ToolUse

REPO = Path(__file__).resolve().parents[2]
PLUGIN_HOOK_EVENTS = {
    "PreToolUse": "pre_tool_use.py",
    "PostToolUse": "post_tool_use.py",
    "PostToolUseFailure": "post_tool_use.py",
    "SessionStart": "session_start.py",
    "UserPromptSubmit": "user_prompt_submit.py",
}


def _claude(binary: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    return subprocess.run([str(binary), *args], env=env, cwd=home, capture_output=True,
                          text=True, timeout=60, check=False)


def test_hooks_json_uses_exec_form_with_plugin_root() -> None:
    config = json.loads((REPO / "hooks" / "hooks.json").read_text())
    seen = {}
    for event, groups in config["hooks"].items():
        for group in groups:
            for handler in group["hooks"]:
                assert handler["type"] == "command"
                assert handler["command"] == "python3"
                *flags, script = handler["args"]
                assert flags == ["-I", "-S"]   # nothing from the project or PYTHON* variables
                assert script.startswith("${CLAUDE_PLUGIN_ROOT}/hooks/")
                seen[event] = script.rsplit("/", 1)[1]
    assert seen == PLUGIN_HOOK_EVENTS


def _warnings(report: dict[str, Any]) -> list[str]:
    found = [w["message"] for w in report["manifest"]["warnings"]]
    for item in report["contents"]:
        found += [f"{item.get('file')}: {w['message']}" for w in item.get("warnings", [])]
    return found


def test_plugin_validates_strictly(claude_binary: Path, tmp_path: Path) -> None:
    # With a marketplace.json beside it, validating the folder validates the marketplace, so
    # the plugin manifest is named explicitly.
    manifest = REPO / ".claude-plugin" / "plugin.json"
    done = _claude(claude_binary, tmp_path, "plugin", "validate", str(manifest), "--strict",
                   "--json")
    report = json.loads(done.stdout)
    assert report["manifest"]["type"] == "plugin"
    assert report["manifest"]["errors"] == []
    assert all(not item.get("errors") for item in report["contents"]), report["contents"]
    provided = {(h["event"], h["args"][-1].rsplit("/", 1)[1]) for h in report["provides"]["hooks"]}
    assert provided == set(PLUGIN_HOOK_EVENTS.items())
    assert sorted(report["provides"]["commands"]) == [
        "governance:cycle", "governance:governance-state"]
    warnings = _warnings(report)
    if warnings and all("CLAUDE.md at the plugin root" in w for w in warnings):
        pytest.xfail("the repository's CLAUDE.md sits at the plugin root, which --strict rejects; "
                     "move it to .claude/CLAUDE.md (Claude Code loads it from there too)")
    assert warnings == []
    assert done.returncode == 0 and report["success"] is True, done.stdout + done.stderr


def test_marketplace_validates_strictly(claude_binary: Path, tmp_path: Path) -> None:
    manifest = REPO / ".claude-plugin" / "marketplace.json"
    done = _claude(claude_binary, tmp_path, "plugin", "validate", str(manifest), "--strict")
    assert done.returncode == 0, done.stdout + done.stderr


def test_plugin_installs_from_the_marketplace_entry(claude_binary: Path, tmp_path: Path) -> None:
    added = _claude(claude_binary, tmp_path, "plugin", "marketplace", "add", str(REPO))
    assert added.returncode == 0, added.stdout + added.stderr
    installed = _claude(claude_binary, tmp_path, "plugin", "install",
                        "governance@governance-marketplace")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    listed = _claude(claude_binary, tmp_path, "plugin", "list", "--json")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    plugins = json.loads(listed.stdout)
    ids = {p.get("id") or p.get("name") for p in plugins}
    assert "governance@governance-marketplace" in ids, plugins


@pytest.mark.parametrize("script", sorted(set(PLUGIN_HOOK_EVENTS.values())))
def test_every_plugin_hook_script_exists(script: str) -> None:
    assert (REPO / "hooks" / script).is_file(), f"hooks/hooks.json names hooks/{script}"


def test_plugin_commands_match_what_install_writes() -> None:
    """The plugin's commands/ are the project commands with `governance` from PATH."""
    from governance.install.session_entries import slash_commands

    expected = slash_commands(governance="governance")
    found = {p.name: p.read_text() for p in (REPO / "commands").glob("*.md")}
    assert found == expected


def test_plugin_hooks_govern_a_session(claude: ClaudeRunner, project: Path) -> None:
    """Loaded as a plugin (no project install), the same hooks decide and brief."""
    done = subprocess.run(
        [sys.executable, "-m", "governance.commands.cli", "state", "set", "implementation-cycle/DO/WORK-7",
         "--project", str(project)],
        cwd=REPO, env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True, text=True,
        timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert not (project / ".claude" / "settings.json").exists()
    # The plugin runs `python3` from PATH: put this environment's interpreter first.
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    run = claude.run(project, "plugin scenario", [
        [ToolUse("WebFetch", {"url": "https://example.com", "prompt": "x"})],
        [ToolUse("Bash", {"command": "touch plugin-marker", "description": "work"})],
        [Text("done")],
    ], args=["--plugin-dir", str(REPO)], env={"PATH": path})
    assert run.returncode == 0, run.stderr
    assert (project / "plugin-marker").exists()
    (body, *_rest) = run.log.conversation("plugin scenario")
    assert "Current state: DO (implementation-cycle/DO/WORK-7)" in json.dumps(body["messages"])
    denials = run.permission_denials
    assert [d["tool_name"] for d in denials] == ["WebFetch"]
    reason = json.dumps(run.log.tool_result(denials[0]["tool_use_id"])["content"])
    assert "[STATE: DO]" in reason and "(web-fetch) is blocked" in reason
    ledger = (project / ".claude" / "governance" / "ledger.jsonl").read_text()
    assert '"event":"PreToolUse"' in ledger and '"event":"PostToolUse"' in ledger
