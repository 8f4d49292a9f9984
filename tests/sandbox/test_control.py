"""Turning the backstop on and off in a real project, and the network following the state."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from governance.errors import InstallError
from governance.policy import matrix as matrix_module
from governance.policy import seal
from governance.project import sandbox_manifest_path
from governance.sandbox import control
from governance.sandbox.probe import Probe

CAN = Probe(True, "test machine")


def settings(project: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((project / ".claude" / "settings.json").read_text())
    return data


def test_on_refuses_where_the_sandbox_cannot_start_and_writes_nothing(project: Path) -> None:
    matrix = matrix_module.load(str(project))
    cannot = Probe(False, "Linux", ["bubblewrap not installed"], ["sudo apt-get install bubblewrap"])
    with pytest.raises(InstallError) as caught:
        control.turn_on(str(project), "DO", matrix, checked=cannot)
    assert "apt-get install bubblewrap" in caught.value.render()
    assert not (project / ".claude" / "settings.json").exists()
    assert not Path(sandbox_manifest_path(str(project))).exists()


def test_on_then_off_leaves_the_users_settings_as_they_were(project: Path) -> None:
    users = {"permissions": {"allow": ["Bash(ls:*)"]}, "sandbox": {"excludedCommands": ["git"]}}
    (project / ".claude" / "settings.json").write_text(json.dumps(users))
    matrix = matrix_module.load(str(project))
    notes = control.turn_on(str(project), "DO", matrix, checked=CAN)
    assert any("closed" in n for n in notes)
    data = settings(project)
    assert data["sandbox"]["allowUnsandboxedCommands"] is False
    assert str(project / ".claude" / "governance") in data["sandbox"]["filesystem"]["denyWrite"]
    assert data["sandbox"]["network"]["deniedDomains"] == ["*"]
    manifest = json.loads(Path(sandbox_manifest_path(str(project))).read_text())
    assert manifest["scalars"]["enabled"]["previous"] == {"absent": True}
    control.turn_off(str(project))
    assert settings(project) == users
    assert not Path(sandbox_manifest_path(str(project))).exists()
    assert control.turn_off(str(project)) == []


def test_the_network_follows_the_state(project: Path) -> None:
    override = project / ".claude" / "governance" / "activity_matrix.yaml"
    override.parent.mkdir(parents=True)
    override.write_text("extends: default\nrules:\n  vcs-push:\n    EXPLORE: {action: allow}\n")
    seal.accept_matrix(str(project), override.read_bytes())
    matrix = matrix_module.load(str(project))
    assert control.follow_state(str(project), matrix, "DO") is None  # not governed: untouched
    control.turn_on(str(project), "EXPLORE", matrix, checked=CAN)
    assert control.closes_network(matrix, "DO") and not control.closes_network(matrix, "EXPLORE")
    port = control.load_manifest(str(project))["proxy"]["port"]
    proxied = {"httpProxyPort": port, "socksProxyPort": port}
    assert settings(project)["sandbox"]["network"] == proxied
    assert control.follow_state(str(project), matrix, "DO") is True
    assert settings(project)["sandbox"]["network"] == {**proxied, "deniedDomains": ["*"]}
    assert control.follow_state(str(project), matrix, "DONE") is True  # no index hosts in DONE
    assert settings(project)["sandbox"]["network"] == {**proxied, "deniedDomains": ["*"]}
    assert control.follow_state(str(project), matrix, "EXPLORE") is False
    assert settings(project)["sandbox"]["network"] == proxied
    found = control.status(str(project), matrix, "EXPLORE", checked=CAN)
    assert found["governed"] and not found["drift"] and found["network"] == "open"
    assert found["proxy"] == {"port": port, "running": True}
    control.turn_off(str(project))
    assert "network" not in settings(project).get("sandbox", {})


def test_status_names_settings_changed_behind_our_back(project: Path) -> None:
    matrix = matrix_module.load(str(project))
    control.turn_on(str(project), "DO", matrix, checked=CAN)
    data = settings(project)
    data["sandbox"]["allowUnsandboxedCommands"] = True
    data["sandbox"]["network"]["deniedDomains"] = []
    (project / ".claude" / "settings.json").write_text(json.dumps(data))
    found = control.status(str(project), matrix, "DO", checked=CAN)
    assert "sandbox.allowUnsandboxedCommands is True, not False" in found["drift"]
    assert any("network rule does not match the state DO" in d for d in found["drift"])


def test_a_broken_manifest_is_an_error_naming_the_file_and_fix(project: Path) -> None:
    path = Path(sandbox_manifest_path(str(project)))
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    with pytest.raises(InstallError) as caught:
        control.load_manifest(str(project))
    assert caught.value.file == str(path)
    assert "governance sandbox on" in caught.value.render()
