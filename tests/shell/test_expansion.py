"""Pathname expansion as bash does it (governance/shell/expansion.py): brace words compared with
bash's own expansion, glob segments with ``fnmatch``'s rules, a tree read from disk."""

from __future__ import annotations

import fnmatch
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from governance.shell.braces import MAX_WORDS, braces
from governance.shell.expansion import could_name, expand, match

BASH = shutil.which("bash")
BRACE_WORDS = st.lists(st.sampled_from(["a", "b", "x.", "/", "{a,b}", "{1..3}", "{x,{y,z}}",
                                        "{a,}", "{,.claude}", "{c..e}", "{5..1..2}", "c"]),
                       min_size=1, max_size=6).map("".join)
# stray braces, commas and dots: bash reads some of these its own way (`a{}x.,}` is `a}x.` and
# `a`); the analysis then checks the word without its braces (docs/shell.md)
ODD_WORDS = st.lists(st.sampled_from(["a", "{", "}", ",", "..", "{a,b}", "x"]), max_size=12
                     ).map("".join)


@pytest.mark.skipif(BASH is None, reason="needs bash")
@settings(max_examples=150, deadline=None)
@given(word=BRACE_WORDS)
def test_brace_words_are_the_words_bash_makes(word: str) -> None:
    done = subprocess.run([str(BASH), "-c", f"set -f; printf '%s\\n' {word}"],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        return                                 # not a word bash accepts here
    ours = [w for w in braces(word) if w]
    theirs = [w for w in done.stdout.split("\n")[:-1] if w]
    if len(theirs) < MAX_WORDS:
        assert ours == theirs, word


@settings(max_examples=200, deadline=None)
@given(word=ODD_WORDS)
def test_odd_brace_words_give_a_bounded_list(word: str) -> None:
    words = braces(word)
    assert 1 <= len(words) <= MAX_WORDS
    assert all(isinstance(w, str) for w in words)


SEGMENTS = st.text(alphabet="ab.*?[]!-c", min_size=1, max_size=6)
NAMES = st.text(alphabet="ab.c-", min_size=1, max_size=6)


@settings(max_examples=400, deadline=None)
@given(pattern=SEGMENTS, name=NAMES)
def test_a_glob_segment_matches_as_fnmatch_does(pattern: str, name: str) -> None:
    if name.startswith(".") and not pattern.startswith("."):
        assert not match(pattern, name)        # bash: a leading dot is matched only by a dot
        return
    if "[" in pattern and "]" in pattern:      # class bodies differ in corner cases (`[]`, `[!]`)
        return
    assert match(pattern, name) == fnmatch.fnmatchcase(name, pattern), (pattern, name)


def test_a_pattern_is_expanded_against_the_tree(tmp_path: Path) -> None:
    (tmp_path / ".claude" / "governance").mkdir(parents=True)
    (tmp_path / ".claude" / "governance" / "state.json").write_text("{}")
    (tmp_path / ".claude" / "settings.json").write_text("{}")
    (tmp_path / "docs").mkdir()
    assert expand(".cl*/gov*/state.json", str(tmp_path)) == [".claude/governance/state.json"]
    assert expand(".claude/s?ttings.json", str(tmp_path)) == [".claude/settings.json"]
    assert expand("*/settings.json", str(tmp_path)) == []
    assert expand("*/settings.json", str(tmp_path), dots=True) == [".claude/settings.json"]
    assert expand("nowhere/*", str(tmp_path)) == []


def test_a_pattern_that_cannot_be_read_is_compared_with_the_protected_places() -> None:
    assert could_name(".cl*/settings.json", ".claude/settings.json")
    assert could_name(".c?aude/gov*/state.json", ".claude/governance")
    assert not could_name("docs/*.md", ".claude/settings.json")
    assert not could_name(".cl*", ".claude/governance")
