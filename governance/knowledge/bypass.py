"""The emergency bypass of strict knowledge: for a while, knowledge that would block is shown
instead (advisory), so the user can work through an outage without editing the configuration.

``.claude/governance/knowledge/bypass.json`` holds ``{until, reason, set_at, by}``. Only the user
sets it, from a terminal (``governance bypass``: the command and the file are governance-admin
for the agent); both switching it on and off are ledger records. Hot path: read only when strict
knowledge would block.
"""

from __future__ import annotations

import time

from governance import jsoncodec, system
from governance.project import governance_dir, replace_file

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def path(project: str) -> str:
    return system.join(governance_dir(project), "knowledge", "bypass.json")


def active(project: str, now: float | None = None) -> dict[str, Any] | None:
    """The bypass in force, or None (missing, expired or unreadable: no bypass)."""
    try:
        with open(path(project), "rb") as fh:
            data = jsoncodec.loads(fh.read().decode())
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("until"), int | float):
        return None
    if data["until"] <= (time.time() if now is None else now):
        return None
    return data


def switch_on(project: str, minutes: float, reason: str, by: str) -> dict[str, Any]:
    now = time.time()
    data = {"until": now + minutes * 60, "reason": reason, "set_at": now, "by": by}
    system.makedirs(system.dirname(path(project)), mode=0o700, exist_ok=True)
    replace_file(path(project), jsoncodec.dumps(data).encode())
    return data


def switch_off(project: str) -> bool:
    """Whether a bypass file was there to remove."""
    try:
        system.unlink(path(project))
    except FileNotFoundError:
        return False
    return True
