"""The report across projects: the figures of the records a server's central copy of ledgers
holds (``governance.storage.central``), for one shipped project or for all of them together, in
the same single pass as a project's own report (``governance.report.figures``).

The rows come streamed, project by project, each in seq order; every selected record is handed
to the same section counters, and a small breakdown per project (records, decisions by action,
denials) is kept beside them. What the copy lacks is said, not guessed: the trace, the decision
store and the local segments and anchors stay on each project's machine. The copy's chain was
checked when it was shipped (``governance.server.audit``); here its head per project is reported,
and its links (seq after seq, each ``prev`` the hash before it) are checked again as the rows pass.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any, Protocol

from governance.ledger.chain import GENESIS
from governance.report.activity import ACTIONS, DENYING
from governance.report.figures import Sections, parse_line
from governance.report.selection import Selection

EVERY = "*"       # ``project=*``: every project of the copy together
NOT_HERE = ("kept on each project's machine, and not part of a report from a server's central "
            "copy of ledgers")


class Stored(Protocol):
    """A row of the central copy (``governance.storage.central.Row``)."""

    @property
    def seq(self) -> int: ...
    @property
    def hash(self) -> str: ...
    @property
    def prev(self) -> str: ...
    @property
    def line(self) -> str: ...


class Project:
    """One project's share of the report: its selected records, and its copy's head."""

    __slots__ = ("actions", "broken", "denials", "first", "hash", "last", "records", "rows",
                 "seq")

    def __init__(self) -> None:
        self.records = self.denials = self.rows = self.seq = 0
        self.actions: Counter[str] = Counter()
        self.hash = ""
        self.broken = ""
        self.first = self.last = ""

    def link(self, row: Stored) -> None:
        """Follow the copy's chain: each seq the one after the last, its prev the last hash."""
        self.rows += 1
        if not self.broken:
            if row.seq != self.seq + 1:
                self.broken = f"gap at seq {self.seq + 1}: the next row held is seq {row.seq}"
            elif row.prev != (self.hash or GENESIS):
                self.broken = f"fork at seq {row.seq}: its prev is not the hash of seq {self.seq}"
        self.seq, self.hash = row.seq, row.hash

    def add(self, rec: dict[str, Any]) -> None:
        self.records += 1
        ts = str(rec.get("ts", ""))
        if ts:
            self.first = min(self.first, ts) if self.first else ts
            self.last = max(self.last, ts)
        if rec.get("event") == "PreToolUse":
            action = str(rec.get("action", "?"))
            self.actions[action] += 1
            if action in DENYING:
                self.denials += 1


def build(rows: Iterable[tuple[str, Stored]], selection: Selection, asked: str,
          now: float | None = None) -> dict[str, Any]:
    """The figures of the report of ``rows`` (``CentralCopy.iter_lines``: ``(project id,
    row)``), ``asked`` being the project id asked for, or :data:`EVERY`. The sections a project's
    own report has, computed from the records; in place of what needs the project's own files,
    a note; the copy's head per project as its tamper evidence."""
    started = time.perf_counter()
    projects: dict[str, Project] = {}
    keep = selection if selection.active else None
    sections = Sections()

    def selected() -> Iterator[dict[str, Any]]:
        current, share = "", Project()
        for pid, row in rows:
            if pid != current:     # a ledger ended: its asks match no later project's result
                sections.asks.settle()
                current = pid
                share = projects.setdefault(pid, Project())
            share.link(row)
            rec = parse_line(row.line, selection.since, f"project {pid} seq {row.seq}")
            if rec is None or (keep is not None and not keep(rec)):
                continue
            share.add(rec)
            yield rec

    sections.feed(selected())
    read_s = time.perf_counter() - started
    activity = sections.activity.figures()
    # Read project by project, the first and last records are the earliest and latest of all.
    activity["first"] = min((p.first for p in projects.values() if p.first), default="")
    activity["last"] = max((p.last for p in projects.values()), default="")
    generated = time.time() if now is None else now
    every = asked == EVERY
    return {
        "project": "every project of the central copy" if every else asked,
        "name": "every project" if every else asked,
        "generated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(generated)),
        "selection": selection.active,
        "activity": activity,
        "denials": sections.denials.figures(),
        "asks": sections.asks.figures(),
        "knowledge": sections.knowledge.figures(),
        "intents": {**sections.intents.figures(), "note": f"the trace is {NOT_HERE}"},
        "memory": {"present": False, "note": f"the decision store is {NOT_HERE}"},
        "tamper": {"chain": None, "evidence": sections.evidence.figures()},
        "team": {"asked": asked, "projects": _breakdown(projects)},
        "timing": {"read_s": round(read_s, 3),
                   "total_s": round(time.perf_counter() - started, 3)},
    }


def _breakdown(projects: dict[str, Project]) -> list[dict[str, Any]]:
    seen: Counter[str] = Counter()
    for share in projects.values():
        seen.update(share.actions)
    kinds = [a for a in ACTIONS if seen[a]] + sorted(k for k in seen if k not in ACTIONS)
    return [{"project": pid, "records": share.records,
             "decisions": sum(share.actions.values()),
             "actions": {kind: share.actions[kind] for kind in kinds},
             "denials": share.denials, "first": share.first, "last": share.last,
             "head": {"seq": share.seq, "hash": share.hash, "rows": share.rows,
                      "links": share.broken or "hold"}}
            for pid, share in sorted(projects.items())]
