"""The managed registration: our hooks in Claude Code's managed settings, for every user of the
machine, and the organisation layer's starter files beside them (``governance install --managed``).

The places are fixed (``project.managed_settings_path``, ``project.org_dir``): nothing a session
sets can move them. Only root writes them; every file and folder this module creates is owned by
root and writable by no one else (mode 0644 / 0755), because the hook refuses an organisation file
another user could write. What an install added is recorded in a manifest
(``<org_dir>/managed-install.json``) so that ``uninstall --managed`` takes back exactly that and
leaves every key the administrator wrote: the hook handlers, ``allowManagedHooksOnly`` (only when we
set it), the sandbox part (a ``sandbox.config`` manifest of its own, kept under ``"sandbox"``:
``commands.install`` applies it, as ``sandbox`` sits above this package), and the files we created
(removed only while they still hold the bytes we wrote: an edited file is the administrator's).
"""

from __future__ import annotations

import json
import os
import shlex
import time
from collections.abc import Sequence
from typing import Any

from governance.errors import InstallError
from governance.install import org_files, session_entries, settings
from governance.project import (
    installed_version,
    managed_dir,
    managed_settings_path,
    org_dir,
)

MANIFEST_NAME = "managed-install.json"
BACKUP_NAME = "managed-settings.json.bak"
ONLY_KEY = "allowManagedHooksOnly"
ABSENT = {"absent": True}   # the manifest's word for "the key did not exist"


def manifest_path() -> str:
    return os.path.join(org_dir(), MANIFEST_NAME)


def permission_problem(euid: int | None = None, target: str | None = None) -> str:
    """Why this process may not write the managed layer ("" when it may): it is not root, or the
    nearest existing folder of ``target`` (default: the organisation's folder) is not writable."""
    euid = os.geteuid() if euid is None else euid
    if euid != 0:
        return f"only root may write in {managed_dir()}, and this runs as uid {euid}"
    here = target or org_dir()
    while not os.path.exists(here) and os.path.dirname(here) != here:
        here = os.path.dirname(here)
    if not os.access(here, os.W_OK):
        return f"{here} is not writable (a read-only file system?)"
    return ""


def sudo_command(words: Sequence[str], python: str | None = None) -> str:
    """The exact command an administrator runs: this CLI, isolated, as root."""
    return shlex.join(["sudo", *settings.module_command("governance.commands", python), *words])


def hook_entries(python: str, fail_closed: bool, session_hooks: bool
                 ) -> dict[str, list[dict[str, Any]]]:
    """The handlers a project install registers (same commands, timeouts and options), for
    ``settings.add_ours``."""
    entries = {event: [settings.handler(script, python, fail_closed)]
               for event, script in settings.EVENTS.items()}
    if session_hooks:
        entries.update(session_entries.session_hook_entries(python))
    return entries


def read_settings() -> dict[str, Any]:
    """The managed settings ({} when there are none); InstallError when they cannot be read."""
    return settings.load(managed_settings_path())


def our_hooks() -> dict[str, list[str]]:
    """event -> our handlers' commands in the managed settings; {} when there are none or the
    file cannot be read (a project install then registers its own)."""
    try:
        return settings.our_commands(read_settings())
    except InstallError:
        return {}


def read_manifest() -> dict[str, Any] | None:
    try:
        with open(manifest_path(), encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise InstallError(f"the managed install's manifest cannot be read ({exc})",
                           file=manifest_path(), fix="repair or remove it, then run "
                           "`governance install --managed` again") from None
    if not isinstance(data, dict) or data.get("version") != 1:
        raise InstallError("the managed install's manifest is not one this version wrote",
                           file=manifest_path(), fix="remove it, then run `governance install "
                           "--managed` again")
    return data


def new_manifest() -> dict[str, Any]:
    return {"version": 1, "settings_file": managed_settings_path(),
            "created_settings": not os.path.exists(managed_settings_path()),
            "hooks": [], "files": {}, "dirs": []}


def register(data: dict[str, Any], manifest: dict[str, Any],
             entries: dict[str, list[dict[str, Any]]]) -> None:
    """Put our handlers into ``data`` in place of any there (every event we use: a session event
    left out of ``entries`` is taken out)."""
    events = [*settings.EVENTS, *session_entries.SESSION_EVENTS]
    settings.remove_ours(data, events)
    settings.add_ours(data, entries)
    manifest["hooks"] = sorted(set(manifest["hooks"]) | set(entries))


def managed_only(data: dict[str, Any], manifest: dict[str, Any], wanted: bool | None) -> str:
    """``allowManagedHooksOnly``: set it (True), take back ours (False) or keep it (None)."""
    record = manifest.get("managed_only")
    if wanted:
        if record is None and data.get(ONLY_KEY) is not True:
            manifest["managed_only"] = {"previous": data.get(ONLY_KEY, ABSENT)}
        data[ONLY_KEY] = True
        return (f"{ONLY_KEY}: true (Claude Code runs only managed hooks: user, project and "
                "plugin hooks are ignored).")
    if wanted is False and record is not None:
        _restore(data, manifest.pop("managed_only"))
        return f"{ONLY_KEY}: taken back (it was set by an earlier --managed-only)."
    if record is not None:
        return f"{ONLY_KEY}: kept (set by an earlier --managed-only; --no-managed-only takes it back)."
    return ""


def _restore(data: dict[str, Any], record: dict[str, Any]) -> None:
    if data.get(ONLY_KEY) is True:
        if record.get("previous") == ABSENT:
            data.pop(ONLY_KEY, None)
        else:
            data[ONLY_KEY] = record["previous"]


def _dumps(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, indent=2) + "\n").encode()


STAMPS = ("installed_at", "installed_by", "governance")


def snapshot(data: dict[str, Any], manifest: dict[str, Any]) -> tuple[str, str]:
    """What ``save`` compares to tell whether an install changed anything."""
    kept = {key: value for key, value in manifest.items() if key not in STAMPS}
    return json.dumps(data, sort_keys=True), json.dumps(kept, sort_keys=True)


def save(data: dict[str, Any], manifest: dict[str, Any], before: tuple[str, str],
         placed: bool) -> str:
    """Write the managed settings (keeping one backup of the file as it was) and the manifest,
    unless nothing changed since ``before`` (``snapshot``) and no file was ``placed``; returns
    what happened."""
    path = managed_settings_path()
    now = snapshot(data, manifest)
    if now == before and not placed and os.path.exists(manifest_path()):
        return f"Already installed in {path}; nothing changed."
    org_files.makedirs(org_dir(), manifest)
    if now[0] != before[0] or not os.path.exists(path):
        if os.path.exists(path):
            with open(path, "rb") as handle:
                org_files.write(os.path.join(org_dir(), BACKUP_NAME), handle.read(), None, 0o600)
        org_files.write(path, _dumps(data), None)
    manifest["installed_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    manifest["installed_by"] = {"uid": os.geteuid(), "sudo_user": os.environ.get("SUDO_USER")}
    manifest["governance"] = installed_version()
    org_files.write(manifest_path(), _dumps(manifest), None)
    return f"Installed governance's managed layer in {path} (for every user of this machine)."


def take_back(data: dict[str, Any], manifest: dict[str, Any]) -> list[str]:
    """Remove from ``data`` what ``manifest`` says we added, and the files we created that still
    hold our bytes; returns notes. The sandbox part is the caller's (``sandbox.config.remove``)."""
    notes = []
    removed = settings.remove_ours(data, list(manifest.get("hooks", [])))
    if removed:
        notes.append(f"Removed {removed} governance hook(s) from {managed_settings_path()}.")
    if "managed_only" in manifest:
        _restore(data, manifest["managed_only"])
        notes.append(f"Took back {ONLY_KEY}.")
    for path, digest in manifest.get("files", {}).items():
        try:
            with open(path, "rb") as handle:
                same = org_files.digest(handle.read()) == digest
        except FileNotFoundError:
            continue
        if same:
            os.unlink(path)
            notes.append(f"Removed {path}.")
        else:
            notes.append(f"Kept {path}: it changed since install wrote it.")
    return notes


def finish_uninstall(data: dict[str, Any], manifest: dict[str, Any], before: dict[str, Any]
                     ) -> list[str]:
    """Write the settings back (removed when we created them and nothing is left), then remove
    the manifest, the backup and the folders we created that are now empty."""
    path = managed_settings_path()
    notes = []
    if not data and manifest.get("created_settings"):
        if os.path.exists(path):
            os.unlink(path)
            notes.append(f"Removed {path} (install created it; nothing else was in it).")
    elif data != before:
        org_files.write(path, _dumps(data), None)
    for leftover in (manifest_path(), os.path.join(org_dir(), BACKUP_NAME)):
        try:
            os.unlink(leftover)
        except FileNotFoundError:
            pass
    for folder in sorted(manifest.get("dirs", []), key=len, reverse=True):
        try:
            os.rmdir(folder)
        except OSError:
            pass   # not empty: what is left is the administrator's
    return notes
