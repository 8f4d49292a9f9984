"""Telling the user about SOPs that do not parse, once per change of them.

The knowledge index's header lists the SOPs it skipped (``problems``, each rendered with its file,
key and fix) and the stamp of each skipped file (``problem_stamps``). The hook tells the user in
``systemMessage`` on the first call that reads an index whose skipped SOPs differ from the ones
last told, and then not again until they change (a file edited, broken another way, fixed and
broken again). What was last told is kept in ``.claude/governance/.cache/knowledge-notice.marshal``,
compared and replaced under a lock, so parallel hook processes tell it once between them; the file
is bound to the seal (``governance.policy.derived``), so a script that writes it to silence the
notice is found out, and the notice told again. Hot path: ``os``, ``fcntl``, ``marshal`` and our
modules; loaded only when an SOP is skipped.
"""

from __future__ import annotations

import fcntl
import marshal

from governance import system
from governance.policy import seal
from governance.project import cache_file

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "knowledge-notice.marshal"
# the session of ``governance doctor``'s live hook call: doctor names skipped SOPs itself, and its
# probe must not use up the notice the user's next session is due
PROBE_SESSION = "governance-doctor"


def tell(project: str, header: dict[str, Any], session: object = None,
         record: dict[str, Any] | None = None) -> str:
    """The notice for the index's skipped SOPs when they were not told yet, else ``""``; records
    that they were told. A project where nothing can be written hears it on every call.
    ``record`` is the seal, when the caller has read it."""
    problems = list(header["problems"])
    if not problems or session == PROBE_SESSION:
        return ""
    key = (tuple(problems), tuple(header["problem_stamps"]))
    path = cache_file(project, NAME)
    if _told(project, record) == key:
        return ""
    fd = -1
    try:
        system.makedirs(system.dirname(path), mode=0o700, exist_ok=True)
        fd = system.open(path + ".lock", system.O_RDWR | system.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        if _told(project, None) == key:       # a parallel call told it meanwhile
            return ""
        from governance.policy import derived

        derived.store(project, {NAME: marshal.dumps(key)})
    except OSError:
        pass
    finally:
        if fd >= 0:
            system.close(fd)     # closing releases the lock
    return text(problems)


def text(problems: list[str]) -> str:
    """What the user reads: each skipped SOP with its problem and fix."""
    count = len(problems)
    head = (f"governance: {count} SOP{'s' if count > 1 else ''} "
            f"{'do' if count > 1 else 'does'} not parse and {'are' if count > 1 else 'is'} "
            "skipped (the others still serve); `governance validate` checks again after a fix:")
    return head + "".join("\n- " + p for p in problems)


def _told(project: str, record: dict[str, Any] | None) -> object:
    data = seal.derived_bytes(project, NAME, record)
    try:
        return None if data is None else marshal.loads(data)
    except (EOFError, ValueError, TypeError):
        return None
