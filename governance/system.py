"""The operating system as a hook process sees it: files, paths and the environment, on the
interpreter's builtin ``posix`` module alone.

Importing ``os`` costs a hook process about a millisecond (it builds the collection ABCs for
``os.environ``), more than any module of ours, so every module a hook process may load uses this one
instead. The path functions take and give ``str`` POSIX paths and behave as ``os.path``'s do
(``tests/test_system.py`` holds them against ``os.path`` on generated paths and real symlink trees);
the file functions are ``posix``'s own, under ``os``'s names.
"""

from __future__ import annotations

import posix
import sys
from _stat import S_ISDIR, S_ISLNK, S_ISREG
from posix import (
    O_APPEND,
    O_CLOEXEC,
    O_CREAT,
    O_EXCL,
    O_NOFOLLOW,
    O_NONBLOCK,
    O_RDONLY,
    O_RDWR,
    O_TRUNC,
    O_WRONLY,
    POSIX_SPAWN_DUP2,
    X_OK,
    access,
    chmod,
    close,
    fstat,
    fsync,
    ftruncate,
    getcwd,
    getpid,
    getuid,
    kill,
    listdir,
    lstat,
    mkdir,
    open,
    posix_spawn,
    pread,
    pwrite,
    read,
    readlink,
    rename,
    replace,
    scandir,
    stat,
    stat_result,
    unlink,
    urandom,
    utime,
    write,
)

__all__ = [
    "O_APPEND",
    "O_CLOEXEC",
    "O_CREAT",
    "O_EXCL",
    "O_NOFOLLOW",
    "O_NONBLOCK",
    "O_RDONLY",
    "O_RDWR",
    "O_TRUNC",
    "O_WRONLY",
    "POSIX_SPAWN_DUP2",
    "S_ISDIR",
    "S_ISLNK",
    "S_ISREG",
    "X_OK",
    "abspath",
    "access",
    "alive",
    "basename",
    "chmod",
    "close",
    "devnull",
    "dirname",
    "environ_get",
    "environment",
    "exists",
    "expanduser",
    "fstat",
    "fsync",
    "ftruncate",
    "getcwd",
    "getpid",
    "getuid",
    "isabs",
    "isdir",
    "isfile",
    "islink",
    "join",
    "kill",
    "lexists",
    "listdir",
    "lstat",
    "makedirs",
    "mkdir",
    "normpath",
    "open",
    "posix_spawn",
    "pread",
    "pwrite",
    "read",
    "readlink",
    "realpath",
    "rename",
    "replace",
    "scandir",
    "sep",
    "split",
    "stat",
    "stat_result",
    "temporary",
    "unlink",
    "urandom",
    "utime",
    "write",
]

sep = "/"
devnull = "/dev/null"
_ENCODING = sys.getfilesystemencoding()
_ERRORS = sys.getfilesystemencodeerrors()


TEMPORARY = ("/tmp", "/var/tmp", "/dev/shm", "/private/tmp", "/private/var/folders", "/run/user")


def temporary(path: str) -> bool:
    """Whether the absolute, normalised ``path`` is a temporary folder (``/tmp``, ``/var/tmp``,
    ``$TMPDIR`` ...) or inside one."""
    extra = environ_get("TMPDIR")
    for root in (*TEMPORARY, *((extra.rstrip("/"),) if extra and extra != "/" else ())):
        if path == root or path.startswith(root + "/"):
            return True
    return False


def environ_get(name: str, default: str | None = None) -> str | None:
    """The environment variable ``name`` (as ``os.environ.get``: the same table, which a change
    through ``os.environ`` also updates)."""
    value = posix.environ.get(name.encode(_ENCODING, _ERRORS))
    return default if value is None else value.decode(_ENCODING, _ERRORS)


def environment() -> dict[str, str]:
    """The whole environment, decoded (as ``dict(os.environ)``)."""
    return {key.decode(_ENCODING, _ERRORS): value.decode(_ENCODING, _ERRORS)
            for key, value in posix.environ.items()}


# --- paths, as os.path (posixpath) ---

def isabs(path: str) -> bool:
    return path.startswith("/")


def located(base: str, path: str) -> str:
    """``path`` as the caller means it from the folder ``base``: ``~`` expanded, relative to
    ``base``, and a process's folder links under ``/proc`` read as the caller's own, since the
    process that resolves them is not the one that will open the path (a hook, a server): the
    ``cwd`` of ``/proc/self``, ``/proc/thread-self``, ``/proc/PID`` or ``/proc/PID/task/TID`` is
    ``base``, and their ``root`` is ``/``."""
    full = join(base, expanduser(path))
    if not full.startswith("/proc/"):
        return full
    parts = full[6:].split("/")
    who = parts[0]
    if who not in ("self", "thread-self") and not who.isdigit():
        return full
    k = 1
    if len(parts) > 3 and parts[1] == "task" and parts[2].isdigit():
        k = 3
    if len(parts) <= k or parts[k] not in ("cwd", "root"):
        return full
    rest = "/".join(parts[k + 1:])
    return join(base if parts[k] == "cwd" else "/", rest) if rest else (
        base if parts[k] == "cwd" else "/")


def join(path: str, *more: str) -> str:
    for part in more:
        if part.startswith("/"):
            path = part
        elif not path or path.endswith("/"):
            path += part
        else:
            path += "/" + part
    return path


def split(path: str) -> tuple[str, str]:
    cut = path.rfind("/") + 1
    head, tail = path[:cut], path[cut:]
    if head and head != "/" * len(head):
        head = head.rstrip("/")
    return head, tail


def dirname(path: str) -> str:
    return split(path)[0]


def basename(path: str) -> str:
    return path[path.rfind("/") + 1:]


def normpath(path: str) -> str:
    if not path:
        return "."
    leading = 0
    if path.startswith("/"):
        leading = 2 if path.startswith("//") and not path.startswith("///") else 1
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part != ".." or (not leading and not parts) or (parts and parts[-1] == ".."):
            parts.append(part)
        elif parts:
            parts.pop()
    return "/" * leading + "/".join(parts) or "."


def abspath(path: str) -> str:
    return normpath(path if isabs(path) else join(getcwd(), path))


def expanduser(path: str) -> str:
    """``~`` and ``~user`` at the start of ``path`` as the home folder (``HOME`` for ``~``; the
    password database when it is unset, and for ``~user``); ``path`` itself when there is none."""
    if not path.startswith("~"):
        return path
    end = path.find("/", 1)
    if end < 0:
        end = len(path)
    home: str | None
    if end == 1:
        home = environ_get("HOME")
        if home is None:
            home = _password_home(None)
    else:
        home = _password_home(path[1:end])
    if home is None:
        return path
    return (home.rstrip("/") + path[end:]) or "/"


def _password_home(user: str | None) -> str | None:
    import pwd  # builtin; only for a home the environment does not give

    try:
        entry = pwd.getpwuid(getuid()) if user is None else pwd.getpwnam(user)
    except KeyError:
        return None
    return entry.pw_dir


def realpath(path: str) -> str:
    """``path`` absolute, with every symbolic link in it resolved (as ``os.path.realpath``, not
    strict: a part that does not exist is kept as written; a link loop stops the resolution)."""
    resolved, _ = _resolve("", path, {})
    return abspath(resolved)


def _resolve(path: str, rest: str, seen: dict[str, str | None]) -> tuple[str, bool]:
    if isabs(rest):
        rest, path = rest[1:], "/"
    while rest:
        name, _, rest = rest.partition("/")
        if not name or name == ".":
            continue
        if name == "..":
            if path:
                path, name = split(path)
                if name == "..":
                    path = join(path, "..", "..")
            else:
                path = ".."
            continue
        candidate = join(path, name)
        try:
            link = S_ISLNK(lstat(candidate).st_mode)
        except OSError:
            link = False
        if not link:
            path = candidate
            continue
        if candidate in seen:
            known = seen[candidate]
            if known is not None:
                path = known
                continue
            return join(candidate, rest), False   # a loop
        seen[candidate] = None
        path, complete = _resolve(path, readlink(candidate), seen)
        if not complete:
            return join(path, rest), False
        seen[candidate] = path
    return path, True


def _mode(path: str, follow: bool = True) -> int | None:
    try:
        return (stat(path) if follow else lstat(path)).st_mode
    except (OSError, ValueError):
        return None


def exists(path: str) -> bool:
    return _mode(path) is not None


def alive(pid: object) -> bool:
    """Whether ``pid`` names a running process (one of another user's counts)."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True      # it exists; signalling it is not ours
    return True


def lexists(path: str) -> bool:
    return _mode(path, follow=False) is not None


def work_tree(folder: str, stop: str | None = None) -> str | None:
    """The git work tree's top folder at or above the absolute ``folder``: the nearest one that
    holds ``.git`` (a folder, or the file of a linked work tree or submodule); None when there is
    none, or when the walk reaches ``stop`` (which is not looked at)."""
    here = normpath(folder)
    while here != stop:
        if lexists(join(here, ".git")):
            return here
        parent = dirname(here)
        if parent == here:
            return None
        here = parent
    return None


def isfile(path: str) -> bool:
    mode = _mode(path)
    return mode is not None and S_ISREG(mode)


def isdir(path: str) -> bool:
    mode = _mode(path)
    return mode is not None and S_ISDIR(mode)


def islink(path: str) -> bool:
    mode = _mode(path, follow=False)
    return mode is not None and S_ISLNK(mode)


def makedirs(path: str, mode: int = 0o777, exist_ok: bool = False) -> None:
    """``path`` and any missing folder above it (as ``os.makedirs``)."""
    head, tail = split(path)
    if not tail:
        head, tail = split(head)
    if head and tail and not exists(head):
        try:
            makedirs(head, exist_ok=True)
        except FileExistsError:
            pass   # made meanwhile by another process
        if tail == ".":
            return
    try:
        mkdir(path, mode)
    except OSError:
        if not exist_ok or not isdir(path):
            raise
