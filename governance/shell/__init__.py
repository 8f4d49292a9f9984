"""Bash analysis: words, parser, resolver and rules turn a command into the acts it performs.

May use the root modules only; knows nothing of the matrix that decides the acts. ``Act``, the unit
the analysis yields and the policy decides, is defined here: every tool call has acts, and a module
of its own would cost each hook call one more import.
"""

from __future__ import annotations


class Act:
    """One thing a tool call does: its primitive, the text it came from, and why."""

    __slots__ = ("hosts", "primitive", "reason", "secrets", "segment", "targets")

    def __init__(self, primitive: str, segment: str = "", reason: str = "") -> None:
        self.primitive = primitive
        self.segment = segment
        self.reason = reason
        # the files the act writes or deletes, as the shell analysis found them ("?" for one it
        # cannot name); None when it names none
        self.targets: list[str] | None = None
        # the secrets it reads or carries, by name (``$GITHUB_TOKEN``) or pattern (``.env``),
        # never by value; the hosts a request goes to ("?" for one only known at run time)
        self.secrets: list[str] | None = None
        self.hosts: list[str] | None = None
