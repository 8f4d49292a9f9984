"""A governance decision: the outcome, the rule that produced it, and the inputs that mattered.

The same object feeds the hook output, the ledger and ``governance check``. Hot path: no imports.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from governance.policy.state import StateView

# How restrictive each action is: the most restrictive act decides a compound call.
SEVERITY = {"allow": 0, "warn": 1, "ask": 2, "redirect": 3, "block": 3}


class Decision:
    __slots__ = (
        "action",
        "acts",
        "ask_refused",
        "layer",
        "layers",
        "map_rule",
        "message",
        "primitive",
        "redirect_to",
        "rule_file",
        "rule_key",
        "segment",
        "state",
        "tool",
    )

    def __init__(self, action: str, primitive: str, state: StateView, rule_file: str,
                 rule_key: str, message: str = "", redirect_to: str = "", tool: str = "",
                 segment: str = "") -> None:
        self.action = action
        self.primitive = primitive
        self.state = state
        self.rule_file = rule_file
        self.rule_key = rule_key
        self.message = message
        self.redirect_to = redirect_to
        self.tool = tool
        self.segment = segment
        self.ask_refused = ""   # an ask refused because the permission mode would approve it
        self.acts: list[dict[str, Any]] = []
        self.map_rule = ""
        self.layer = ""   # "org" when the organisation's layer decided (docs/organisation.md)
        # where the organisation writes this primitive's cell: its cell, the project's, the winner
        self.layers: dict[str, Any] | None = None

    @property
    def denies(self) -> bool:
        return self.action in ("block", "redirect")

    @property
    def rule(self) -> dict[str, str]:
        return {"file": self.rule_file, "key": self.rule_key}

    def as_record(self) -> dict[str, Any]:
        record: dict[str, Any] = {
            "tool": self.tool,
            "primitive": self.primitive,
            "primitives": sorted({a["primitive"] for a in self.acts}) or [self.primitive],
            "action": self.action,
            "rule": self.rule,
            "reason": self.message,
        }
        if self.acts and (len(self.acts) > 1 or self.acts[0].get("segment")):
            record["acts"] = self.acts
        if self.layer:
            record["layer"] = self.layer
        if self.layers:
            record["layers"] = self.layers
        if self.redirect_to:
            record["redirect_to"] = self.redirect_to
        if self.ask_refused:
            record["ask_refused"] = self.ask_refused
        record.update(self.state.as_record())
        return record
