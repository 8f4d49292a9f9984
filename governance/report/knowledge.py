"""How knowledge was used, from the ledger: calls consulted, knowledge injected, strict blocks
and their acknowledgment per SOP, blocks left unacknowledged (``KnowledgeIgnored``), and the
emergency bypass with its reasons. The figures of ``governance knowledge stats``.

A PreToolUse record carries ``knowledge`` (``governance.knowledge.enforcement``): its
``outcome`` (``injected``, ``blocked``, ``acknowledged``, ``bypassed``, ``repeat``), the
``items`` shown or held (``sop:NAME``, ``mem:ID``) and, for an acknowledgment, the items
``acknowledged``.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from governance.report.tally import Distribution, TopCounts

OUTCOMES = ("injected", "blocked", "acknowledged", "bypassed", "repeat")
BYPASS_EVENTS = 20


def _rate(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


class Knowledge:
    """Fed every selected record."""

    def __init__(self) -> None:
        self.counts = {"consulted": 0, "with_knowledge": 0, "injected": 0, "blocked": 0,
                       "acknowledged": 0, "ignored": 0, "bypassed": 0, "bypass_switches": 0,
                       "repeat": 0, "errors": 0}
        self.cache = {"hit": 0, "built": 0, "stale": 0}
        self.lookup = Distribution()
        self.sops: dict[str, int] = {}                  # calls a SOP applied to
        self.per_sop: dict[str, dict[str, int]] = {}    # SOP -> shown, blocked, acknowledged, ...
        self.memories = {"shown": 0, "blocked": 0, "acknowledged": 0, "ignored": 0}
        self.switches: deque[dict[str, Any]] = deque(maxlen=BYPASS_EVENTS)
        self.bypass_reasons = TopCounts(100)

    def _items(self, items: Any, what: str) -> None:
        for item in items if isinstance(items, list) else ():
            item = str(item)
            if item.startswith("sop:"):
                cell = self.per_sop.setdefault(item[4:], {"shown": 0, "blocked": 0,
                                                          "acknowledged": 0, "ignored": 0})
                cell[what] += 1
            elif item.startswith("mem:"):
                self.memories[what] += 1

    def add(self, rec: dict[str, Any]) -> None:
        event = rec.get("event")
        if event == "KnowledgeIgnored":
            self.counts["ignored"] += 1
            self._items(rec.get("items"), "ignored")
            return
        if event == "KnowledgeBypass":
            self.counts["bypass_switches"] += 1
            self.switches.append({"ts": str(rec.get("ts", "")), "bypass": rec.get("bypass"),
                                  "minutes": rec.get("minutes"),
                                  "reason": str(rec.get("reason") or ""),
                                  "by": str(rec.get("by") or "")})
            return
        knowledge = rec.get("knowledge")
        if not isinstance(knowledge, dict):
            return
        if "error" in knowledge:
            self.counts["errors"] += 1
            return
        self.counts["consulted"] += 1
        if knowledge.get("cache") in self.cache:
            self.cache[knowledge["cache"]] += 1
        if isinstance(knowledge.get("lookup_ms"), int | float):
            self.lookup.add(float(knowledge["lookup_ms"]))
        outcome = knowledge.get("outcome")
        if outcome:
            self.counts["with_knowledge"] += 1
            for sop in knowledge.get("sops") or ():
                if isinstance(sop, dict) and "name" in sop:
                    self.sops[sop["name"]] = self.sops.get(sop["name"], 0) + 1
        if outcome in self.counts:
            self.counts[outcome] += 1
        if outcome in ("injected", "bypassed"):
            self._items(knowledge.get("items"), "shown")
        elif outcome == "blocked":
            self._items(knowledge.get("items"), "blocked")
        elif outcome == "acknowledged":
            self._items(knowledge.get("acknowledged"), "acknowledged")
        held = knowledge.get("bypass")
        if isinstance(held, dict):
            self.bypass_reasons.add(str(held.get("reason") or "(no reason given)"))

    def stats(self) -> dict[str, Any]:
        """The figures ``governance knowledge stats`` prints (its JSON, key for key)."""
        counts, cache, lookup = self.counts, self.cache, self.lookup
        looked = sum(cache.values())
        return {**counts,
                "acknowledgment_rate": _rate(counts["acknowledged"], counts["blocked"]),
                "lookup_ms": {"p50": lookup.percentile(50), "p95": lookup.percentile(95),
                              "p99": lookup.percentile(99)} if len(lookup) else None,
                "cache": dict(cache),
                # served from the stored index, without building (a stale index serves while a
                # large memory store is rebuilt in the background)
                "cache_hit_rate": _rate(cache["hit"] + cache["stale"], looked),
                "sops": dict(sorted(self.sops.items(), key=lambda kv: -kv[1]))}

    def figures(self) -> dict[str, Any]:
        per_sop = [{"sop": name, **cell, "acknowledgment_rate": _rate(cell["acknowledged"],
                                                                      cell["blocked"])}
                   for name, cell in sorted(self.per_sop.items(),
                                            key=lambda kv: (-sum(kv[1].values()), kv[0]))]
        return {**self.stats(), "per_sop": per_sop, "memories": dict(self.memories),
                "bypass_events": list(self.switches),
                "bypassed_by_reason": [{"reason": reason, "calls": count}
                                       for reason, count, _note in self.bypass_reasons.top(10)]}
