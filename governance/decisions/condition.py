"""The guardrail condition language: data in, a compiled tuple tree out, no ``eval``.

A condition is a mapping. A *comparison* names a field and exactly one operator::

    {field: confidence, "<": 0.5}
    {field: stakes, in: [high, critical]}
    {field: command, matches: "git push .*--force"}

and *combinators* nest them: ``{all: [...]}``, ``{any: [...]}``, ``{not: {...}}``.

Fields are dotted paths into the subject (``context.environment``). A missing field makes every
comparison false except ``!=``. A list-valued field (``paths``, ``tags``) satisfies a comparison
when any of its items does. ``matches`` is a regular-expression search.

Hot path: :func:`evaluate` imports nothing, and ``re`` only when a ``matches`` comparison runs.
:func:`compile_condition` validates and returns a tree of tuples that ``marshal`` can store::

    ("all", (node, ...)) | ("any", (node, ...)) | ("not", node) | ("cmp", field, op, value)
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from typing import Any

OPERATORS = ("==", "!=", "<", "<=", ">", ">=", "in", "matches")
COMBINATORS = ("all", "any", "not")
_MISSING = object()
_REGEX_CACHE: dict[str, re.Pattern[str]] = {}


class ConditionSyntaxError(ValueError):
    """A condition is malformed; ``key`` is the dotted path of the offending key."""

    def __init__(self, key: str, message: str) -> None:
        self.key = key
        self.message = message
        super().__init__(f"{key}: {message}")


def compile_condition(raw: Any, key: str = "condition") -> tuple[Any, ...]:
    """Validate ``raw`` and return its tuple tree; raise :class:`ConditionSyntaxError`."""
    import re

    if not isinstance(raw, dict) or not raw:
        raise ConditionSyntaxError(key, f"expected a mapping with 'all', 'any', 'not' or "
                                        f"'field', got {raw!r}")
    combinators = [name for name in COMBINATORS if name in raw]
    if combinators:
        if len(raw) != 1:
            raise ConditionSyntaxError(key, f"'{combinators[0]}' must be the only key, got "
                                            f"{sorted(raw)}")
        name = combinators[0]
        body = raw[name]
        if name == "not":
            return ("not", compile_condition(body, f"{key}.not"))
        if not isinstance(body, list) or not body:
            raise ConditionSyntaxError(f"{key}.{name}", "expected a non-empty list of conditions")
        return (name, tuple(compile_condition(item, f"{key}.{name}[{index}]")
                            for index, item in enumerate(body)))
    if "field" not in raw:
        raise ConditionSyntaxError(key, f"unknown keys {sorted(raw)}; expected 'all', 'any', "
                                        f"'not' or 'field' with one of {', '.join(OPERATORS)}")
    field = raw["field"]
    if not isinstance(field, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*",
                                                      field):
        raise ConditionSyntaxError(f"{key}.field", f"expected a dotted field name, got {field!r}")
    ops = [name for name in raw if name != "field"]
    if len(ops) != 1 or ops[0] not in OPERATORS:
        raise ConditionSyntaxError(key, f"expected exactly one operator out of "
                                        f"{', '.join(OPERATORS)}, got {ops}")
    op = ops[0]
    value = raw[op]
    where = f"{key}.{op}"
    if op in ("<", "<=", ">", ">=") and (isinstance(value, bool)
                                         or not isinstance(value, int | float | str)):
        raise ConditionSyntaxError(where, f"expected a number or a string, got {value!r}")
    if op == "in":
        if not isinstance(value, list) or not value:
            raise ConditionSyntaxError(where, f"expected a non-empty list, got {value!r}")
        value = tuple(value)
    if op == "matches":
        if not isinstance(value, str):
            raise ConditionSyntaxError(where, f"expected a regular expression string, got "
                                              f"{value!r}")
        try:
            re.compile(value)
        except re.error as exc:
            raise ConditionSyntaxError(where, f"invalid regular expression {value!r}: "
                                              f"{exc}") from None
    if isinstance(value, dict | list):
        raise ConditionSyntaxError(where, f"expected a scalar value, got {value!r}")
    return ("cmp", field, op, value)


def fields_of(node: tuple[Any, ...]) -> set[str]:
    """The field names a compiled condition reads (for deciding where it can run)."""
    kind = node[0]
    if kind == "cmp":
        return {node[1]}
    if kind == "not":
        return fields_of(node[1])
    found: set[str] = set()
    for child in node[1]:
        found |= fields_of(child)
    return found


def resolve(subject: dict[str, Any], field: str) -> Any:
    """Value of a dotted ``field`` in ``subject``, or the module's missing marker."""
    value: Any = subject
    for part in field.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        else:
            return _MISSING
    return value


def _compare(value: Any, op: str, expected: Any) -> bool:
    left: Any = value
    right: Any = expected
    if op == "==":
        return bool(value == expected)
    if op == "!=":
        return bool(value != expected)
    if op == "in":
        return value in expected
    if op == "matches":
        if not isinstance(value, str):
            return False
        pattern = _REGEX_CACHE.get(expected)
        if pattern is None:
            import re

            pattern = _REGEX_CACHE[expected] = re.compile(expected)
        return pattern.search(value) is not None
    if isinstance(value, bool) or not (
            (isinstance(value, int | float) and isinstance(expected, int | float))
            or (isinstance(value, str) and isinstance(expected, str))):
        return False
    if op == "<":
        return bool(left < right)
    if op == "<=":
        return bool(left <= right)
    if op == ">":
        return bool(left > right)
    return bool(left >= right)


def evaluate(node: tuple[Any, ...], subject: dict[str, Any]) -> bool:
    """Whether the compiled condition ``node`` holds for ``subject``."""
    kind = node[0]
    if kind == "cmp":
        value = resolve(subject, node[1])
        op = node[2]
        if value is _MISSING:
            return bool(op == "!=")
        if isinstance(value, list | tuple):
            if op == "!=":
                return all(_compare(item, op, node[3]) for item in value)
            return any(_compare(item, op, node[3]) for item in value)
        return _compare(value, op, node[3])
    if kind == "all":
        return all(evaluate(child, subject) for child in node[1])
    if kind == "any":
        return any(evaluate(child, subject) for child in node[1])
    return not evaluate(node[1], subject)
