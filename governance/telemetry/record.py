"""A ledger record as an OpenTelemetry log record: its time, severity, body and attributes, as plain
Python values (``governance.telemetry.wire`` puts them into protobuf).

What is sent is chosen, not copied: the fields below and nothing else (no digests, no tool input).
Every string goes through the ledger's ``redact`` again, although the ledger stores records already
redacted: a record written by an older version, or by hand, must not carry a secret further.

The attribute ``governance.record.id`` is the record's hash, unique and stable, and the log
record's time and observed time are the record's ``ts``: a record sent twice (a collector that
stored a batch but died before it acknowledged) is the same log record twice, which a receiver can
drop by that id. ``session.id`` is the attribute Claude Code's own events carry, so the two join.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from governance.ledger.redaction import redact

# OpenTelemetry severity numbers (logs data model).
INFO, WARN, ERROR = 9, 13, 17
DENYING = ("block", "redirect")
TEXT_LIMIT = 1000   # characters of any one string sent

RECORD_ID = "governance.record.id"
EVENT_NAME = "event.name"
# attribute -> the record's field; a field the record lacks (or leaves empty) is omitted.
FIELDS: dict[str, str] = {
    "governance.event": "event",
    "governance.primitive": "primitive",
    "governance.state": "state",
    "governance.action": "action",
    "governance.tool": "tool",
    "governance.layer": "layer",
    "session.id": "session",
    "governance.agent.type": "agent_type",
    "governance.decision": "decision",
    "governance.outcome": "outcome",
    "governance.tool_use_id": "tool_use_id",
    "governance.cycle": "cycle",
    "governance.phase": "phase",
    "governance.work_item": "work_item",
    "governance.intent": "intent",
    "governance.redirect_to": "redirect_to",
}
NUMBERS: dict[str, str] = {
    "governance.record.seq": "seq",
    "governance.duration_ms": "duration_ms",
    "governance.tool_duration_ms": "tool_duration_ms",
}
# The texts a record explains itself with, the first present becoming the log record's body.
BODIES = ("reason", "error", "org_refused", "message")

Value = str | int | float | bool | list[str]


@dataclass
class LogFields:
    """One log record, ready for the wire."""

    time_ns: int
    severity: int
    severity_text: str
    body: str
    event_name: str
    attributes: dict[str, Value] = field(default_factory=dict)


def _text(value: Any) -> str:
    return redact(str(value))[:TEXT_LIMIT]


def event_name(event: str) -> str:
    """``PreToolUse`` -> ``governance.pre_tool_use``; ``CSTP`` -> ``governance.cstp``."""
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", event).lower()
    return "governance." + (re.sub(r"[^a-z0-9_.]+", "_", snake).strip("_") or "record")


def time_ns(ts: Any) -> int:
    """Nanoseconds since the epoch of a ledger ``ts`` (ISO 8601, UTC); 0 (unknown, as OTLP says)
    for anything else."""
    if not isinstance(ts, str) or not ts:
        return 0
    try:
        moment = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return 0
    if moment.tzinfo is None:
        return 0
    whole = int(moment.timestamp())
    return whole * 1_000_000_000 + moment.microsecond * 1000


def severity(record: dict[str, Any]) -> tuple[int, str]:
    if record.get("org_refused"):
        return ERROR, "ERROR"
    if record.get("action") in DENYING or record.get("decision") == "deny":
        return WARN, "WARN"
    return INFO, "INFO"


def _rule(record: dict[str, Any]) -> dict[str, Value]:
    rule = record.get("rule")
    if isinstance(rule, dict):
        found: dict[str, Value] = {}
        if rule.get("key"):
            found["governance.rule"] = _text(rule["key"])
        if rule.get("file"):
            found["governance.rule.file"] = _text(rule["file"])
        return found
    return {"governance.rule": _text(rule)} if rule else {}


def _command(record: dict[str, Any]) -> list[str]:
    """The parts of a command that were decided (a Bash call's ``acts``), redacted."""
    acts = record.get("acts")
    if not isinstance(acts, list):
        return []
    return [_text(act["segment"]) for act in acts
            if isinstance(act, dict) and act.get("segment")][:50]


def log_fields(record: dict[str, Any]) -> LogFields:
    """The log record for one ledger record."""
    event = str(record.get("event") or "")
    attributes: dict[str, Value] = {EVENT_NAME: event_name(event)}
    if record.get("hash"):
        attributes[RECORD_ID] = _text(record["hash"])
    for name, key in FIELDS.items():
        value = record.get(key)
        if value not in (None, ""):
            attributes[name] = _text(value)
    agent = record.get("agent") or record.get("agent_id")
    if agent:
        attributes["governance.agent"] = _text(agent)
    attributes.update(_rule(record))
    for name, key in NUMBERS.items():
        number = record.get(key)
        if isinstance(number, int | float) and not isinstance(number, bool):
            attributes[name] = number
    command = _command(record)
    if command:
        attributes["governance.command"] = command
    body = next((_text(record[key]) for key in BODIES if record.get(key)), "")
    if not body:
        words = [event, str(record.get("tool") or ""),
                 str(record.get("action") or record.get("outcome") or "")]
        body = _text(" ".join(word for word in words if word))
    number, text = severity(record)
    return LogFields(time_ns=time_ns(record.get("ts")), severity=number, severity_text=text,
                     body=body, event_name=event_name(event), attributes=attributes)
