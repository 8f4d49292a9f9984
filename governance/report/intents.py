"""Intents at work: the share of edited lines the trace ties to an intent, the changes made under
each intent, and the changes refused for want of one or outside its scope.

Refusals come from the ledger (a PreToolUse record denied by ``settings.require_intent``); edited
lines from the trace (``governance.intent.trace``: one record per changed file, with its line
ranges and its intent), read file by file like the ledger. A trace record has a time but no
cycle state or agent: only the time window selects it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

from governance.report.activity import DENYING

RULE = "settings.require_intent"
OUT_OF_SCOPE = " is outside the scope of intent "
NO_INTENT = "(none)"


class Intents:
    """Fed the selected PreToolUse records; then the trace, by :meth:`add_trace`."""

    def __init__(self) -> None:
        self.refused_no_intent = 0
        self.refused_out_of_scope: Counter[str] = Counter()
        self.refused_other = 0
        self.calls: Counter[str] = Counter()        # calls let through under each intent
        self.lines: Counter[str] = Counter()        # edited lines per intent (NO_INTENT: none)
        self.files: Counter[str] = Counter()        # changed files per intent
        self.trace_records = 0

    def add(self, rec: dict[str, Any]) -> None:
        rule = rec.get("rule")
        denied = rec.get("action") in DENYING
        if denied and isinstance(rule, dict) and rule.get("key") == RULE:
            reason = str(rec.get("reason") or "")
            at = reason.find(OUT_OF_SCOPE)
            if reason.startswith("No intent is active"):
                self.refused_no_intent += 1
            elif at >= 0:
                self.refused_out_of_scope[reason[at + len(OUT_OF_SCOPE):].split(" ", 1)[0]] += 1
            else:
                self.refused_other += 1
        elif not denied and rec.get("intent"):
            self.calls[str(rec["intent"])] += 1

    def add_trace(self, entry: dict[str, Any]) -> None:
        """One trace record: its files' changed lines, counted under its intent."""
        meta = entry.get("metadata")
        governance = meta.get("governance") if isinstance(meta, dict) else None
        intent = str((governance if isinstance(governance, dict) else {}).get("intent_id")
                     or NO_INTENT)
        self.trace_records += 1
        for changed in entry.get("files") or ():
            if not isinstance(changed, dict):
                continue
            self.files[intent] += 1
            for talk in changed.get("conversations") or ():
                for span in (talk.get("ranges") or ()) if isinstance(talk, dict) else ():
                    try:
                        self.lines[intent] += max(0, int(span["end_line"]) -
                                                  int(span["start_line"]) + 1)
                    except (KeyError, TypeError, ValueError):
                        continue

    def figures(self) -> dict[str, Any]:
        total = sum(self.lines.values())
        traced = total - self.lines[NO_INTENT]
        names = sorted(set(self.lines) | set(self.calls) | set(self.refused_out_of_scope),
                       key=lambda name: (name == NO_INTENT, -self.lines[name], name))
        return {"trace_records": self.trace_records, "edited_lines": total,
                "traced_lines": traced, "traced_share": round(traced / total, 4) if total else None,
                "refused": {"no_intent": self.refused_no_intent,
                            "out_of_scope": sum(self.refused_out_of_scope.values()),
                            "other": self.refused_other},
                "per_intent": [{"intent": name, "lines": self.lines[name],
                                "files": self.files[name], "calls": self.calls[name],
                                "refused_out_of_scope": self.refused_out_of_scope[name]}
                               for name in names]}


def trace_entries(project: str, keep: Callable[[str], bool]) -> Iterator[dict[str, Any]]:
    """The trace's records, oldest first, whose ``timestamp`` ``keep`` accepts (lines that do not
    parse are skipped: ``governance trace verify`` judges them)."""
    from governance.intent import trace

    for path in trace.files(project):
        with open(path, "rb") as handle:
            for raw in handle:
                try:
                    entry = json.loads(raw)
                except ValueError:
                    continue
                if isinstance(entry, dict) and keep(str(entry.get("timestamp", ""))):
                    yield entry
