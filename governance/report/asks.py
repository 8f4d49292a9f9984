"""Calls governance put to the user (``ask``) and what became of them.

Claude Code does not tell a hook what the user answered; the ledger shows it: an approved call
runs and its PostToolUse record follows (``success`` or ``failure``, or ``interrupted``), a
refused one has no result. Asks are matched to their result by ``tool_use_id`` while the ledger
streams past; at most ``PENDING`` asks wait for their result at once (an older one still waiting
counts as having none), so memory does not grow with the ledger.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

PENDING = 10_000
ANSWERS = {"success": "approved, ran", "failure": "approved, failed",
           "interrupted": "approved, interrupted"}
NO_RESULT = "no result (refused by the user, or never finished)"


class Asks:
    """Fed the selected PreToolUse and PostToolUse records in ledger order."""

    def __init__(self) -> None:
        self.total = 0
        self.refused_by_mode = 0         # asks turned into denials in bypassPermissions mode
        self.primitives: Counter[str] = Counter()
        self.answers: Counter[str] = Counter()
        self.pending: dict[str, None] = {}

    def decision(self, rec: dict[str, Any]) -> None:
        if rec.get("ask_refused"):
            self.refused_by_mode += 1
        if rec.get("action") != "ask":
            return
        self.total += 1
        self.primitives[str(rec.get("primitive") or "?")] += 1
        call = str(rec.get("tool_use_id") or "")
        if not call:
            self.answers[NO_RESULT] += 1
            return
        self.pending[call] = None
        if len(self.pending) > PENDING:
            del self.pending[next(iter(self.pending))]
            self.answers[NO_RESULT] += 1

    def result(self, rec: dict[str, Any]) -> None:
        call = rec.get("tool_use_id")
        if not call or not self.pending or call not in self.pending:
            return
        del self.pending[call]
        self.answers[ANSWERS.get(str(rec.get("outcome")), "approved, ran")] += 1

    def settle(self) -> None:
        """A ledger ended (another project's follows): the asks still waiting have no result."""
        self.answers[NO_RESULT] += len(self.pending)
        self.pending.clear()

    def figures(self) -> dict[str, Any]:
        answers = Counter(self.answers)
        if self.pending:
            answers[NO_RESULT] += len(self.pending)
        order = [*ANSWERS.values(), NO_RESULT]
        approved = sum(answers[label] for label in ANSWERS.values())
        return {"total": self.total,
                "answers": {label: answers[label] for label in order if answers[label]},
                "approved_rate": round(approved / self.total, 4) if self.total else None,
                "by_primitive": dict(self.primitives.most_common()),
                "refused_in_bypass_mode": self.refused_by_mode}
