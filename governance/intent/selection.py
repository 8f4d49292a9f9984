"""Which intent is active: per session (the agent's selection, or the user's for one session),
for the project (the user's ``governance intent select``), or the cycle state's work item.

``.claude/governance/intent/selected.json`` holds ``{"project": {...}, "sessions": {id: {...}}}``,
each entry ``{"id", "at", "by"}``; it is read and replaced under a ``flock``. Sub-agents carry their
parent session's id, so they share its selection. The order: the session's own selection, then the
project's, then an intent whose id is the cycle state's work item. Hot path: ``os``, ``fcntl``,
``time`` and our JSON codec.
"""

from __future__ import annotations

import fcntl
import time

from governance import jsoncodec, system
from governance.project import governance_dir, replace_file

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SESSIONS_MAX = 500       # the oldest session selections are dropped beyond this


def path(project: str) -> str:
    return system.join(governance_dir(project), "intent", "selected.json")


def read(project: str) -> dict[str, Any]:
    try:
        with open(path(project), "rb") as fh:
            data = jsoncodec.loads(fh.read().decode())
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def selected(project: str, session: str, work_item: str = "") -> tuple[str, str]:
    """(intent id, where it comes from: ``session``, ``project``, ``work item``), or ("", "")."""
    data = read(project)
    entry = (data.get("sessions") or {}).get(session) if session else None
    if isinstance(entry, dict) and entry.get("id"):
        return str(entry["id"]), "session"
    entry = data.get("project")
    if isinstance(entry, dict) and entry.get("id"):
        return str(entry["id"]), "project"
    if work_item:
        return work_item, "work item"
    return "", ""


def choose(project: str, intent_id: str | None, session: str = "", by: str = "user") -> None:
    """Select ``intent_id`` (None clears) for ``session``, or for the project without one."""
    target = path(project)
    system.makedirs(system.dirname(target), mode=0o700, exist_ok=True)
    fd = system.open(target + ".lock", system.O_RDWR | system.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        data = read(project)
        sessions = dict(data.get("sessions") or {})
        entry = None if intent_id is None else {"id": intent_id, "at": time.time(), "by": by}
        if session:
            if entry is None:
                sessions.pop(session, None)
            else:
                sessions[session] = entry
            if len(sessions) > SESSIONS_MAX:
                oldest = sorted(sessions, key=lambda s: sessions[s].get("at", 0))
                for name in oldest[:len(sessions) - SESSIONS_MAX]:
                    del sessions[name]
            data["sessions"] = sessions
        elif entry is None:
            data.pop("project", None)
        else:
            data["project"] = entry
        replace_file(target, jsoncodec.dumps(data, sort_keys=True).encode())
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        system.close(fd)
