"""Calls governance denied (``block``, ``redirect``): by primitive, by state and by tool, and the
commands denied most often with the reason the model was given.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from governance.report.activity import DENYING
from governance.report.tally import TopCounts

TOP = 15
COMMAND_CHARS = 200


def command_of(rec: dict[str, Any]) -> str:
    """What was called, as the ledger holds it: the command segment that decided a Bash call
    (already redacted when it was recorded), else the tool and its primitive."""
    acts = rec.get("acts")
    if isinstance(acts, list):
        action = rec.get("action")
        segments = [a for a in acts if isinstance(a, dict) and a.get("segment")]
        chosen = next((a for a in segments if a.get("action") == action), None) or \
            (segments[0] if segments else None)
        if chosen is not None:
            return " ".join(str(chosen["segment"]).split())[:COMMAND_CHARS]
    return f"{rec.get('tool') or '?'} ({rec.get('primitive') or '?'})"


class Denials:
    """Fed the selected PreToolUse records."""

    def __init__(self) -> None:
        self.total = 0
        self.decisions = 0
        self.primitives: Counter[str] = Counter()
        self.states: Counter[str] = Counter()
        self.tools: Counter[str] = Counter()
        self.commands = TopCounts()

    def add(self, rec: dict[str, Any]) -> None:
        self.decisions += 1
        if rec.get("action") not in DENYING:
            return
        self.total += 1
        primitive = str(rec.get("primitive") or "?")
        state = str(rec.get("state") or "?")
        self.primitives[primitive] += 1
        self.states[state] += 1
        self.tools[str(rec.get("tool") or "?")] += 1
        self.commands.add(command_of(rec), {"reason": str(rec.get("reason") or ""),
                                            "primitive": primitive, "state": state,
                                            "action": str(rec.get("action")),
                                            "last": str(rec.get("ts", ""))})

    def figures(self) -> dict[str, Any]:
        return {"total": self.total, "decisions": self.decisions,
                "rate": round(self.total / self.decisions, 4) if self.decisions else None,
                "by_primitive": dict(self.primitives.most_common()),
                "by_state": dict(self.states.most_common()),
                "by_tool": dict(self.tools.most_common()),
                "top_commands": [{"command": command, "count": count, **note}
                                 for command, count, note in self.commands.top(TOP)],
                "distinct_commands_dropped": self.commands.dropped}
