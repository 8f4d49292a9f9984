"""Recovery: whether a file a command deletes or overwrites can be had back.

Inside the project, git's history restores a tracked file, and a build makes its ignored output
again, so deleting one file there is a ``file-delete``. Outside it nothing does: the user's own
files (``~/.ssh/id_rsa``, ``~/.bashrc``, ``~/.gitconfig``) and the system's (``/etc/hosts``) are
gone once deleted or emptied. Such a loss is ``destructive``, however it is spelled (``rm``,
``unlink``, ``find -delete``, ``: > FILE``, ``cp /dev/null FILE``).

What stays quiet: the project itself, temporary folders (``/tmp``, ``/var/tmp``, ``$TMPDIR``,
``/dev/shm``), caches (``~/.cache``, ``~/Library/Caches`` and any folder named ``cache``), the
kernel's and the devices' pseudo-files (the device rules decide those), another git work tree
(its history restores what it tracks, as the project's does), and a path that is not there.
A path is looked at under the home before the temporary folders: a home under ``/tmp`` is still a
home.

Hot path: ``os`` through ``governance.system``; nothing is imported.
"""

from __future__ import annotations

from governance import system

PSEUDO = ("/proc", "/sys", "/dev")
CACHE_NAMES = frozenset((".cache", "cache", "caches", ".npm", "__pycache__", ".pytest_cache",
                         ".mypy_cache", ".ruff_cache", "node_modules", ".gradle", ".m2", ".ivy2"))
MAX_MATCHES = 64   # files of a pattern looked at


def _under(path: str, folder: str) -> bool:
    folder = folder.rstrip("/") or "/"
    return path == folder or path.startswith(folder if folder == "/" else folder + "/")


def lost(path: str, root: str, home: str, *, delete: bool) -> str | None:
    """Why deleting (``delete``) or overwriting the file at absolute ``path`` loses what nothing
    restores, or None (see the module docstring). ``root`` is the project, ``home`` the user's
    home, both real paths. An overwrite loses something only when the file holds something."""
    full = system.normpath(path)
    real = system.realpath(full)
    for candidate in {full, real}:
        if _under(candidate, root):
            return None
    if any(_under(full, place) for place in PSEUDO):
        return None
    in_home = bool(home) and home != "/" and _under(full, home)
    if not in_home and system.temporary(full):
        return None
    parts = full.split("/")
    if any(part.lower() in CACHE_NAMES for part in parts[:-1]) or \
            parts[-1].lower() in CACHE_NAMES:
        return None
    if delete:
        if not system.lexists(full):
            return None
    elif not system.isfile(full) or _empty(full):
        return None
    if system.work_tree(system.dirname(full), home if in_home else "/") is not None:
        return None
    verb = "deleting" if delete else "overwriting"
    return (f"{path} is outside the project{' (in the home folder)' if in_home else ''}: "
            f"{verb} it cannot be undone from the project's git history")


def _empty(path: str) -> bool:
    try:
        return system.stat(path).st_size == 0
    except OSError:
        return True


def lost_pattern(pattern: str, root: str, home: str, *, delete: bool) -> str | None:
    """:func:`lost` for the files an absolute glob ``pattern`` matches now (at most
    :data:`MAX_MATCHES` of them): the first loss found."""
    import glob

    for matched, found in enumerate(glob.iglob(pattern), 1):
        if matched > MAX_MATCHES:
            return None
        reason = lost(found, root, home, delete=delete)
        if reason is not None:
            return f"{pattern} matches {reason}"
    return None
