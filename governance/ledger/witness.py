"""Where the ledger's anchors come from, and what each says about the ledger now.

One source today: the head checkpoint under the user's home (``governance.ledger.anchor``). The
team server's copy of the head is the next one: it plugs in as another ``AnchorSource``, and
``ledger verify``, ``doctor`` and ``status`` report it without change. ``rebase`` anchors the
ledger as it is now (``governance ledger anchor``, the user's decision). Not on the hot path.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Protocol

from governance.ledger import anchor
from governance.ledger.divergence import Finding, compare, last_line, segment_end, segment_numbers
from governance.ledger.files import LEDGER, segment_name


class AnchorSource(Protocol):
    """Something that remembers where a ledger's chain stood."""

    name: str

    def read(self, gov_dir: str) -> tuple[str, dict[str, Any] | None]:
        """``(where it is kept, the anchor or None)``; ``ValueError`` when it cannot be read."""
        ...


class HomeAnchor:
    name = "home checkpoint"

    def read(self, gov_dir: str) -> tuple[str, dict[str, Any] | None]:
        return anchor.read(gov_dir)


@dataclass
class Check:
    """One source's verdict: ``state`` is ``matches``, ``differs``, ``unreadable`` or ``none``."""

    source: str
    where: str
    state: str
    seq: int | None = None
    finding: Finding | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.state in ("differs", "unreadable")

    def line(self) -> str:
        if self.state == "matches":
            return f"the ledger matches its anchor ({self.source} {self.where}, seq {self.seq})"
        if self.state == "none":
            return (f"the ledger has no anchor yet ({self.source} {self.where}); the next "
                    "record writes it")
        if self.state == "unreadable":
            return f"the ledger's anchor ({self.source}) cannot be read: {self.notes[0]}"
        assert self.finding is not None
        return (f"the ledger does not match its anchor ({self.source} {self.where}): "
                f"{self.finding.render()}")

    def as_json(self) -> dict[str, Any]:
        return {"source": self.source, "where": self.where, "state": self.state, "seq": self.seq,
                "kind": self.finding.kind if self.finding else None,
                "detail": self.finding.detail if self.finding else None, "notes": self.notes}


FIX = ("find out what changed it (`governance log`, errors.log, who ran what); once you know, "
       "`governance ledger anchor` anchors the ledger as it is now")


def check(gov_dir: str, sources: list[AnchorSource] | None = None) -> list[Check]:
    """The ledger in ``gov_dir`` against each source's anchor (default: the home checkpoint)."""
    found: list[Check] = []
    for source in sources if sources is not None else [HomeAnchor()]:
        try:
            where, held = source.read(gov_dir)
        except (OSError, ValueError) as exc:
            found.append(Check(source.name, getattr(exc, "filename", None) or "", "unreadable",
                               notes=[str(exc)]))
            continue
        if held is None:
            found.append(Check(source.name, where, "none"))
            continue
        finding, notes = compare(gov_dir, held)
        found.append(Check(source.name, where, "matches" if finding is None else "differs",
                           held["seq"], finding, notes))
    return found


def current_anchor(gov_dir: str) -> dict[str, Any] | None:
    """The anchor the ledger as it is now would have (``governance ledger anchor``)."""
    numbers = segment_numbers(gov_dir)
    top = max(numbers, default=0)
    live = os.path.join(gov_dir, LEDGER)
    found, start, end, _ = last_line(live)
    segment, path = top, live
    if found is None and top:   # an empty live file: the anchor is the last segment's end
        segment, path = top - 1, os.path.join(gov_dir, segment_name(top))
        found, start, end, _ = last_line(path)
    if found is None:
        return None
    info = os.stat(path)
    sealed = [end_ for end_ in (segment_end(gov_dir, n) for n in numbers if n <= segment)
              if end_ is not None]
    return anchor.build(gov_dir, found, [start, end], segment, [info.st_dev, info.st_ino], sealed)


def rebase(gov_dir: str) -> dict[str, Any] | None:
    """Anchor the ledger as it is now, whatever the anchor said (``governance ledger anchor``: the
    user's decision, after looking). Returns the new anchor; None when the ledger is empty (the
    anchor is then removed)."""
    from governance.project import replace_file

    path = anchor.path_for(gov_dir)
    found = current_anchor(gov_dir)
    if found is None:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        return None
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    replace_file(path, anchor.encode(found))
    return found
