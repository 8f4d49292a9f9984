"""What happened, counted: records per event, primitive, action, state and outcome, denials per
session, hook durations, and decisions over time by action. The figures of ``governance stats``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from governance.report.tally import Distribution, Timeline

DENYING = ("block", "redirect")
ACTIONS = ("allow", "warn", "ask", "block", "redirect")


class Activity:
    """Fed every selected record in ledger order.

    A record is counted once, under the tuple of the fields the figures group by (event,
    primitive, action, state, the session of a denial, the outcome): one dictionary update per
    record instead of five, which halves the cost of a million-record ledger. The tuples are
    spread into the separate counts at the end, in the order each value was first seen, so ties
    are ordered as counting record by record orders them."""

    def __init__(self) -> None:
        self.records = 0
        self.first = self.last = ""
        self.groups: dict[tuple[Any, ...], int] = {}
        self.durations: dict[tuple[Any, float], int] = {}     # (event, duration) -> count
        self.timeline = Timeline()

    def add(self, rec: dict[str, Any]) -> None:
        self.records += 1
        ts = rec.get("ts", "")
        if not self.first:
            self.first = str(ts)
        self.last = ts
        event = rec.get("event", "?")
        if event == "PreToolUse":
            action = rec.get("action", "?")
            key: tuple[Any, ...] = (event, rec.get("primitive", "?"), action,
                                    rec.get("state", "?"),
                                    rec.get("session", "") if action in DENYING else None)
            self.timeline.add(ts if type(ts) is str else str(ts),
                              action if type(action) is str else str(action))
        elif "outcome" in rec:
            key = (event, rec["outcome"])
        else:
            key = (event,)
        groups = self.groups
        try:
            groups[key] = groups.get(key, 0) + 1
        except TypeError:       # a value that cannot be a key (a list where text belongs)
            key = tuple(None if part is None else str(part) for part in key)
            groups[key] = groups.get(key, 0) + 1
        duration = rec.get("duration_ms")
        if duration is not None and isinstance(duration, int | float):
            pair = (event, duration)
            self.durations[pair] = self.durations.get(pair, 0) + 1

    def stats(self) -> dict[str, Any]:
        """The figures ``governance stats`` prints (its JSON, key for key)."""
        events: Counter[str] = Counter()
        primitives: Counter[str] = Counter()
        actions: Counter[str] = Counter()
        states: Counter[str] = Counter()
        outcomes: Counter[str] = Counter()
        denials: Counter[str] = Counter()
        for key, count in self.groups.items():
            events[str(key[0])] += count
            if len(key) == 5:
                primitives[str(key[1])] += count
                actions[str(key[2])] += count
                states[str(key[3])] += count
                if key[4] is not None:
                    denials[str(key[4]) or "(none)"] += count
            elif len(key) == 2:
                outcomes[str(key[1])] += count
        by_event: dict[str, Distribution] = {}
        for (event, duration), count in self.durations.items():
            found = by_event.setdefault(str(event), Distribution())
            found.counts[float(duration)] += count
        hook = {name: found.summary() for name, found in sorted(by_event.items())}
        if by_event:
            every = Distribution()
            for found in by_event.values():
                every.merge(found)
            hook["all"] = every.summary()
        return {"records": self.records, "first": self.first, "last": str(self.last),
                "events": dict(events.most_common()),
                "primitives": dict(primitives.most_common()),
                "actions": dict(actions.most_common()),
                "states": dict(states.most_common()),
                "outcomes": dict(outcomes.most_common()),
                "denials_per_session": dict(denials.most_common()),
                "hook_duration_ms": hook}

    def figures(self) -> dict[str, Any]:
        unit, rows = self.timeline.rows()
        seen = self.timeline.kinds
        kinds = [a for a in ACTIONS if seen[a]] + sorted(k for k in seen if k not in ACTIONS)
        return {**self.stats(), "timeline": {"unit": unit, "actions": kinds, "rows": rows}}
