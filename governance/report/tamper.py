"""Tamper evidence: whether the ledger's chain holds (``governance ledger verify``: the first
broken record, if any, and the anchors outside the project), and the records in which governance
found its own files changed behind its back (``unaccepted``: the state, the matrix or the owned
settings; ``tampered``: derived files rewritten) or the organisation's layer refused a call.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any

from governance.report.tally import TopCounts

LINE_CHARS = 600


class Evidence:
    """Fed the selected records."""

    def __init__(self) -> None:
        self.unaccepted: Counter[str] = Counter()
        self.tampered = TopCounts(100)
        self.org_refused = 0
        self.first_seen = ""
        self.last_seen = ""

    def add(self, rec: dict[str, Any]) -> None:
        found = False
        for part in rec.get("unaccepted") or ():
            self.unaccepted[str(part)] += 1
            found = True
        for name in rec.get("tampered") or ():
            self.tampered.add(str(name))
            found = True
        if rec.get("org_refused"):
            self.org_refused += 1
            found = True
        if found:
            ts = str(rec.get("ts", ""))
            self.first_seen = self.first_seen or ts
            self.last_seen = ts

    def figures(self) -> dict[str, Any]:
        return {"unaccepted": dict(self.unaccepted.most_common()),
                "tampered": {name: count for name, count, _note in self.tampered.top(20)},
                "org_refused": self.org_refused, "first_seen": self.first_seen,
                "last_seen": self.last_seen}


def verification(gov_dir: str) -> dict[str, Any]:
    """``governance ledger verify`` of the ledger (sealed segments verified before and unchanged
    since are taken as verified, as the command does without ``--full``), with the text of the
    first broken line when there is one."""
    from governance.ledger.verifier import verify

    report = verify(gov_dir)
    found = report.as_json()
    found["anchors"] = [{"source": check.source, "state": check.state, "line": check.line()}
                        for check in report.anchors]
    problem = report.problem
    if problem is not None:
        found["problem"]["render"] = problem.render()
        found["problem"]["text"] = _line(report.paths.get(problem.file)
                                         or os.path.join(gov_dir, problem.file), problem.line)
    return found


def _line(path: str, number: int) -> str:
    """Line ``number`` (from 1) of ``path``, clipped; "" when there is none."""
    if number < 1:
        return ""
    try:
        with open(path, "rb") as handle:
            for at, raw in enumerate(handle, 1):
                if at == number:
                    text = raw.decode("utf-8", "replace").rstrip("\n")
                    return text if len(text) <= LINE_CHARS else text[:LINE_CHARS] + "…"
    except OSError:
        return ""
    return ""
