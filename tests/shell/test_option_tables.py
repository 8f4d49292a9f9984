"""Options read as the program reads them (``shell.commands.*.options``, ``shell.rules``): short
clusters, attached and separate values, ``--opt=value`` and unambiguous abbreviations, built
from git's own option tables; and the everyday git commands they keep quiet."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from governance.shell.analysis import analyse_command
from governance.shell.rules import long_option, parse_spec
from governance.shell.schema import load_default_shell
from tests.shell.corpus import is_protected

SHELL = load_default_shell()
GIT = SHELL["commands"]["git"]
TABLES: dict[str, dict[str, int]] = GIT["options"]
VALUE = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_./", min_size=1, max_size=12)
STOPPED = {"destructive", "web-fetch", "vcs-push", "shell-unknown", "governance-admin",
           "code-exec", "package-install"}


def _short(table: dict[str, int], count: int) -> list[str]:
    return sorted(o for o, c in table.items() if len(o) == 2 and o[1].isalpha() and c == count)


def _unique_prefixes(table: dict[str, int], option: str) -> list[str]:
    longs = [o for o in table if o.startswith("--")]
    return [option[:k] for k in range(4, len(option))
            if [o for o in longs if o.startswith(option[:k])] == [option]]


@st.composite
def clusters(draw: st.DrawFn) -> tuple[str, list[str], str | None, str | None, list[str]]:
    """``git SUB -qvbVALUE ARGS``: flags, then at most one option that takes a value (attached
    to the cluster or in the next word), then positional arguments."""
    sub = draw(st.sampled_from(sorted(s for s in TABLES if _short(TABLES[s], 0))))
    table = TABLES[sub]
    flags = draw(st.lists(st.sampled_from(_short(table, 0)), min_size=1, max_size=4))
    takers = _short(table, 1)
    taker = draw(st.one_of(st.none(), st.sampled_from(takers))) if takers else None
    value = draw(VALUE) if taker else None
    rest = draw(st.lists(VALUE.filter(lambda v: not v.startswith("-")), max_size=2))
    return sub, flags, taker, value, rest


@settings(max_examples=300, deadline=None)
@given(clusters(), st.booleans())
def test_a_short_cluster_is_its_letters_and_the_value_of_the_last(
        case: tuple[str, list[str], str | None, str | None, list[str]], attached: bool) -> None:
    sub, flags, taker, value, rest = case
    word = "-" + "".join(f[1] for f in flags) + (taker[1] if taker else "")
    words = [sub, word + (str(value) if taker and attached else "")]
    if taker and not attached:
        words.append(str(value))
    words += rest
    argv = parse_spec(GIT, list(words), list(words))
    assert [f for f in argv.flags] == [*flags, *([taker] if taker else [])]
    assert [v for v, _ in argv.positionals] == [sub, *rest]
    if taker:
        assert [v for v, _ in argv.values[taker]] == [value]


@st.composite
def long_options(draw: st.DrawFn) -> tuple[str, str, str, str]:
    sub = draw(st.sampled_from(sorted(s for s, t in TABLES.items()
                                      if any(o.startswith("--") and c == 1 for o, c in t.items()))))
    table = TABLES[sub]
    option = draw(st.sampled_from(sorted(o for o, c in table.items()
                                         if o.startswith("--") and c == 1)))
    spelling = draw(st.sampled_from([option, *_unique_prefixes(table, option)]))
    return sub, option, spelling, draw(VALUE)


@settings(max_examples=300, deadline=None)
@given(long_options(), st.booleans())
def test_a_long_option_takes_its_value_however_it_is_spelled(
        case: tuple[str, str, str, str], joined: bool) -> None:
    sub, option, spelling, value = case
    words = [sub, f"{spelling}={value}"] if joined else [sub, spelling, value]
    argv = parse_spec(GIT, [*words, "main"], [*words, "main"])
    assert option in argv.flags
    assert [v for v, _ in argv.values[option]] == [value]
    assert [v for v, _ in argv.positionals] == [sub, "main"]


def test_an_ambiguous_abbreviation_is_kept_as_given() -> None:
    assert long_option("--for", TABLES["push"]) == "--for"      # --force, --force-with-lease
    assert long_option("--conf", TABLES["checkout"]) == "--conflict"


# --- what the reading changes -------------------------------------------------------------------
QUIET_FLAGS = {"checkout": ["-q", "-l", "-t", "--detach", "--progress", "--guess"],
               "switch": ["-q", "-d", "--progress", "-t", "--guess"]}
# -B and -C move an existing branch by force, as git branch -f does: destructive (below)
BRANCH_OPTIONS = {"checkout": ["-b", "--orphan"], "switch": ["-c", "--orphan"]}


@st.composite
def branch_switches(draw: st.DrawFn) -> str:
    """``git checkout -qbNAME``, ``git switch -c NAME START``, ``--conflict merge``: a new branch,
    no change discarded."""
    sub = draw(st.sampled_from(sorted(QUIET_FLAGS)))
    flags = draw(st.lists(st.sampled_from([f for f in QUIET_FLAGS[sub] if len(f) == 2]),
                          max_size=2))
    option = draw(st.sampled_from(BRANCH_OPTIONS[sub]))
    name = draw(st.sampled_from(["feature", "fix-1", "fuzz", "dev/x", "ff"]))
    if len(option) == 2 and draw(st.booleans()):
        word = "-" + "".join(f[1] for f in flags) + option[1] + name
        words = [word]
    else:
        words = [*flags, option, name]
    if draw(st.booleans()):
        words = ["--conflict", draw(st.sampled_from(["merge", "diff3", "zdiff3"])), *words]
    start = draw(st.sampled_from(["", " main", " origin/main"]))
    return f"git {sub} {' '.join(words)}{start}"


@settings(max_examples=200, deadline=None)
@given(branch_switches())
def test_creating_a_branch_discards_nothing(command: str) -> None:
    found = {a.primitive for a in analyse_command(command, SHELL, is_protected=is_protected)}
    assert "destructive" not in found, (command, found)


@pytest.mark.parametrize("command", ["git checkout -B main HEAD~5", "git checkout -qBmain",
                                     "git switch -C main HEAD~5", "git switch --force-create main"])
def test_moving_a_branch_by_force_is_destructive(command: str) -> None:
    found = {a.primitive for a in analyse_command(command, SHELL, is_protected=is_protected)}
    assert "destructive" in found


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["checkout", "switch"]), st.sampled_from(["-q", "-t", ""]),
       st.sampled_from(["main", "feature"]))
def test_force_in_a_cluster_is_still_force(sub: str, other: str, branch: str) -> None:
    command = f"git {sub} -{other.lstrip('-')}f {branch}"
    found = {a.primitive for a in analyse_command(command, SHELL, is_protected=is_protected)}
    assert "destructive" in found, command


EVERYDAY = ["git checkout -bfeature", "git checkout -qbfeature", "git switch -cfeature",
            "git checkout --conflict merge main", "git diff --unified 3",
            "git diff --inter-hunk-context 3", "git remote show -n origin",
            "git log -n 5 --author me", "git show --stat HEAD", "git stash push -m wip",
            "git branch -vv", "git tag -l 'v*'", "git diff -U5 HEAD~1", "git log --grep fix -p",
            "git commit -qam 'wip'", "git restore --staged -- a.py", "git clean -nd"]


def test_everyday_git_is_not_stopped() -> None:
    for command in EVERYDAY:
        found = {a.primitive for a in analyse_command(command, SHELL, is_protected=is_protected)}
        assert not found & STOPPED, (command, found)
