"""A session's acknowledgments, on disk: which SOPs and memories the model has acknowledged (or, in
advisory mode, been shown) and until when, and which calls were blocked and wait for their retry.

``.claude/governance/knowledge/sessions/<session>.json``, read and replaced under one lock
(``flock`` on ``sessions.lock``), so parallel hook processes of a session and its sub-agents (they
share the session id) see each other's acknowledgments exactly. Every entry expires; nothing is
kept in memory between calls. Hot path: ``os``, ``fcntl`` and our JSON codec.
"""

from __future__ import annotations

import fcntl
import time

from governance import jsoncodec, system
from governance.project import governance_dir, replace_file

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

LOCK_TIMEOUT_S = 5.0


def folder(project: str) -> str:
    return system.join(governance_dir(project), "knowledge", "sessions")


class Session:
    """One session's entries while the lock is held (use as a context manager)."""

    def __init__(self, project: str, session: str, now: float | None = None) -> None:
        self.dir = folder(project)
        self.path = system.join(self.dir, (session or "no-session") + ".json")
        self.now = time.time() if now is None else now
        self.acks: dict[str, float] = {}       # item -> until (acknowledged: does not block)
        self.shown: dict[str, float] = {}      # item -> until (advisory: not repeated)
        self.pending: dict[str, dict[str, Any]] = {}   # call digest -> {at, until, items, tool}
        self._fd = -1
        self._changed = False

    def __enter__(self) -> Session:
        system.makedirs(self.dir, mode=0o700, exist_ok=True)
        self._fd = system.open(system.join(self.dir, "sessions.lock"), system.O_RDWR | system.O_CREAT, 0o600)
        deadline = time.monotonic() + LOCK_TIMEOUT_S
        pause = 0.0005
        while True:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    system.close(self._fd)
                    from governance.errors import GovernanceError

                    raise GovernanceError(
                        f"the knowledge session lock was not free within {LOCK_TIMEOUT_S:g} s",
                        file=system.join(self.dir, "sessions.lock"),
                        fix="check for a hung process holding it (lsof)") from None
                time.sleep(pause)
                pause = min(pause * 2, 0.005)
        try:
            with open(self.path, "rb") as fh:
                data = jsoncodec.loads(fh.read().decode())
        except (OSError, ValueError, UnicodeDecodeError):
            data = {}
        if isinstance(data, dict):
            now = self.now
            self.acks = {k: v for k, v in dict(data.get("acks") or {}).items() if v > now}
            self.shown = {k: v for k, v in dict(data.get("shown") or {}).items() if v > now}
            self.pending = dict(data.get("pending") or {})
        return self

    def expired_blocks(self) -> list[dict[str, Any]]:
        """Blocked calls whose retry window passed without a retry (removed from the session)."""
        gone = [dict(v, call=k) for k, v in self.pending.items() if v["until"] <= self.now]
        for entry in gone:
            del self.pending[entry["call"]]
            self._changed = True
        return gone

    def acknowledged(self, item: str) -> bool:
        return self.acks.get(item, 0.0) > self.now

    def was_shown(self, item: str) -> bool:
        return self.shown.get(item, 0.0) > self.now or self.acknowledged(item)

    def acknowledge(self, items: list[str], until: float) -> None:
        for item in items:
            self.acks[item] = until
            self.shown[item] = until
        self._changed = True

    def show(self, items: list[str], until: float) -> None:
        for item in items:
            self.shown[item] = until
        self._changed = True

    def block(self, call: str, items: list[str], until: float, tool: str) -> None:
        self.pending[call] = {"at": self.now, "until": until, "items": items, "tool": tool}
        self._changed = True

    def retry_of(self, call: str) -> dict[str, Any] | None:
        entry = self.pending.get(call)
        if entry is not None and entry["until"] > self.now:
            return entry
        return None

    def settle(self, call: str) -> None:
        self.pending.pop(call, None)
        self._changed = True

    def __exit__(self, kind: object, *rest: object) -> None:
        try:
            if self._changed and kind is None:
                data = {"acks": self.acks, "shown": self.shown, "pending": self.pending}
                replace_file(self.path, jsoncodec.dumps(data).encode())
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            system.close(self._fd)
