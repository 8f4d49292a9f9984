"""What a machine holds of the organisation layer: its public key, the state of the last verified
bundle (``bundle.json``: version, issue time, source, key, each file's SHA-256) and how the files
on disk compare with it.

The places are ``project.org_dir()`` and its neighbours, fixed by the platform. The hook refuses org
files that are not owned by root or are writable by group or others; so does this module for the key.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from typing import Any

from governance import project
from governance.organisation import bundle
from governance.organisation.bundle import BundleError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

STATE_FORMAT = 1
INSTALL_KEY = "governance install --managed --org-key FILE"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def check_owner(path: str, info: os.stat_result) -> None:
    """Refuse a file root (or the user running this) does not own, or that group or others may
    write: whoever could change it could change what the organisation enforces."""
    if info.st_uid not in (0, os.geteuid()) or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise BundleError(
            f"it is owned by uid {info.st_uid} with mode {stat.S_IMODE(info.st_mode):04o}: only "
            "root may be able to change it, so it is not trusted; nothing was installed",
            file=path, fix=f"run `sudo chown root:root {path} && sudo chmod 644 {path}`")


def public_key() -> Ed25519PublicKey:
    """The organisation's public key; a BundleError telling the admin how to install it."""
    path = project.org_key_path()
    try:
        with open(path, "rb") as handle:
            check_owner(path, os.fstat(handle.fileno()))
            pem = handle.read()
    except FileNotFoundError:
        raise BundleError(
            "no organisation public key is installed here, so no bundle can be verified and "
            "nothing was installed", file=path,
            fix=f"an admin must run `{INSTALL_KEY}` with the organisation's public key (the "
                "team server's, or one `governance org keygen` made)") from None
    except PermissionError:
        raise BundleError("the organisation public key cannot be read", file=path,
                          fix=f"run `sudo chmod 644 {path}`") from None
    return bundle.load_public_key(pem, path)


def read_state() -> dict[str, Any] | None:
    """The last verified bundle's state; None when no bundle was ever installed."""
    path = project.org_bundle_state_path()
    try:
        with open(path, "rb") as handle:
            state = json.loads(handle.read())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise BundleError(f"the installed bundle's state cannot be read ({exc})", file=path,
                          fix="pull the bundle again with `sudo governance org pull URL` after "
                              f"removing {path} (the version check starts afresh)") from None
    if (not isinstance(state, dict) or not isinstance(state.get("version"), int)
            or not isinstance(state.get("files"), dict)):
        raise BundleError("the installed bundle's state is not what `governance org pull` writes",
                          file=path, fix=f"remove {path} and pull the bundle again")
    return state


def state_bytes(found: bundle.Bundle, source: str, key: Ed25519PublicKey, when: str) -> bytes:
    """``bundle.json`` for ``found``, verified with ``key`` and fetched from ``source``."""
    state = {"format": STATE_FORMAT, "version": found.version, "issued": found.issued,
             "source": source, "installed": when, "key": bundle.fingerprint(key),
             "files": {name: digest(data) for name, data in sorted(found.files.items())}}
    return (json.dumps(state, indent=2, sort_keys=True) + "\n").encode()


def on_disk(name: str) -> str | None:
    """The SHA-256 of the org file ``name`` as it is now; None when it is missing."""
    try:
        with open(os.path.join(project.org_dir(), name), "rb") as handle:
            return digest(handle.read())
    except OSError:   # missing, or not a file any more
        return None


def in_force(state: dict[str, Any] | None) -> str:
    """What stays in force when a pull fails, as a phrase."""
    if state is None:
        return "no bundle was installed before, so none is in force"
    return (f"the installed bundle (version {state['version']}, issued "
            f"{state.get('issued', '?')}) stays in force")


def status() -> dict[str, Any]:
    """The organisation layer on this machine: its folder, key and installed bundle, and each
    file as ``ok``, ``changed`` (not what the bundle installed) or ``missing``."""
    report: dict[str, Any] = {"org_dir": project.org_dir(), "key": None, "key_problem": None,
                              "bundle": None, "problem": None}
    try:
        report["key"] = bundle.fingerprint(public_key())
    except BundleError as exc:
        report["key_problem"] = exc.render()
    try:
        state = read_state()
    except BundleError as exc:
        report["problem"] = exc.render()
        return report
    if state is not None:
        files = {}
        for name, want in sorted(state["files"].items()):
            have = on_disk(name)
            files[name] = "missing" if have is None else "ok" if have == want else "changed"
        report["bundle"] = {key: state.get(key) for key in ("version", "issued", "source",
                                                            "installed", "key")}
        report["bundle"]["files"] = files
    return report
