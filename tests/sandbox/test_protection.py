"""The sandbox by default, and the protection level `doctor` and `status` name: `governance
install` from a terminal, on this machine (where the sandbox starts) and on one where it cannot
(a PATH without bubblewrap, a bubblewrap that may not create namespaces)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from governance.ledger import anchor
from governance.project import sandbox_manifest_path
from governance.sandbox.probe import probe
from tests.helpers import REPO

sandbox_starts = pytest.mark.skipif(
    not (sys.platform.startswith("linux") and shutil.which("bwrap") and shutil.which("socat")
         and probe().ok),
    reason="the sandbox cannot start here (.ci/run installs bubblewrap and socat)")
linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the bubblewrap probe")


def cli(project: Path, *args: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    if path is not None:
        env["PATH"] = path
    return subprocess.run([sys.executable, "-m", "governance.commands.cli", *args, "--project",
                           str(project)], cwd=REPO, capture_output=True, text=True, timeout=120,
                          env=env, check=False)


def sandbox(project: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((project / ".claude" / "settings.json").read_text())
    return dict(data.get("sandbox", {}))


def level(project: Path, path: str | None = None) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(cli(project, "status", "--json", path=path).stdout)
    return dict(found["protection"])


@sandbox_starts
def test_install_turns_the_sandbox_on_where_it_can_start(project: Path) -> None:
    done = cli(project, "install")
    assert done.returncode == 0, done.stderr
    assert "Sandbox on (Linux (bubblewrap + socat))" in done.stdout
    assert "on by default where it can start" in done.stdout and "--no-sandbox" in done.stdout
    settings = sandbox(project)
    assert settings["enabled"] is True and settings["failIfUnavailable"] is True
    assert settings["allowUnsandboxedCommands"] is False
    assert anchor.folder() in settings["filesystem"]["denyWrite"]   # the ledger's anchor too
    assert os.path.isdir(anchor.folder())
    assert level(project)["level"] == "sandboxed"
    doctor = cli(project, "doctor")
    assert "ok    protection level: sandboxed: Bash commands run in Claude Code's sandbox" \
        in doctor.stdout, doctor.stdout
    assert "To raise it: register our hooks in Claude Code's managed settings" in doctor.stdout


@linux
def test_where_bubblewrap_is_missing_install_says_why_and_what_to_install(
        project: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty-path"
    empty.mkdir()
    done = cli(project, "install", path=str(empty))
    assert done.returncode == 0, done.stderr
    said = " ".join(done.stdout.split())
    assert "Sandbox: NOT turned on, because Claude Code's sandbox cannot start on this machine: " \
           "bubblewrap and socat not installed (not on PATH)" in said, said
    assert "To get it: sudo apt-get install bubblewrap socat" in said
    assert "then run `governance sandbox on`" in said and "tamper-evident only" in said
    assert sandbox(project) == {} and not Path(sandbox_manifest_path(str(project))).exists()
    found = level(project, path=str(empty))
    assert found["level"] == "tamper-evident only"
    assert "apt-get install bubblewrap socat" in found["raise"]
    doctor = cli(project, "doctor", path=str(empty))
    assert "note  protection level: tamper-evident only: a script run by Bash can rewrite any " \
        "governance file" in doctor.stdout, doctor.stdout


@linux
def test_where_user_namespaces_are_disabled_install_names_the_sysctl(
        project: Path, tmp_path: Path) -> None:
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "bwrap").write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' "
                                ">&2\nexit 1\n")
    (fake / "bwrap").chmod(0o755)
    (fake / "socat").write_text("#!/bin/sh\n")
    (fake / "socat").chmod(0o755)
    done = cli(project, "install", path=str(fake))
    assert done.returncode == 0, done.stderr
    assert "NOT turned on" in done.stdout and "setting up uid map" in done.stdout
    assert "kernel.unprivileged_userns_clone=1" in done.stdout
    assert sandbox(project) == {}


@sandbox_starts
def test_an_installed_project_keeps_its_choice_and_repair_keeps_the_sandbox(
        project: Path) -> None:
    assert cli(project, "install", "--no-sandbox").returncode == 0
    again = cli(project, "install", "--statusline")
    assert "not part of governance here, kept as installed" in again.stdout
    assert sandbox(project) == {}
    assert cli(project, "install", "--sandbox").returncode == 0
    assert sandbox(project)["enabled"] is True
    assert cli(project, "install", "--repair").returncode == 0
    assert sandbox(project)["enabled"] is True
    assert Path(sandbox_manifest_path(str(project))).exists()
    out = cli(project, "install", "--no-sandbox")
    assert "Sandbox settings taken back" in out.stdout, out.stdout
    assert sandbox(project) == {} and not Path(sandbox_manifest_path(str(project))).exists()


def _managed(project: Path) -> None:
    """Our hooks, as install registered them, in Claude Code's managed settings."""
    hooks = json.loads((project / ".claude" / "settings.json").read_text())["hooks"]
    Path(os.environ["GOVERNANCE_MANAGED_SETTINGS"]).write_text(json.dumps({"hooks": hooks}))


def test_our_hooks_in_managed_settings_are_the_managed_level(project: Path) -> None:
    assert cli(project, "install", "--no-sandbox").returncode == 0
    assert level(project)["level"] == "tamper-evident only"
    Path(os.environ["GOVERNANCE_MANAGED_SETTINGS"]).write_text(json.dumps({"hooks": {}}))
    assert level(project)["level"] == "tamper-evident only"   # managed settings, not our hooks
    _managed(project)
    found = level(project)
    assert found["level"] == "managed"
    assert os.environ["GOVERNANCE_MANAGED_SETTINGS"] in found["meaning"]
    assert "a script run by Bash can still rewrite governance's files" in found["meaning"]
    assert "governance sandbox on" in found["raise"]


@sandbox_starts
def test_sandboxed_and_managed_is_the_top(project: Path) -> None:
    assert cli(project, "install", "--sandbox").returncode == 0
    _managed(project)
    found = level(project)
    assert found["level"] == "sandboxed and managed" and found["raise"] is None
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    settings["sandbox"]["enabled"] = False   # changed behind governance's back: not sandboxed
    (project / ".claude" / "settings.json").write_text(json.dumps(settings))
    assert level(project)["level"] == "managed"
