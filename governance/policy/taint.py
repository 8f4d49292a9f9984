"""A session's taint: it read a secret, so what it sends out is watched (docs/secrets.md).

``<project>/.claude/governance/taint/<session>.json``: ``{"until": EPOCH, "sources": [...]}``,
written when a call that reads a secret is let through (PreToolUse) or a tool result shows a
secret-shaped value (PostToolUse), and read before a request leaves the machine. The sources are
names and patterns (``$GITHUB_TOKEN``, ``.env``), never values. It expires ``secrets.taint_minutes``
after the last mark; ``governance secrets clear`` ends it at once. An unset taint costs one ``stat``.
The folder is governance's own (protected): the agent cannot clear its taint.
"""

from __future__ import annotations

import time

from governance import jsoncodec, system
from governance.project import governance_dir

FOLDER = "taint"
_MAX_SOURCES = 20


def taint_path(project_dir: str, session: str) -> str:
    """The taint file of ``session`` (its id kept to letters, digits, ``-`` and ``_``)."""
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in session)[:128] or "unknown"
    return system.join(governance_dir(project_dir), FOLDER, f"{safe}.json")


def read(project_dir: str, session: str, now: float | None = None) -> list[str] | None:
    """The sources that taint ``session`` while it is tainted, else None."""
    path = taint_path(project_dir, session)
    try:
        system.stat(path)
    except OSError:
        return None
    until, sources = _load(path)
    if until <= (time.time() if now is None else now):
        return None
    return sources


def _load(path: str) -> tuple[float, list[str]]:
    """A taint file's end and sources; an unreadable one taints for ever (the cautious
    reading)."""
    try:
        with open(path, "rb") as handle:
            data = jsoncodec.loads(handle.read().decode("utf-8"))
        return float(data["until"]), [str(s) for s in data.get("sources", [])]
    except (OSError, ValueError, KeyError, TypeError):
        return float("inf"), ["an unreadable taint record"]


def sessions(project_dir: str) -> list[tuple[str, float, list[str]]]:
    """(session, until, sources) of every session tainted now (``governance secrets show``)."""
    folder = system.join(governance_dir(project_dir), FOLDER)
    try:
        names = sorted(system.listdir(folder))
    except OSError:
        return []
    found = []
    for name in names:
        if name.endswith(".json"):
            until, sources = _load(system.join(folder, name))
            if until > time.time():
                found.append((name[:-5], until, sources))
    return found


def mark(project_dir: str, session: str, sources: list[str], seconds: float,
         now: float | None = None) -> None:
    """Taint ``session`` for ``seconds`` from now, adding ``sources`` to what it read."""
    moment = time.time() if now is None else now
    known = read(project_dir, session, moment) or []
    merged = list(dict.fromkeys([*known, *sources]))[-_MAX_SOURCES:]
    path = taint_path(project_dir, session)
    folder = system.dirname(path)
    system.makedirs(folder, 0o700, exist_ok=True)
    temporary = f"{path}.{system.getpid()}.tmp"
    text = jsoncodec.dumps({"until": moment + seconds, "sources": merged})
    fd = system.open(temporary, system.O_WRONLY | system.O_CREAT | system.O_TRUNC
                     | system.O_CLOEXEC, 0o600)
    try:
        system.write(fd, text.encode("utf-8"))
    finally:
        system.close(fd)
    system.replace(temporary, path)


def clear(project_dir: str, session: str | None = None) -> int:
    """End the taint of ``session`` (of every session when None); how many were ended."""
    folder = system.join(governance_dir(project_dir), FOLDER)
    try:
        names = system.listdir(folder)
    except OSError:
        return 0
    ended = 0
    wanted = None if session is None else system.basename(taint_path(project_dir, session))
    for name in names:
        if name.endswith(".json") and (wanted is None or name == wanted):
            try:
                system.unlink(system.join(folder, name))
                ended += 1
            except OSError:
                continue
    return ended
