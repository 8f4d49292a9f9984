"""Validation of decision input from the CLI and the MCP server.

Every error names the field, what was expected and what was received, so an agent can correct its
call in one step. Validation happens before anything is written: nothing is half-recorded.
"""

from __future__ import annotations

from typing import Any

from governance.errors import GovernanceError

CATEGORIES = ("architecture", "process", "integration", "tooling", "security")
STAKES = ("low", "medium", "high", "critical")
OUTCOMES = ("success", "partial", "failure", "abandoned")
ACTION_KEYS = ("description", "category", "stakes", "confidence", "reasons", "tags", "pattern",
               "context")
MAX_TEXT = 10_000


class DecisionInputError(GovernanceError):
    """A decision, review or query argument is missing or has the wrong shape."""

    exit_code = 2


def _fail(key: str, expected: str, got: Any) -> DecisionInputError:
    shown = repr(got)
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return DecisionInputError(f"expected {expected}, got {shown}.", key=key,
                              fix=f"send {key} as {expected}.")


def text(value: Any, key: str, *, required: bool = True) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise _fail(key, "a non-empty string", value)
    if len(value) > MAX_TEXT:
        raise _fail(key, f"a string of at most {MAX_TEXT} characters", value)
    return value.strip()


def choice(value: Any, key: str, options: tuple[str, ...]) -> str:
    if value not in options:
        raise _fail(key, "one of " + ", ".join(options), value)
    return str(value)


def confidence(value: Any, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise _fail(key, "a number from 0 to 1", value)
    return float(value)


def tags(value: Any, key: str, *, required: bool) -> list[str]:
    if value is None:
        value = []
    if not isinstance(value, list) or not all(isinstance(t, str) and t.strip() for t in value):
        raise _fail(key, "a list of non-empty strings", value)
    cleaned = sorted({t.strip().lower() for t in value})
    if required and not cleaned:
        raise DecisionInputError(
            "at least one tag is required to record a decision (quality rule).", key=key,
            fix="add tags such as ['database', 'migration'], or set require_tags: false in "
                "guardrails.yaml settings.")
    return cleaned


def reasons(value: Any, key: str) -> list[dict[str, str]]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _fail(key, "a list of {type, text} objects", value)
    result: list[dict[str, str]] = []
    for index, item in enumerate(value):
        where = f"{key}[{index}]"
        if isinstance(item, str):
            item = {"type": "other", "text": item}
        if not isinstance(item, dict) or set(item) - {"type", "text"}:
            raise _fail(where, "an object {type, text}", item)
        result.append({"type": text(item.get("type", "other"), f"{where}.type"),
                       "text": text(item.get("text"), f"{where}.text")})
    return result


def action(raw: Any, *, require_tags: bool = True, require_pattern: bool = True,
           key: str = "action") -> dict[str, Any]:
    """Normalise a decision action; raise :class:`DecisionInputError` on the first bad field."""
    if not isinstance(raw, dict):
        raise _fail(key, "an object with " + ", ".join(ACTION_KEYS), raw)
    unknown = sorted(set(raw) - set(ACTION_KEYS))
    if unknown:
        raise DecisionInputError(f"unknown field(s) {unknown}.", key=key,
                                 fix="use only " + ", ".join(ACTION_KEYS) + ".")
    context = raw.get("context") or {}
    if not isinstance(context, dict):
        raise _fail(f"{key}.context", "an object", context)
    clean = {
        "description": text(raw.get("description"), f"{key}.description"),
        "category": choice(raw.get("category"), f"{key}.category", CATEGORIES),
        "stakes": choice(raw.get("stakes"), f"{key}.stakes", STAKES),
        "confidence": confidence(raw.get("confidence"), f"{key}.confidence"),
        "reasons": reasons(raw.get("reasons"), f"{key}.reasons"),
        "tags": tags(raw.get("tags"), f"{key}.tags", required=require_tags),
        "pattern": text(raw.get("pattern"), f"{key}.pattern", required=False),
        "context": context,
    }
    if require_pattern and not clean["pattern"]:
        raise DecisionInputError(
            "a pattern is required to record a decision (quality rule).", key=f"{key}.pattern",
            fix="name the reusable approach, e.g. 'expand-contract migration', or set "
                "require_pattern: false in guardrails.yaml settings.")
    return clean


def agent(value: Any, key: str = "agent_id") -> str:
    name = text(value, key)
    if len(name) > 200:
        raise _fail(key, "an agent id of at most 200 characters", name)
    return name


def load_json(source: str) -> Any:
    """JSON from a file path, or from standard input when ``source`` is ``-``."""
    import json
    import sys

    try:
        if source == "-":
            raw = sys.stdin.read()
        else:
            with open(source, encoding="utf-8") as handle:
                raw = handle.read()
    except OSError as exc:
        raise DecisionInputError(f"cannot read {source}: {exc.strerror}.", key="--json",
                                 fix="pass a readable JSON file or - for standard input.") from None
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise DecisionInputError(f"is not valid JSON: {exc}.", key="--json", file=source,
                                 fix="send one JSON object.") from None


def moment(value: str | None, key: str) -> float | None:
    """Seconds since the epoch from ``2026-05-01``, ``2026-05-01T12:00:00Z`` or ``7d``/``12h``."""
    import calendar
    import re
    import time

    if value is None:
        return None
    relative = re.fullmatch(r"(\d+)([dhm])", value)
    if relative:
        unit = {"d": 86400, "h": 3600, "m": 60}[relative.group(2)]
        return time.time() - int(relative.group(1)) * unit
    for form in ("%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d"):
        try:
            return float(calendar.timegm(time.strptime(value, form)))
        except ValueError:
            continue
    raise _fail(key, "a date (2026-05-01), a UTC time (2026-05-01T12:00:00Z) or an age (7d)",
                value)
