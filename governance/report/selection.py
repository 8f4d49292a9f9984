"""Which records a report covers: a time window, a cycle state and an agent, read from the
command line or a query string, applied alike to ledger records, trace records and decisions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from governance.errors import GovernanceError

MAIN_AGENT = "main"   # the session's own agent: a hook record without an agent id


@dataclass(frozen=True)
class Selection:
    """Every given field must match. ``since``/``until`` are ISO-8601 UTC prefixes compared with
    a record's ``ts`` as ``governance log`` compares them; ``agent`` is a sub-agent's id or type,
    a CSTP agent's name, or ``main`` for the session's own agent."""

    since: str = ""
    until: str = ""
    state: str = ""
    agent: str = ""

    def __call__(self, rec: dict[str, Any]) -> bool:
        if self.since or self.until:
            ts = str(rec.get("ts", ""))
            if self.since and ts < self.since:
                return False
            if self.until and ts[:len(self.until)] > self.until:
                return False
        if self.state and rec.get("state") != self.state:
            return False
        return not self.agent or self.agent_matches(rec)

    def agent_matches(self, rec: dict[str, Any]) -> bool:
        if self.agent == MAIN_AGENT:
            return not rec.get("agent_id") and not rec.get("agent")
        return self.agent in (rec.get("agent_id"), rec.get("agent_type"), rec.get("agent"))

    def in_window(self, ts: str) -> bool:
        """Whether a timestamp lies in the window (for records that carry no state or agent)."""
        return not ((self.since and ts < self.since)
                    or (self.until and ts[:len(self.until)] > self.until))

    @property
    def active(self) -> dict[str, str]:
        return {name: value for name, value in (("since", self.since), ("until", self.until),
                                                ("state", self.state), ("agent", self.agent))
                if value}


def parse(since: str | None = None, until: str | None = None, state: str | None = None,
          agent: str | None = None, now: float | None = None) -> Selection:
    """A selection from user text; raises GovernanceError naming the field and the fix."""
    from governance.ledger.reader import parse_time

    times = {}
    for name, text in (("since", since), ("until", until)):
        if not text:
            continue
        try:
            times[name] = parse_time(text, now)
        except ValueError as exc:
            raise GovernanceError(f"{name}: {exc}", fix=f"give {name} as a date such as "
                                  "2026-05-01, a time such as 2026-05-01T12:00, or an age "
                                  "such as 7d or 12h") from None
    return Selection(since=times.get("since", ""), until=times.get("until", ""),
                     state=(state or "").strip(), agent=(agent or "").strip())
