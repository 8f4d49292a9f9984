"""Telling the user about SOPs that do not parse, once per change of them.

The knowledge index's header lists the SOPs it skipped (``problems``, each rendered with its file,
key and fix) and the stamp of each skipped file (``problem_stamps``). The hook tells the user in
``systemMessage`` on the first call that reads an index whose skipped SOPs differ from the ones
last told, and then not again until they change (a file edited, broken another way, fixed and
broken again). What was last told is kept in ``.claude/governance/.cache/knowledge-notice.marshal``,
compared and replaced under a lock, so parallel hook processes tell it once between them. Hot
path: ``os``, ``fcntl``, ``marshal`` and ``governance.project``; loaded only when an SOP is skipped.
"""

from __future__ import annotations

import fcntl
import marshal
import os

from governance.project import cache_file, read_bytes, replace_file

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "knowledge-notice.marshal"
# the session of ``governance doctor``'s live hook call: doctor names skipped SOPs itself, and its
# probe must not use up the notice the user's next session is due
PROBE_SESSION = "governance-doctor"


def tell(project: str, header: dict[str, Any], session: object = None) -> str:
    """The notice for the index's skipped SOPs when they were not told yet, else ``""``; records
    that they were told. A project where nothing can be written hears it on every call."""
    problems = list(header["problems"])
    if not problems or session == PROBE_SESSION:
        return ""
    key = (tuple(problems), tuple(header["problem_stamps"]))
    path = cache_file(project, NAME)
    if _told(path) == key:
        return ""
    fd = -1
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        fd = os.open(path + ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        if _told(path) == key:       # a parallel call told it meanwhile
            return ""
        replace_file(path, marshal.dumps(key))
    except OSError:
        pass
    finally:
        if fd >= 0:
            os.close(fd)     # closing releases the lock
    return text(problems)


def text(problems: list[str]) -> str:
    """What the user reads: each skipped SOP with its problem and fix."""
    count = len(problems)
    head = (f"governance: {count} SOP{'s' if count > 1 else ''} "
            f"{'do' if count > 1 else 'does'} not parse and {'are' if count > 1 else 'is'} "
            "skipped (the others still serve); `governance validate` checks again after a fix:")
    return head + "".join("\n- " + p for p in problems)


def _told(path: str) -> object:
    try:
        return marshal.loads(read_bytes(path))
    except (OSError, EOFError, ValueError, TypeError):
        return None
