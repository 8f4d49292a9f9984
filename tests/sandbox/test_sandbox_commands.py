"""The sandbox through the CLI and the installed hook command, as users and Claude Code run them."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from governance.commands.cli import main
from governance.policy.state import state_path
from governance.project import sandbox_manifest_path
from tests.helpers import hook_command, install, recorded, run_command, set_state

needs_sandbox = pytest.mark.skipif(
    not (sys.platform.startswith("linux") and shutil.which("bwrap") and shutil.which("socat")),
    reason="bubblewrap and socat are not installed here (.ci/run installs them)")


def sandbox_settings(project: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((project / ".claude" / "settings.json").read_text())
    return dict(data.get("sandbox", {}))


def escape(project: Path) -> dict[str, Any]:
    payload = recorded("PreToolUse-Bash.json", project)
    payload["tool_input"]["dangerouslyDisableSandbox"] = True
    payload["tool_input"]["command"] = "python3 tools/w.py"
    return payload


def test_install_sandbox_refuses_where_it_cannot_start_and_writes_nothing(
        project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert main(["install", "--project", str(project), "--sandbox"]) != 0
    said = capsys.readouterr().err
    assert "sandbox cannot start" in said and "apt-get install" in said
    assert not (project / ".claude" / "settings.json").exists()


@needs_sandbox
def test_a_sandbox_escape_is_denied_with_the_reason_while_the_sandbox_is_governed(
        project: Path) -> None:
    install(project, False, "--sandbox")
    set_state(project, "implementation-cycle/DO")
    pre = hook_command(project)
    out = json.loads(run_command(pre, json.dumps(escape(project))).stdout)["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny"
    assert "sandbox is mandatory" in out["permissionDecisionReason"]
    assert "sandbox-escape" in out["permissionDecisionReason"]
    assert main(["sandbox", "off", "--project", str(project)]) == 0
    out = json.loads(run_command(pre, json.dumps(escape(project))).stdout)["hookSpecificOutput"]
    assert out.get("permissionDecision") != "deny"  # no sandbox of ours: nothing to escape


@needs_sandbox
def test_a_project_may_ask_instead_of_block(project: Path) -> None:
    install(project, False, "--sandbox")
    (project / ".claude" / "governance" / "activity_matrix.yaml").write_text(
        "extends: default\nrules:\n  sandbox-escape:\n"
        "    _all_states: {action: ask, message: \"Approve this one?\"}\n")
    assert main(["validate", "--project", str(project)]) == 0  # the user accepts the change
    set_state(project, "implementation-cycle/DO")
    out = json.loads(run_command(hook_command(project), json.dumps(escape(project))).stdout)
    assert out["hookSpecificOutput"]["permissionDecision"] == "ask"


@needs_sandbox
def test_state_changes_move_the_network_rule(project: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    install(project, False, "--sandbox")
    # a project whose EXPLORE allows every network act (the default blocks vcs-push everywhere
    # but DONE, so the default closes the network in every state)
    (project / ".claude" / "governance" / "activity_matrix.yaml").write_text(
        "extends: default\nrules:\n  vcs-push:\n    EXPLORE: {action: allow}\n")
    assert main(["validate", "--project", str(project)]) == 0
    assert main(["state", "set", "--project", str(project), "implementation-cycle", "EXPLORE"]) == 0
    assert "deniedDomains" not in sandbox_settings(project)["network"]
    assert main(["state", "set", "--project", str(project), "implementation-cycle", "DO"]) == 0
    assert sandbox_settings(project)["network"]["deniedDomains"] == ["*"]
    settings_written = (project / ".claude" / "settings.json").stat().st_mtime_ns
    assert settings_written <= Path(state_path(str(project))).stat().st_mtime_ns
    capsys.readouterr()
    assert main(["state", "show", "--project", str(project)]) == 0
    assert "Network: closed to sandboxed commands" in capsys.readouterr().out
    assert main(["state", "set", "--project", str(project), "implementation-cycle", "EXPLORE"]) == 0
    assert "deniedDomains" not in sandbox_settings(project)["network"]


@needs_sandbox
def test_uninstall_takes_the_sandbox_back_and_doctor_reports_it(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    install(project, False, "--sandbox")
    capsys.readouterr()
    main(["doctor", "--project", str(project)])
    assert "the OS sandbox is part of governance and can start" in capsys.readouterr().out
    assert main(["sandbox", "status", "--project", str(project)]) == 0
    assert main(["uninstall", "--project", str(project)]) == 0
    assert sandbox_settings(project) == {}
    assert not Path(sandbox_manifest_path(str(project))).exists()
    assert main(["sandbox", "status", "--project", str(project)]) == 1
