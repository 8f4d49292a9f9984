"""The hot path's replacements for json and fnmatch behave exactly like the originals."""

from __future__ import annotations

import fnmatch
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from governance import jsoncodec
from governance.policy import wildcard

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=4),
    max_leaves=20)


@given(st.dictionaries(st.text(max_size=8), JSON, max_size=6))
@settings(max_examples=300, deadline=None)
def test_dumps_and_loads_match_json(value: dict) -> None:
    for kwargs in ({}, {"sort_keys": True, "separators": (",", ":"), "ensure_ascii": False}):
        text = jsoncodec.dumps(value, **kwargs)  # type: ignore[arg-type]
        assert text == json.dumps(value, **kwargs)  # type: ignore[arg-type]
        assert jsoncodec.loads(text) == json.loads(text)


@pytest.mark.parametrize("text", ["", "   ", "{", "[1,]", '{"a": 1} x', "nul", '{"a": "\\x"}'])
def test_loads_rejects_what_json_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        jsoncodec.loads(text)


def test_loads_accepts_surrounding_whitespace_and_constants() -> None:
    assert jsoncodec.loads(' \n {"a": [1, 2.5, true, null]} \r\n') == {"a": [1, 2.5, True, None]}
    assert jsoncodec.loads("[NaN]")[0] != jsoncodec.loads("[NaN]")[0]


ALPHABET = "ab*?[]!-/._"


@given(st.text(alphabet="ab/._-", max_size=12), st.text(alphabet=ALPHABET, max_size=10))
@settings(max_examples=2000, deadline=None)
def test_wildcard_matches_like_fnmatchcase(name: str, pattern: str) -> None:
    assert wildcard.match(name, pattern) == fnmatch.fnmatchcase(name, pattern), (name, pattern)


@pytest.mark.parametrize("name, pattern, expected", [
    ("mcp__memory__store", "mcp__memory__*", True),
    ("mcp__memory", "mcp__memory__*", False),
    (".claude/settings.local.json", ".claude/settings*.json", True),
    (".claude/governance/x/y", ".claude/governance/*", True),
    ("Edit", "Ed?t", True),
    ("b", "[a-c]", True),
    ("d", "[!a-c]", True),
    ("[", "[", True),
])
def test_wildcard_examples(name: str, pattern: str, expected: bool) -> None:
    assert wildcard.match(name, pattern) is expected
