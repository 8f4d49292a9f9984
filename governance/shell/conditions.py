"""SQL conditions that hold for every row: a ``DELETE`` or ``UPDATE`` whose ``WHERE`` is always
true changes the whole table, as one without ``WHERE`` does.

A condition is read as ``OR`` of ``AND`` of (possibly ``NOT``) terms, with parentheses. A term is
always true when it is a true constant (``TRUE``, ``1``, ``'1'``, any number but 0), compares an
operand with itself (``id = id``, ``'a' = 'a'``, ``x >= x``, ``x LIKE x``), compares two
constants whose comparison holds (``1 = 1``, ``2 > 1``, ``'a' <> 'b'``), or is ``x LIKE '%'``;
always false when it is a false constant or such a comparison that fails. ``OR`` with one
always-true branch, and ``AND`` of always-true terms, are always true. Anything else (``id = 7``,
a function call, a subquery) is not known. Imported by ``shell.queries``; no imports.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

_EQUAL = ("=", "==", "<=", ">=", "LIKE", "ILIKE", "IS", "<=>", "GLOB")
_COMPARE = ("=", "==", "<>", "!=", "<", ">", "<=", ">=", "LIKE", "ILIKE", "IS", "<=>", "GLOB")
_TRUE = ("TRUE", "ON", "YES")
_FALSE = ("FALSE", "OFF", "NO", "NULL")


def always_true(tokens: list[tuple[str, int]]) -> bool:
    """Whether the condition ``tokens`` (words upper-cased, literals as written, each with its
    parenthesis depth, as ``shell.queries`` splits them) holds for every row."""
    if not tokens:
        return False
    words: list[str] = []
    level = tokens[0][1]
    for tok, depth in tokens:
        words.extend(["("] * (depth - level) if depth > level else [")"] * (level - depth))
        level = depth
        words.append(tok)
    words.extend([")"] * (level - tokens[0][1]))
    value, end = _or(words, 0)
    return value is True and end >= len(words)


def _or(words: list[str], i: int) -> tuple[bool | None, int]:
    return _joined(words, i, ("OR", "||"), _and, True)


def _and(words: list[str], i: int) -> tuple[bool | None, int]:
    return _joined(words, i, ("AND", "&&"), _not, False)


def _joined(words: list[str], i: int, operators: tuple[str, str],
            side: Callable[[list[str], int], tuple[bool | None, int]], decides: bool
            ) -> tuple[bool | None, int]:
    """Sides joined by ``operators``: ``decides`` when one side is, the other value when
    every side is, else unknown (None)."""
    value, i = side(words, i)
    while i < len(words) and words[i] in operators:
        right, i = side(words, i + 1)
        value = decides if decides in (value, right) else (not decides) if (
            value is (not decides) and right is (not decides)) else None
    return value, i


def _not(words: list[str], i: int) -> tuple[bool | None, int]:
    if i < len(words) and words[i] in ("NOT", "!"):
        value, i = _not(words, i + 1)
        return (None if value is None else not value), i
    if i < len(words) and words[i] == "(":
        value, i = _or(words, i + 1)
        if i < len(words) and words[i] == ")":
            i += 1
        if i < len(words) and words[i] in _COMPARE:     # (a) = (a): compared, not a group
            return None, _skip(words, i)
        return value, i
    return _term(words, i)


def _skip(words: list[str], i: int) -> int:
    while i < len(words) and words[i] not in ("AND", "OR", "&&", "||", ")"):
        i += 1
    return i


def _term(words: list[str], i: int) -> tuple[bool | None, int]:
    end = _skip(words, i)
    term = words[i:end]
    if len(term) == 1:
        return _constant(term[0]), end
    if len(term) == 3 and term[1] in _COMPARE:
        left, op, right = term
        if op == "LIKE" and right in ("'%'", '"%"'):
            return True, end
        if left == right and op in _EQUAL and left not in _FALSE:
            return True, end
        return _compare(left, op, right), end
    if len(term) == 4 and term[1:3] == ["IS", "NOT"] and term[3] == "NULL" and \
            _literal(term[0]) is not None:
        return True, end
    return None, end


def _constant(word: str) -> bool | None:
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    value = _literal(word)
    if isinstance(value, float):
        return value != 0
    if isinstance(value, str):          # MySQL reads a string as the number it starts with
        head = value.strip().split(" ")[0]
        try:
            return float(head) != 0
        except ValueError:
            return False
    return None


def _literal(word: str) -> float | str | None:
    if len(word) >= 2 and word[0] == word[-1] and word[0] in "'\"":
        return word[1:-1]
    try:
        return float(word)
    except ValueError:
        return None


def _compare(left: str, op: str, right: str) -> bool | None:
    a, b = _literal(left), _literal(right)
    if a is None or b is None or type(a) is not type(b):
        return None
    ka, kb = _key(a), _key(b)
    sign = (ka > kb) - (ka < kb)
    if op in ("<>", "!="):
        return sign != 0
    if op in ("<", ">", "<=", ">="):
        return {"<": sign < 0, ">": sign > 0, "<=": sign <= 0, ">=": sign >= 0}[op]
    return sign == 0


def _key(value: float | str) -> tuple[float, str]:
    return (value, "") if isinstance(value, float) else (0.0, value)
