"""The metrics the exporter sends beside the log records, counted from the records the collector
acknowledged: decisions by action, primitive and state (a monotonic sum), and hook latency by
event (a histogram of the ledger's ``duration_ms``, the time the hook took).

Both are cumulative since the cursor was made, and kept in it (``governance.telemetry.cursor``):
each push states the totals, so a push that is lost is made good by the next one, and a restart of
the exporter neither resets nor double counts a series.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field
from typing import Any

DECISIONS = "governance.decisions"
DURATION = "governance.hook.duration"
# Upper bounds (ms) of the latency buckets: a hook takes a few milliseconds, a slow one hundreds.
BOUNDS: tuple[float, ...] = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000)
DECISION_KEYS = ("action", "primitive", "state")


@dataclass
class Histogram:
    count: int = 0
    total: float = 0.0
    low: float | None = None
    high: float | None = None
    buckets: list[int] = field(default_factory=lambda: [0] * (len(BOUNDS) + 1))

    def add(self, value: float) -> None:
        self.count += 1
        self.total += value
        self.low = value if self.low is None else min(self.low, value)
        self.high = value if self.high is None else max(self.high, value)
        self.buckets[bisect_left(BOUNDS, value)] += 1   # bucket i holds (BOUNDS[i-1], BOUNDS[i]]

    def as_json(self) -> dict[str, Any]:
        return {"count": self.count, "sum": self.total, "min": self.low, "max": self.high,
                "buckets": self.buckets}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Histogram:
        buckets = [int(n) for n in data.get("buckets", [])]
        if len(buckets) != len(BOUNDS) + 1:
            raise ValueError("the histogram's buckets do not match its bounds")
        low, high = data.get("min"), data.get("max")
        return cls(count=int(data["count"]), total=float(data["sum"]),
                   low=None if low is None else float(low),
                   high=None if high is None else float(high), buckets=buckets)


@dataclass
class Tally:
    """Cumulative decisions and hook durations; ``changed`` since the last push."""

    decisions: dict[tuple[str, str, str], int] = field(default_factory=dict)
    durations: dict[str, Histogram] = field(default_factory=dict)
    changed: bool = False

    def add(self, record: dict[str, Any]) -> None:
        event = str(record.get("event") or "")
        if event == "PreToolUse" and record.get("action"):
            key = (str(record["action"]), str(record.get("primitive") or ""),
                   str(record.get("state") or ""))
            self.decisions[key] = self.decisions.get(key, 0) + 1
            self.changed = True
        duration = record.get("duration_ms")
        if isinstance(duration, int | float) and not isinstance(duration, bool) and duration >= 0:
            self.durations.setdefault(event, Histogram()).add(float(duration))
            self.changed = True

    def as_json(self) -> dict[str, Any]:
        return {"decisions": [[*key, count] for key, count in sorted(self.decisions.items())],
                "durations": {event: h.as_json() for event, h in sorted(self.durations.items())},
                "bounds": list(BOUNDS)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Tally:
        """The tally a cursor holds; raises ValueError (KeyError, TypeError) on a damaged one."""
        if [float(b) for b in data.get("bounds", BOUNDS)] != [float(b) for b in BOUNDS]:
            raise ValueError("the tally was counted with other latency buckets")
        decisions = {(str(a), str(p), str(s)): int(n) for a, p, s, n in data.get("decisions", [])}
        durations = {str(event): Histogram.from_json(h)
                     for event, h in dict(data.get("durations", {})).items()}
        return cls(decisions=decisions, durations=durations)
