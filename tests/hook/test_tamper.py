"""Tamper evidence through the installed hook command, as Claude Code runs it: a governance file
changed outside governance is not acted on, the user is told how to accept it, the ledger records
it, and the settings governance owns are put back."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from governance.commands.cli import main
from governance.hook import owned
from governance.policy import seal
from governance.policy.state import state_path
from tests.helpers import hook_command, install, recorded, run_command, set_state

needs_sandbox = pytest.mark.skipif(
    not (sys.platform.startswith("linux") and shutil.which("bwrap") and shutil.which("socat")),
    reason="bubblewrap and socat are not installed here (.ci/run installs them)")


def call(project: Path, name: str = "PreToolUse-WebFetch.json",
         command: str | None = None) -> dict[str, Any]:
    done = run_command(command or hook_command(project, name.split("-")[0]),
                       json.dumps(recorded(name, project)))
    assert done.returncode == 0 and b"Traceback" not in done.stdout, done.stderr
    result: dict[str, Any] = json.loads(done.stdout) if done.stdout.strip() else {}
    return result


def last_record(project: Path) -> dict[str, Any]:
    lines = (project / ".claude" / "governance" / "ledger.jsonl").read_text().splitlines()
    record: dict[str, Any] = json.loads(lines[-1])
    return record


def settings(project: Path, name: str = "settings.json") -> dict[str, Any]:
    data: dict[str, Any] = json.loads((project / ".claude" / name).read_text())
    return data


def write_settings(project: Path, data: dict[str, Any], name: str = "settings.json") -> None:
    (project / ".claude" / name).write_text(json.dumps(data, indent=2))


@pytest.fixture
def governed(project: Path) -> Path:
    install(project)
    set_state(project, "implementation-cycle/DO/WORK-7")
    return project


def test_nothing_to_say_while_all_is_accepted(governed: Path) -> None:
    out = call(governed)
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "systemMessage" not in out and "unaccepted" not in last_record(governed)


def test_a_state_written_by_a_script_changes_nothing(governed: Path) -> None:
    Path(state_path(str(governed))).write_text(json.dumps(
        {"cycle": "implementation-cycle", "phase": "DONE", "state": "DONE"}))
    out = call(governed)
    specific = out["hookSpecificOutput"]
    assert specific["permissionDecision"] == "deny"  # web-fetch is still blocked in DO
    assert specific["additionalContext"].startswith("[STATE: DO]")
    assert "accepted versions are in force" in specific["additionalContext"]
    assert "keeps the accepted state implementation-cycle/DO/WORK-7" in out["systemMessage"]
    assert "governance state set" in out["systemMessage"]
    record = last_record(governed)
    assert record["unaccepted"] == ["state"] and record["state_source"] == "sealed"
    assert record["state"] == "DO"
    # PostToolUse records it too, without a message of its own
    assert "systemMessage" not in call(governed, "PostToolUse-Read.json")
    assert last_record(governed)["unaccepted"] == ["state"]
    # the user sets the state from a terminal: accepted, no alarm
    assert main(["state", "set", "implementation-cycle/DONE", "--project", str(governed)]) == 0
    out = call(governed, "PreToolUse-Read.json")
    assert "systemMessage" not in out and "unaccepted" not in last_record(governed)


def test_a_matrix_written_by_a_script_is_not_used(governed: Path) -> None:
    override = governed / ".claude" / "governance" / "activity_matrix.yaml"
    override.write_text("extends: default\nrules:\n  web-fetch:\n    DO: {action: allow}\n")
    out = call(governed)
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "without `governance validate`" in out["systemMessage"]
    assert last_record(governed)["unaccepted"] == ["matrix"]
    assert main(["validate", "--project", str(governed)]) == 0  # the user accepts the edit
    out = call(governed)
    assert out["hookSpecificOutput"].get("permissionDecision") != "deny"
    assert "systemMessage" not in out or "governance validate" not in out["systemMessage"]


def test_a_removed_hook_is_put_back(governed: Path) -> None:
    data = settings(governed)
    del data["hooks"]["PostToolUse"]
    data["permissions"] = {"allow": ["Bash(ls:*)"]}  # the user's own change in the same file
    write_settings(governed, data)
    out = call(governed)
    assert "the governance hook for PostToolUse was removed" in out["systemMessage"]
    assert "put them back" in out["systemMessage"]
    assert last_record(governed)["unaccepted"] == ["settings"]
    again = settings(governed)
    assert "PostToolUse" in again["hooks"] and again["permissions"] == data["permissions"]
    assert "systemMessage" not in call(governed)  # all is as accepted again


def test_disable_all_hooks_in_any_settings_file_is_taken_out(governed: Path) -> None:
    write_settings(governed, {"disableAllHooks": True, "env": {"A": "1"}}, "settings.local.json")
    home = Path.home() / ".claude"
    home.mkdir(exist_ok=True)
    (home / "settings.json").write_text(json.dumps({"disableAllHooks": True}))
    out = call(governed)
    assert "sets disableAllHooks to true" in out["systemMessage"]
    assert settings(governed, "settings.local.json") == {"env": {"A": "1"}}
    assert json.loads((home / "settings.json").read_text()) == {}


def test_settings_that_are_not_json_are_reported_not_rewritten(governed: Path) -> None:
    path = governed / ".claude" / "settings.json"
    command = hook_command(governed)
    path.write_text('{"hooks": ')  # the user may be half-way through an edit
    out = call(governed, command=command)
    assert "is not a valid JSON object" in out["systemMessage"]
    assert "could not put them back" in out["systemMessage"]
    assert path.read_text() == '{"hooks": '


def test_uninstall_and_reinstall_raise_no_alarm(governed: Path) -> None:
    assert main(["uninstall", "--project", str(governed)]) == 0
    entry = (seal.read(str(governed)) or {}).get("settings")
    assert entry is None
    install(governed)
    assert "systemMessage" not in call(governed)


def test_an_unsealed_project_is_sealed_by_install(project: Path) -> None:
    Path(state_path(str(project))).parent.mkdir(parents=True)
    Path(state_path(str(project))).write_text(json.dumps(
        {"cycle": "implementation-cycle", "phase": "DO", "state": "DO"}))
    install(project)  # set up before governance kept a seal: install accepts what is there
    out = call(project)
    assert "systemMessage" not in out
    assert out["hookSpecificOutput"]["additionalContext"].startswith("[STATE: DO]")


def test_owned_sandbox_settings_are_checked_and_put_back(tmp_path: Path) -> None:
    main_file, local, user = (tmp_path / "settings.json", tmp_path / "settings.local.json",
                              tmp_path / "user.json")
    main_file.write_text(json.dumps({"sandbox": {"enabled": False, "filesystem": {
        "denyWrite": ["/mine"]}}, "model": "x"}))
    local.write_text(json.dumps({"sandbox": {"allowUnsandboxedCommands": True}}))
    entry = {"files": [str(main_file), str(local), str(user)], "key": "k", "expect": [
        ["equals", ["sandbox", "enabled"], True],
        ["equals", ["sandbox", "allowUnsandboxedCommands"], False],
        ["contains", ["sandbox", "filesystem", "denyWrite"], "/gov"],
        ["contains", ["sandbox", "network", "deniedDomains"], "*"]]}
    found = [text for _i, text in owned.check(str(tmp_path), entry)]
    assert found == ["sandbox.enabled is no longer true",
                     "sandbox.allowUnsandboxedCommands is no longer false",
                     f"{local} overrides sandbox.allowUnsandboxedCommands with true",
                     'sandbox.filesystem.denyWrite no longer lists "/gov"',
                     'sandbox.network.deniedDomains no longer lists "*"']
    assert owned.repair(entry) == [str(main_file), str(local)]
    assert json.loads(main_file.read_text()) == {"sandbox": {
        "enabled": True, "allowUnsandboxedCommands": False, "filesystem": {"denyWrite": ["/mine", "/gov"]},
        "network": {"deniedDomains": ["*"]}}, "model": "x"}
    assert json.loads(local.read_text()) == {"sandbox": {"allowUnsandboxedCommands": False}}
    assert owned.check(str(tmp_path), entry) == []
    assert not user.exists()  # a file that does not exist is not created


def test_no_host_joins_the_allowlist_but_through_governance(tmp_path: Path) -> None:
    main_file, local, user = (tmp_path / "settings.json", tmp_path / "settings.local.json",
                              tmp_path / "user.json")
    hosts = ["pypi.org", "mine.example"]
    main_file.write_text(json.dumps({"sandbox": {"network": {
        "allowedDomains": ["pypi.org", "evil.example", "mine.example"]}}}))
    local.write_text(json.dumps({"sandbox": {"network": {"allowedDomains": ["*.evil.example"]}}}))
    user.write_text(json.dumps({"sandbox": {"network": {"allowedDomains": ["theirs.example"]}}}))
    entry = {"files": [str(main_file), str(local), str(user)], "key": "k", "expect": [
        ["contains", ["sandbox", "network", "allowedDomains"], "pypi.org"],
        ["within", ["sandbox", "network", "allowedDomains"], hosts]]}
    found = [text for _i, text in owned.check(str(tmp_path), entry)]
    assert found == [f'{main_file} adds ["evil.example"] to sandbox.network.allowedDomains',
                     f'{local} adds ["*.evil.example"] to sandbox.network.allowedDomains']
    assert owned.repair(entry) == [str(main_file), str(local)]
    assert json.loads(main_file.read_text())["sandbox"]["network"]["allowedDomains"] == hosts
    assert json.loads(local.read_text())["sandbox"]["network"]["allowedDomains"] == []
    assert json.loads(user.read_text())["sandbox"]["network"]["allowedDomains"] == [
        "theirs.example"]                 # the user's own file is theirs
    assert owned.check(str(tmp_path), entry) == []


@needs_sandbox
def test_a_host_or_a_proxy_a_script_writes_into_the_sandbox_settings_is_taken_out(
        governed: Path) -> None:
    assert main(["state", "set", "implementation-cycle/PLAN", "--project", str(governed)]) == 0
    assert main(["sandbox", "on", "--project", str(governed)]) == 0
    data = settings(governed)
    port = data["sandbox"]["network"]["httpProxyPort"]
    data["sandbox"]["network"]["allowedDomains"] = ["exfil.example"]
    data["sandbox"]["network"]["httpProxyPort"] = 1
    write_settings(governed, data)
    out = call(governed)
    assert 'adds ["exfil.example"] to sandbox.network.allowedDomains' in out["systemMessage"]
    assert f"sandbox.network.httpProxyPort is no longer {port}" in out["systemMessage"]
    network = settings(governed)["sandbox"]["network"]
    assert network.get("allowedDomains", []) == [] and network["httpProxyPort"] == port
    # a state change is no tampering
    assert main(["state", "set", "implementation-cycle/DONE", "--project", str(governed)]) == 0
    assert "systemMessage" not in call(governed, "PreToolUse-Read.json")
    assert main(["sandbox", "off", "--project", str(governed)]) == 0


@needs_sandbox
def test_the_sandbox_switched_off_by_a_script_is_switched_on_again(governed: Path) -> None:
    assert main(["sandbox", "on", "--project", str(governed)]) == 0
    data = settings(governed)
    data["sandbox"]["enabled"] = False
    data["sandbox"]["network"]["deniedDomains"] = []
    write_settings(governed, data)
    out = call(governed)
    assert "sandbox.enabled is no longer true" in out["systemMessage"]
    fixed = settings(governed)["sandbox"]
    assert fixed["enabled"] is True and fixed["network"]["deniedDomains"] == ["*"]
    # a state change that opens the network is no tampering
    assert main(["state", "set", "implementation-cycle/EXPLORE", "--project", str(governed)]) == 0
    out = call(governed, "PreToolUse-Read.json")
    assert "systemMessage" not in out
    assert main(["sandbox", "off", "--project", str(governed)]) == 0
    assert "systemMessage" not in call(governed, "PreToolUse-Read.json")
