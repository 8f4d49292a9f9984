"""The organisation's layer as a hook call finds it (``docs/organisation.md``).

Hot path: the builtin ``posix`` through ``governance.system``. The layer's place is fixed by the
platform (``project.org_matrix_path``), never read from the project, the settings' ``env`` or a
variable. Its file is trusted only when nobody but root can change it: the file, its folder and
the managed settings folder are owned by root and writable by neither group nor others, and the
file is a regular file (not a link to somewhere else). An org file that fails this, or does not
parse, fails closed: every call is denied with the reason (``errors.OrgPolicyError``), whatever
the project says about failing. Absent, it costs one ``lstat``.
"""

from __future__ import annotations

from governance import system
from governance.errors import OrgPolicyError
from governance.project import managed_dir, org_dir, org_matrix_path, read_bytes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from os import stat_result

WRITABLE_BY_OTHERS = 0o022
FIX = ("ask the machine's administrator to make it root's alone: `sudo chown root:root PATH && "
       "sudo chmod go-w PATH`, or remove the organisation's layer with `sudo governance "
       "uninstall --managed`")


def _refuse(path: str, why: str) -> OrgPolicyError:
    return OrgPolicyError(
        f"the organisation's policy is not trusted ({why}), so governance denies every call "
        "until it is fixed (it fails closed: a layer someone else could have rewritten cannot "
        "be applied, nor left out)", file=path, fix=FIX.replace("PATH", path))


def _not_roots(info: stat_result, kind: str) -> str | None:
    """Why a file or folder with this stat is not root's alone (None: it is)."""
    uid, mode = info.st_uid, info.st_mode
    if uid != 0:
        return f"the {kind} is owned by uid {uid}, not root"
    if mode & WRITABLE_BY_OTHERS:
        who = ("its group and others" if mode & 0o022 == 0o022 else
               "its group" if mode & 0o020 else "others")
        return f"the {kind} is writable by {who} (mode {mode & 0o7777:o})"
    return None


def _owned_by_root(path: str, info: stat_result, kind: str) -> None:
    why = _not_roots(info, kind)
    if why:
        raise _refuse(path, why)


def untrusted(path: str, folder: bool = False) -> str | None:
    """Why a file (a regular file, not a link) or a ``folder`` of the organisation's layer could
    have been written by someone other than root, None when it could not: what an SOP of the
    organisation is read under. Only ``path`` itself is examined: a caller checks the folders
    above it with calls of their own."""
    try:
        info = system.stat(path) if folder else system.lstat(path)
    except OSError as exc:
        return f"it cannot be examined: {exc.strerror}"
    if not folder and not system.S_ISREG(info.st_mode):
        return "it is not a regular file (a link or a folder)"
    return _not_roots(info, "folder" if folder else "file")


def present(path: str | None = None) -> bool:
    """Whether the organisation's matrix (or another file of its layer, ``path``) is installed;
    raises ``OrgPolicyError`` when it is but could have been written by someone other than
    root."""
    path = path or org_matrix_path()
    try:
        info = system.lstat(path)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise _refuse(path, f"it cannot be examined: {exc.strerror}") from None
    if not system.S_ISREG(info.st_mode):
        raise _refuse(path, "it is not a regular file (a link or a folder)")
    _owned_by_root(path, info, "file")
    for folder in (org_dir(), managed_dir()):
        try:
            _owned_by_root(folder, system.stat(folder), "folder")
        except OSError as exc:
            raise _refuse(folder, f"it cannot be examined: {exc.strerror}") from None
    return True


def source() -> tuple[str, bytes] | None:
    """The organisation's matrix and its bytes, when there is one (checked as ``present``)."""
    if not present():
        return None
    path = org_matrix_path()
    try:
        return path, read_bytes(path)
    except OSError as exc:
        raise _refuse(path, f"it cannot be read: {exc.strerror}") from None
