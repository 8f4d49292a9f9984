"""The sandbox settings we own: merged into the user's, taken back exactly."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from governance.errors import InstallError
from governance.sandbox import config

DENY = ["/p/.claude/settings.json", "/p/.claude/governance"]


def applied(data: dict[str, Any], closed: bool = True) -> tuple[dict[str, Any], dict[str, Any]]:
    manifest = config.new_manifest("/p/.claude/settings.json")
    config.apply(data, manifest, list(DENY), closed)
    return data, json.loads(json.dumps(manifest))  # what the manifest file holds


def test_apply_sets_the_backstop_on_empty_settings() -> None:
    data, _ = applied({})
    assert data == {"sandbox": {"enabled": True, "allowUnsandboxedCommands": False,
                                "failIfUnavailable": True,
                                "filesystem": {"denyWrite": DENY},
                                "network": {"deniedDomains": ["*"]}}}


def test_remove_restores_the_users_own_settings_exactly() -> None:
    users = {"model": "opus", "sandbox": {
        "enabled": False, "excludedCommands": ["docker"],
        "filesystem": {"denyWrite": ["/secrets", DENY[0]]},
        "network": {"allowedDomains": ["pypi.org"], "deniedDomains": ["evil.example"]}}}
    data, manifest = applied(copy.deepcopy(users))
    assert data["sandbox"]["enabled"] is True
    assert data["sandbox"]["filesystem"]["denyWrite"] == ["/secrets", *DENY]
    assert data["sandbox"]["network"]["deniedDomains"] == ["evil.example", "*"]
    done = config.remove(data, manifest)
    assert data == users
    assert "restored sandbox.enabled to False" in done


def test_remove_keeps_what_the_user_changed_after_apply() -> None:
    data, manifest = applied({})
    data["sandbox"]["failIfUnavailable"] = False  # the user's later choice
    data["sandbox"]["filesystem"]["denyWrite"].append("/mine")
    config.remove(data, manifest)
    assert data == {"sandbox": {"failIfUnavailable": False, "filesystem": {"denyWrite": ["/mine"]}}}


def test_apply_twice_changes_nothing_more_and_remembers_the_first_previous() -> None:
    data, manifest = applied({"sandbox": {"enabled": False}})
    again = copy.deepcopy(data)
    config.apply(again, manifest, list(DENY), True)
    assert again == data
    assert manifest["scalars"]["enabled"]["previous"] is False
    config.remove(again, manifest)
    assert again == {"sandbox": {"enabled": False}}


def test_network_closes_and_reopens_without_touching_a_users_star() -> None:
    data, manifest = applied({}, closed=False)
    assert "network" not in data["sandbox"]
    assert config.set_network(data, manifest, True) is True
    assert config.network_closed(data)
    assert config.set_network(data, manifest, True) is False  # already closed
    assert config.set_network(data, manifest, False) is True
    assert not config.network_closed(data) and "network" not in data["sandbox"]
    theirs = {"sandbox": {"network": {"deniedDomains": ["*"]}}}
    data, manifest = applied(theirs, closed=True)
    assert config.set_network(data, manifest, False) is False
    assert config.network_closed(data)  # the user's own "*" stays


@pytest.mark.parametrize(("bad", "key"), [({"sandbox": []}, "sandbox"),
                                          ({"sandbox": {"filesystem": {"denyWrite": "x"}}},
                                           "sandbox.filesystem.denyWrite")])
def test_settings_of_the_wrong_shape_are_refused_with_the_key(bad: dict[str, Any], key: str) -> None:
    with pytest.raises(InstallError) as caught:
        applied(bad)
    assert caught.value.key == key


def test_protected_paths_cover_settings_governance_and_our_installation(tmp_path: Any) -> None:
    project = str(tmp_path / "p")
    paths = config.protected_paths(project)
    assert f"{project}/.claude/settings.json" in paths
    assert f"{project}/.claude/settings.local.json" in paths
    assert f"{project}/.claude/governance" in paths
    import os

    assert os.path.join(os.path.expanduser("~"), ".claude", "settings.json") in paths
    from governance.project import default_matrix_path, package_root

    assert f"{package_root()}/governance" in paths
    assert default_matrix_path() in paths
    assert len(paths) == len(set(paths))
