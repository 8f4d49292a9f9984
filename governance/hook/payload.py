"""The hook input on stdin, checked against what Claude Code 2.1.330 sends.

Hot path: our ``jsoncodec`` only. Every problem is a PayloadError with a sentence that says what was wrong.
"""

from __future__ import annotations

from governance import jsoncodec
from governance.errors import PayloadError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, BinaryIO

MAX_BYTES = 64 * 1024 * 1024
TOOL_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure")


def read(stream: BinaryIO, events: tuple[str, ...]) -> dict[str, Any]:
    data = stream.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise PayloadError(f"hook input is larger than {MAX_BYTES} bytes")
    if not data.strip():
        raise PayloadError("hook input on stdin is empty")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PayloadError(f"hook input is not UTF-8 (byte {exc.start})") from None
    try:
        payload = jsoncodec.loads(text)
    except ValueError as exc:
        raise PayloadError(f"hook input is not JSON: {jsoncodec.problem(exc)}") from None
    except RecursionError:
        raise PayloadError("hook input is JSON nested too deep to read") from None
    if not isinstance(payload, dict):
        raise PayloadError(f"hook input is a JSON {type(payload).__name__}, not an object")
    # only an escape can name a lone surrogate: most payloads are not walked
    fields: dict[str, Any] = mend(payload) if "\\ud" in text or "\\uD" in text else payload
    check(fields, events)
    return fields


def mend(value: Any) -> Any:
    """``value`` with each lone UTF-16 surrogate (valid JSON, not a character) replaced by U+FFFD,
    as Claude Code's runtime does when it hands such a string to a file or a process."""
    if isinstance(value, str):
        return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    if isinstance(value, dict):
        return {mend(k): mend(v) for k, v in value.items()}
    if isinstance(value, list):
        return [mend(v) for v in value]
    return value


def _field(payload: dict[str, Any], name: str, kind: type, required: bool = True) -> None:
    value = payload.get(name)
    if value is None and not required:
        return
    if not isinstance(value, kind) or (kind is str and not value and required):
        got = "missing" if value is None else f"{type(value).__name__} {value!r:.60}"
        raise PayloadError(f"hook input field {name!r} should be a {kind.__name__}, got {got}")


def check(payload: dict[str, Any], events: tuple[str, ...]) -> None:
    _field(payload, "hook_event_name", str)
    event = payload["hook_event_name"]
    if event not in events:
        raise PayloadError(f"this hook handles {' and '.join(events)}, but was called for {event}; "
                           "check the event it is registered under in .claude/settings.json")
    _field(payload, "cwd", str)
    _field(payload, "session_id", str, required=False)
    if event in TOOL_EVENTS:
        _field(payload, "tool_name", str)
        _field(payload, "tool_input", dict)
        _field(payload, "tool_use_id", str, required=False)


def session_id(payload: dict[str, Any]) -> str:
    """The session id, sanitised so that it is safe in file names and logs."""
    raw = payload.get("session_id")
    if not isinstance(raw, str):
        return ""
    return "".join(ch for ch in raw[:128] if ch.isalnum() or ch in "-_")
