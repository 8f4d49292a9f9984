"""The organisation layer's files beside Claude Code's managed settings, as root writes them.

Every file and folder created here is owned by root and writable by no one else (0644 / 0755,
whatever the umask), because the hook refuses an organisation file another user could write;
``FileCheck`` is that same test for ``governance doctor``. A file or folder created for a
manifest (``install.managed``) is recorded there, a file with the hash of its bytes, so that
``uninstall --managed`` removes only what is still as install left it.
"""

from __future__ import annotations

import hashlib
import os
from typing import Any, NamedTuple

from governance.errors import InstallError
from governance.project import org_key_path, org_matrix_path

STARTER_NAME = "org_activity_matrix.yaml"   # packaged in governance/defaults (config/)
FILE_MODE, DIR_MODE = 0o644, 0o755
PEM_HEADER = b"-----BEGIN PUBLIC KEY-----"


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def starter_matrix() -> bytes:
    """The packaged starter: the installed copy (``governance/defaults``) or the checkout's."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for path in (os.path.join(here, "defaults", STARTER_NAME),
                 os.path.join(os.path.dirname(here), "config", STARTER_NAME)):
        if os.path.isfile(path):
            with open(path, "rb") as handle:
                return handle.read()
    raise InstallError(f"the packaged {STARTER_NAME} is missing",
                       fix="reinstall claude-governance (pip install .)")


def read_key(path: str) -> bytes:
    """An Ed25519 public key in PEM (SubjectPublicKeyInfo); InstallError otherwise."""
    try:
        with open(path, "rb") as handle:
            pem = handle.read()
    except OSError as exc:
        raise InstallError(f"cannot read the organisation's key ({exc.strerror})", file=path,
                           fix="pass the public key's PEM file with --org-key") from None
    try:
        from cryptography.exceptions import UnsupportedAlgorithm
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
        from cryptography.hazmat.primitives.serialization import load_pem_public_key
    except ImportError:   # checked again by `governance org pull`, which needs cryptography
        valid = pem.lstrip().startswith(PEM_HEADER)
    else:
        try:
            valid = isinstance(load_pem_public_key(pem), Ed25519PublicKey)
        except (ValueError, TypeError, UnsupportedAlgorithm):
            valid = False
    if not valid:
        raise InstallError("not an Ed25519 public key in PEM (-----BEGIN PUBLIC KEY-----)",
                           file=path, fix="pass the public key (never the private one) of the "
                           "key that signs the organisation's bundles")
    return pem


def place(manifest: dict[str, Any], key: bytes | None) -> list[str]:
    """The starter org matrix (only where none is) and the organisation's key; returns notes."""
    notes = []
    matrix = org_matrix_path()
    if not os.path.exists(matrix):
        write(matrix, starter_matrix(), manifest)
        notes.append(f"Wrote the starter organisation matrix {matrix} (floor rules every project "
                     "keeps; edit it as root).")
    if key is not None:
        path = org_key_path()
        try:
            with open(path, "rb") as handle:
                current: bytes | None = handle.read()
        except FileNotFoundError:
            current = None
        if current != key:   # a key install placed stays ours when replaced; another is kept
            ours = current is None or path in manifest["files"]
            write(path, key, manifest if ours else None)
            notes.append(f"{'Installed' if current is None else 'Replaced'} the organisation's "
                         f"public key {path}.")
    return notes


def makedirs(path: str, manifest: dict[str, Any]) -> None:
    """Create ``path`` and its missing parents (0755, root's), recorded in ``manifest``."""
    missing = []
    while not os.path.isdir(path):
        missing.append(path)
        path = os.path.dirname(path)
    for folder in reversed(missing):
        try:
            os.mkdir(folder, DIR_MODE)
            _own(folder, DIR_MODE)
        except OSError as exc:
            raise InstallError(f"cannot create {folder} ({exc.strerror})", file=folder) from None
        manifest["dirs"].append(folder)


def _own(path: str, mode: int) -> None:
    os.chmod(path, mode)   # the umask may have taken bits that readers need
    if os.geteuid() == 0:
        os.chown(path, 0, 0)


def write(path: str, data: bytes, manifest: dict[str, Any] | None, mode: int = FILE_MODE) -> None:
    """Write ``path`` atomically, owned by root with ``mode``; a file created for ``manifest``
    is recorded with its hash (uninstall removes it while it still holds these bytes)."""
    if manifest is not None:
        makedirs(os.path.dirname(path), manifest)
    temp = f"{path}.{os.getpid()}.tmp"
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, mode)
        with open(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        _own(temp, mode)
        os.replace(temp, path)
    except OSError as exc:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise InstallError(f"cannot write {path} ({exc.strerror})", file=path) from None
    if manifest is not None:
        manifest["files"][path] = digest(data)


class FileCheck(NamedTuple):
    """One file or folder of the managed layer, as ``governance doctor`` reports it."""

    path: str
    exists: bool
    owner: int
    mode: int

    def problem(self) -> str:
        """Why the hook would refuse it ("" when it would not)."""
        if not self.exists:
            return ""
        if self.owner != 0:
            return f"{self.path} is owned by uid {self.owner}, not root"
        if self.mode & 0o022:
            return f"{self.path} is writable by its group or others (mode {self.mode:o})"
        return ""


def file_check(path: str) -> FileCheck:
    try:
        info = os.stat(path)
    except OSError:
        return FileCheck(path, False, -1, 0)
    return FileCheck(path, True, info.st_uid, info.st_mode & 0o7777)
