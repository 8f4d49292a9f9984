"""Turning the sandbox backstop on and off for a project, and keeping its network rule in step with
the cycle state.

The manifest (``.claude/governance/sandbox.json``) says the sandbox is part of governance: the hook
denies ``dangerouslyDisableSandbox`` while it exists, ``governance state set`` closes or opens the
network with it, and ``off`` (or ``uninstall``) takes back exactly what ``on`` added.
"""

from __future__ import annotations

import json
import os
from typing import Any

from governance.errors import InstallError
from governance.install import settings as settings_file
from governance.policy import seal
from governance.project import sandbox_manifest_path, temp_path
from governance.sandbox import config
from governance.sandbox.probe import Probe, probe

CLOSING_ACTIONS = ("block", "redirect")


def closes_network(matrix: dict[str, Any], state: str) -> bool:
    """A state closes the network to sandboxed commands where it blocks (or redirects) web-fetch."""
    entry = matrix["decide"].get(state, {}).get("web-fetch")
    action = entry[0] if entry else matrix["default_action"]
    return action in CLOSING_ACTIONS


def load_manifest(project: str) -> dict[str, Any] | None:
    path = sandbox_manifest_path(project)
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise InstallError(f"the sandbox manifest cannot be read ({exc})", file=path,
                           fix="run `governance sandbox on` to write it again") from None
    if not isinstance(data, dict) or data.get("version") != 1:
        raise InstallError("the sandbox manifest is not one this version wrote", file=path,
                           fix="run `governance sandbox on` to write it again")
    return data


def _save_manifest(project: str, manifest: dict[str, Any]) -> None:
    path = sandbox_manifest_path(project)
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    tmp = temp_path(path)
    with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w",
              encoding="utf-8") as fh:
        json.dump(manifest, fh, indent=2)
        fh.write("\n")
    os.replace(tmp, path)


def seal_settings(project: str, data: dict[str, Any], manifest: dict[str, Any] | None) -> None:
    """Record what governance owns in ``data`` (the settings about to be saved) as accepted.

    Call it *before* saving: a hook that checks in between sees either more than the seal asks
    (harmless) or less, which it puts back, and the save that follows writes ``data`` anyway."""
    expect = settings_file.owned_expectations(data)
    if manifest is not None:
        expect += config.owned_expectations(data, manifest, config.protected_paths(project))
    seal.accept_settings(project, settings_file.files_to_watch(project), expect,
                         manifest is not None)


def turn_on(project: str, state: str, matrix: dict[str, Any], python: str | None = None,
            checked: Probe | None = None) -> list[str]:
    """Make the sandbox part of governance; refuses (InstallError with the fix) where it cannot
    start, because a sandbox that falls back protects nothing and one that cannot start stops
    Claude Code from starting."""
    verdict = checked or probe()
    if not verdict.ok:
        raise InstallError(f"Claude Code's sandbox cannot start on this machine: "
                           f"{'; '.join(verdict.problems)}", fix="; ".join(verdict.fixes)
                           + "; then run `governance sandbox on` again")
    path = settings_file.settings_path(project)
    data = settings_file.load(path)
    manifest = load_manifest(project) or config.new_manifest(path)
    before = json.dumps(data, sort_keys=True)
    from governance.ledger import anchor

    try:   # denied as a folder that exists (the hooks, outside the sandbox, write in it)
        os.makedirs(anchor.folder(), mode=0o700, exist_ok=True)
    except OSError:
        pass   # a home that cannot be written: the path is denied all the same
    closed = closes_network(matrix, state)
    config.apply(data, manifest, config.protected_paths(project, python), closed)
    notes = [f"Sandbox on ({verdict.platform}): Bash commands run confined, never outside it; "
             f"{len(manifest['added'].get('.'.join(config.DENY_WRITE), []))} governance path(s) "
             "are read-only inside it.",
             f"Network for sandboxed commands in {state}: "
             + ("closed (every host refused)" if closed else "as Claude Code's own rules say")]
    _save_manifest(project, manifest)  # first: the hook denies escapes from now on
    seal_settings(project, data, manifest)
    if json.dumps(data, sort_keys=True) != before:
        backup = settings_file.save(path, data)
        notes.append(f"Wrote the sandbox settings to {path}" + (f" (backup: {backup})"
                                                                 if backup else ""))
    return notes


def turn_off(project: str) -> list[str]:
    """Remove exactly what ``turn_on`` added; the user's own sandbox settings stay."""
    manifest = load_manifest(project)
    if manifest is None:
        return []
    path = settings_file.settings_path(project)
    data = settings_file.load(path)
    done = config.remove(data, manifest)
    seal_settings(project, data, None)
    if done:
        settings_file.save(path, data)
    os.unlink(sandbox_manifest_path(project))
    return [f"Sandbox settings taken back from {path}: " + ", ".join(done or ["nothing left"])]


def follow_state(project: str, matrix: dict[str, Any], state: str) -> bool | None:
    """Close or open the network for ``state``; None when the sandbox is not part of governance,
    else whether the network is now closed. Called *before* the state file is written when the
    network closes, so no moment exists where the state forbids the network and the sandbox
    allows it."""
    manifest = load_manifest(project)
    if manifest is None:
        return None
    path = settings_file.settings_path(project)
    data = settings_file.load(path)
    closed = closes_network(matrix, state)
    if config.set_network(data, manifest, closed):
        seal_settings(project, data, manifest)
        settings_file.save(path, data)
        _save_manifest(project, manifest)
    return closed


def status(project: str, matrix: dict[str, Any], state: str,
           checked: Probe | None = None) -> dict[str, Any]:
    """What doctor and ``sandbox status`` report."""
    manifest = load_manifest(project)
    data = settings_file.load(settings_file.settings_path(project))
    found = data.get("sandbox")
    sandbox: dict[str, Any] = found if isinstance(found, dict) else {}
    drift = [f"sandbox.{key} is {sandbox.get(key)!r}, not {value!r}"
             for key, value in config.SCALARS.items()
             if manifest is not None and sandbox.get(key) != value]
    if manifest is not None and config.network_closed(data) != closes_network(matrix, state):
        drift.append(f"the network rule does not match the state {state}: run "
                     "`governance sandbox on` to set it again")
    verdict = checked or probe()
    return {"governed": manifest is not None, "enabled": sandbox.get("enabled") is True,
            "drift": drift, "can_start": verdict.ok, "platform": verdict.platform,
            "why_not": verdict.explain() if not verdict.ok else "",
            "network": ("closed" if config.network_closed(data) else "open"),
            "state_closes_network": closes_network(matrix, state)}
