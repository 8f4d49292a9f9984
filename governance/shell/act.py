"""An act: one thing a tool call does, as the shell analysis (or the tool mapping) finds it.

Hot path: no imports.
"""

from __future__ import annotations


class Act:
    """One thing a tool call does: its primitive, the text it came from, and why."""

    __slots__ = ("primitive", "reason", "segment")

    def __init__(self, primitive: str, segment: str = "", reason: str = "") -> None:
        self.primitive = primitive
        self.segment = segment
        self.reason = reason
