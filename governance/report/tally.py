"""Counting as records stream past, in memory that does not grow with their number: exact
percentiles from value counts, a bounded list of the most frequent keys, and time buckets that
coarsen (hour, day, month) as the span grows.
"""

from __future__ import annotations

from collections import Counter
from typing import Any


class Distribution:
    """Values counted by value: nearest-rank percentiles exactly as ``ledger.reader.percentile``
    computes them over the list of values. Memory follows the number of distinct values (hook
    times are rounded to the microsecond), not the number of records."""

    __slots__ = ("counts",)

    def __init__(self) -> None:
        self.counts: Counter[float] = Counter()

    def add(self, value: float) -> None:
        self.counts[value] += 1

    def merge(self, other: Distribution) -> None:
        self.counts.update(other.counts)

    def __len__(self) -> int:
        return sum(self.counts.values())

    def percentile(self, pct: float) -> float:
        """The nearest-rank percentile (0 for no values)."""
        size = len(self)
        if not size:
            return 0.0
        rank = max(1, int(-(-pct * size // 100)))
        rank = min(rank, size)
        seen = 0
        for value in sorted(self.counts):
            seen += self.counts[value]
            if seen >= rank:
                return float(value)
        return float(max(self.counts))   # pragma: no cover (the ranks add up to size)

    def summary(self) -> dict[str, Any]:
        return {"count": len(self), "p50": self.percentile(50), "p95": self.percentile(95),
                "p99": self.percentile(99)}


class TopCounts:
    """The most frequent keys with a note kept for each (the last one seen). Exact while there
    are at most ``2 * capacity`` distinct keys; beyond, whenever the table holds more, only the
    ``capacity`` most frequent are kept, so the frequent keys stay (a key dropped and seen again
    starts its count anew)."""

    __slots__ = ("capacity", "counts", "dropped", "notes")

    def __init__(self, capacity: int = 500) -> None:
        self.capacity = capacity
        self.counts: dict[str, int] = {}
        self.notes: dict[str, Any] = {}
        self.dropped = 0          # hits of keys dropped from the table

    def add(self, key: str, note: Any = None) -> None:
        counts = self.counts
        counts[key] = counts.get(key, 0) + 1
        if note is not None:
            self.notes[key] = note
        if len(counts) > 2 * self.capacity:
            kept = sorted(counts.items(), key=lambda kv: -kv[1])[:self.capacity]
            self.dropped += sum(counts.values()) - sum(count for _key, count in kept)
            self.counts = dict(kept)
            self.notes = {key: self.notes[key] for key, _count in kept if key in self.notes}

    def top(self, limit: int) -> list[tuple[str, int, Any]]:
        """``(key, count, note)``, most frequent first (ties: the key first seen first)."""
        ordered = sorted(self.counts.items(), key=lambda kv: -kv[1])[:limit]
        return [(key, count, self.notes.get(key)) for key, count in ordered]


# Bucket sizes, finest first: the length of the ISO-8601 prefix that names a bucket.
HOUR, DAY, MONTH = 13, 10, 7
UNITS = {HOUR: "hour", DAY: "day", MONTH: "month"}
MAX_CELLS = 10_000


def _coarser(cells: dict[tuple[str, str], int], width: int) -> dict[tuple[str, str], int]:
    merged: dict[tuple[str, str], int] = {}
    for (bucket, kind), count in cells.items():
        key = (bucket[:width], kind)
        merged[key] = merged.get(key, 0) + count
    return merged


class Timeline:
    """Counts per time bucket and kind, keyed by ``ts`` prefixes: hours, then days, then months
    once there are more than ``MAX_CELLS`` (bucket, kind) cells, so a ledger of years stays a few
    thousand cells."""

    __slots__ = ("cells", "width")

    def __init__(self) -> None:
        self.width = HOUR
        self.cells: dict[tuple[str, str], int] = {}

    def add(self, ts: str, kind: str) -> None:
        key = (ts[:self.width], kind)
        cells = self.cells
        count = cells.get(key)
        if count is None:
            if len(ts) < self.width:
                return
            if len(cells) >= MAX_CELLS and self.width > MONTH:
                self.width = DAY if self.width == HOUR else MONTH
                cells = self.cells = _coarser(cells, self.width)
                key = (ts[:self.width], kind)
            count = cells.get(key, 0)
        cells[key] = count + 1

    @property
    def kinds(self) -> Counter[str]:
        found: Counter[str] = Counter()
        for (_bucket, kind), count in self.cells.items():
            found[kind] += count
        return found

    def rows(self, max_rows: int = 36) -> tuple[str, list[dict[str, Any]]]:
        """The bucket size (``hour``, ``day``, ``month``) and one row per bucket, oldest first:
        ``{"bucket": key, "counts": {kind: n}}``. More than ``max_rows`` hours are shown as days
        (and days as months), so a chart stays readable."""
        width, cells = self.width, self.cells
        while len({bucket for bucket, _kind in cells}) > max_rows and width > MONTH:
            width = DAY if width == HOUR else MONTH
            cells = _coarser(cells, width)
        buckets: dict[str, dict[str, int]] = {}
        for (bucket, kind), count in sorted(cells.items()):
            buckets.setdefault(bucket, {})[kind] = count
        return UNITS[width], [{"bucket": key, "counts": counts} for key, counts in buckets.items()]
