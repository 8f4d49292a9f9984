from __future__ import annotations

from typing import Any

import pytest

from governance.decisions.condition import ConditionSyntaxError, compile_condition, evaluate, fields_of


def holds(raw: dict[str, Any], subject: dict[str, Any]) -> bool:
    return evaluate(compile_condition(raw), subject)


@pytest.mark.parametrize(("raw", "subject", "expected"), [
    ({"field": "stakes", "==": "high"}, {"stakes": "high"}, True),
    ({"field": "stakes", "==": "high"}, {"stakes": "low"}, False),
    ({"field": "stakes", "!=": "high"}, {"stakes": "low"}, True),
    ({"field": "confidence", "<": 0.5}, {"confidence": 0.49}, True),
    ({"field": "confidence", "<": 0.5}, {"confidence": 0.5}, False),
    ({"field": "confidence", "<=": 0.5}, {"confidence": 0.5}, True),
    ({"field": "confidence", ">": 0.5}, {"confidence": 0.51}, True),
    ({"field": "confidence", ">=": 0.5}, {"confidence": 0.5}, True),
    ({"field": "stakes", "in": ["high", "critical"]}, {"stakes": "critical"}, True),
    ({"field": "stakes", "in": ["high", "critical"]}, {"stakes": "medium"}, False),
    ({"field": "command", "matches": r"git push .*--force"},
     {"command": "git push origin main --force"}, True),
    ({"field": "command", "matches": r"^rm "}, {"command": "echo rm -rf"}, False),
    ({"field": "context.environment", "==": "production"},
     {"context": {"environment": "production"}}, True),
])
def test_comparisons(raw: dict[str, Any], subject: dict[str, Any], expected: bool) -> None:
    assert holds(raw, subject) is expected


def test_missing_fields_are_false_except_not_equal() -> None:
    for op, value in (("==", 1), ("<", 1), (">=", 1), ("in", [1]), ("matches", "x")):
        assert holds({"field": "context.nope", op: value}, {"context": {}}) is False
    assert holds({"field": "context.nope", "!=": 1}, {}) is True
    assert holds({"not": {"field": "context.review_completed", "==": True}}, {}) is True


def test_type_mismatches_never_hold() -> None:
    assert holds({"field": "confidence", "<": 0.5}, {"confidence": "0.1"}) is False
    assert holds({"field": "confidence", "<": 0.5}, {"confidence": True}) is False
    assert holds({"field": "name", "matches": "a"}, {"name": 5}) is False


def test_list_fields_match_when_any_item_does() -> None:
    subject = {"paths": ["/p/src/a.py", "/p/.env"], "tags": ["db"]}
    assert holds({"field": "paths", "matches": r"\.env$"}, subject) is True
    assert holds({"field": "paths", "matches": r"\.lock$"}, subject) is False
    assert holds({"field": "tags", "==": "db"}, subject) is True
    assert holds({"field": "paths", "!=": "/p/.env"}, subject) is False


def test_combinators() -> None:
    raw = {"all": [{"field": "stakes", "in": ["high", "critical"]},
                   {"any": [{"field": "confidence", "<": 0.5},
                            {"not": {"field": "context.reviewed", "==": True}}]}]}
    assert holds(raw, {"stakes": "high", "confidence": 0.9}) is True
    assert holds(raw, {"stakes": "high", "confidence": 0.9, "context": {"reviewed": True}}) \
        is False
    assert holds(raw, {"stakes": "high", "confidence": 0.1, "context": {"reviewed": True}}) \
        is True
    assert holds(raw, {"stakes": "low", "confidence": 0.1}) is False
    assert fields_of(compile_condition(raw)) == {"stakes", "confidence", "context.reviewed"}


@pytest.mark.parametrize(("raw", "key", "words"), [
    ({"field": "x", "<": [1]}, "condition.<", "number or a string"),
    ({"field": "x", "in": []}, "condition.in", "non-empty list"),
    ({"field": "x", "matches": "(unclosed"}, "condition.matches", "invalid regular expression"),
    ({"field": "x", "~=": 1}, "condition", "exactly one operator"),
    ({"field": "x", "==": 1, "!=": 2}, "condition", "exactly one operator"),
    ({"field": "bad field!", "==": 1}, "condition.field", "dotted field name"),
    ({"all": []}, "condition.all", "non-empty list"),
    ({"all": [{"field": "a", "==": 1}, {"oops": 1}]}, "condition.all[1]", "unknown keys"),
    ({"any": [{"field": "a", "==": 1}], "extra": 1}, "condition", "only key"),
    ({"not": "x"}, "condition.not", "expected a mapping"),
    ({"field": "x", "==": {"a": 1}}, "condition.==", "scalar"),
    ("stakes == high", "condition", "expected a mapping"),
])
def test_syntax_errors_name_the_key(raw: Any, key: str, words: str) -> None:
    with pytest.raises(ConditionSyntaxError) as caught:
        compile_condition(raw)
    assert caught.value.key == key
    assert words in caught.value.message


def test_compiled_form_is_plain_tuples() -> None:
    import marshal

    node = compile_condition({"all": [{"field": "a", "in": ["x", "y"]},
                                      {"not": {"field": "b", "matches": "^z"}}]})
    assert node == ("all", (("cmp", "a", "in", ("x", "y")),
                            ("not", ("cmp", "b", "matches", "^z"))))
    assert marshal.loads(marshal.dumps(node)) == node
