"""JSON for the hook's hot path, straight from CPython's ``_json`` accelerator.

``import json`` costs more than the rest of a hook call together, because ``json.decoder`` imports
``re`` (and ``re`` imports ``enum``) to compile a few patterns the C scanner never uses. This module
drives the same C scanner and encoder without them. The output is byte-for-byte what ``json.dumps``
gives for the same options; on an interpreter without ``_json`` it falls back to ``json``.
Errors are ``json.JSONDecodeError`` (a ``ValueError``) with exactly ``json.loads``'s message: the C
scanner reports errors through ``json.decoder``, which a hook process has not imported (it then
fails with a bare ``SystemError``), so malformed text is parsed again by ``json`` for its message.
Only malformed input pays for that import.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, ClassVar, NoReturn

try:
    import _json
except ImportError:  # pragma: no cover - not CPython
    _json = None  # type: ignore[assignment]

_CONSTANTS = {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}
_WS = " \t\n\r"


class _Context:
    """The attributes ``_json.make_scanner`` reads from a decoder."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = _CONSTANTS.__getitem__
    memo: ClassVar[dict[str, str]] = {}


_scan: Callable[[str, int], tuple[Any, int]] | None = (
    _json.make_scanner(_Context()) if _json is not None else None)  # type: ignore[arg-type]


def loads(text: str) -> Any:
    if _scan is None:  # pragma: no cover
        import json

        return json.loads(text)
    end = len(text.rstrip(_WS))           # in C: a ledger head is padded with spaces
    start = len(text) - len(text.lstrip(_WS)) if end else 0
    try:
        value, stop = _scan(text, start)
    except RecursionError:
        raise
    except Exception:  # StopIteration, SystemError, or JSONDecodeError once json is imported
        _explain(text)
    finally:
        _Context.memo.clear()
    if stop != end:
        _explain(text)
    return value


def problem(exc: ValueError) -> str:
    """A ``loads`` error as a short phrase: ``Expecting value at char 0``."""
    msg, pos = getattr(exc, "msg", None), getattr(exc, "pos", None)
    return f"{msg} at char {pos}" if isinstance(msg, str) and isinstance(pos, int) else str(exc)


def _explain(text: str) -> NoReturn:
    """Raise ``json.loads``'s own error for text the scanner refused."""
    import json

    json.loads(text)
    raise ValueError("not JSON: the scanner refused text that json accepts")  # pragma: no cover


def _encoder(sort_keys: bool, ascii_only: bool, separators: tuple[str, str],
             default: Callable[[Any], Any] | None) -> Callable[[Any, int], Any]:
    def refuse(obj: Any) -> Any:
        raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")

    assert _json is not None
    quote = _json.encode_basestring_ascii if ascii_only else _json.encode_basestring
    return _json.make_encoder({}, default or refuse, quote, None, separators[1], separators[0],
                              sort_keys, False, True)


def dumps(value: Any, *, sort_keys: bool = False, ensure_ascii: bool = True,
          separators: tuple[str, str] = (", ", ": "),
          default: Callable[[Any], Any] | None = None) -> str:
    """Like ``json.dumps`` with these options (no indentation)."""
    if _json is None or not isinstance(value, dict | list):  # pragma: no cover
        import json

        return json.dumps(value, sort_keys=sort_keys, ensure_ascii=ensure_ascii,
                          separators=separators, default=default)
    return "".join(_encoder(sort_keys, ensure_ascii, separators, default)(value, 0))
