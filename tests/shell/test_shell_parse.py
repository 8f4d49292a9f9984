"""The Bash parser on its own: segments, words, redirections, heredocs, errors."""

from __future__ import annotations

import pytest

from governance.shell.parser import LimitError, ParseError, parse


def segments(text: str) -> list[str]:
    return [c.segment for c in parse(text) if c.words]


def test_lists_pipelines_and_background() -> None:
    cmds = parse("a 1 && b | c; d & e\nf || g |& h")
    assert [c.segment for c in cmds] == ["a 1", "b", "c", "d", "e", "f", "g", "h"]
    assert [c.background for c in cmds] == [False, False, False, True, False, False, False,
                                            False]


def test_background_applies_to_the_whole_and_or_list() -> None:
    cmds = parse("a && b &\nc")
    assert [c.background for c in cmds] == [True, True, False]


def test_compound_commands_are_flattened() -> None:
    text = ("if a; then b; elif c; then d; else e; fi; while f; do g; done; "
            "for x in y z; do h; done; { i; }; (j); case k in l|m) n;; *) o;; esac")
    assert segments(text) == list("abcdefghijno")


def test_function_definitions_hold_their_body() -> None:
    cmds = parse("f() { curl x; }; function g { wget y; }; f")
    assert [c.function[0] if c.function else c.segment for c in cmds] == ["f", "g", "f"]
    assert [[b.segment for b in c.function[1]] for c in cmds if c.function] == [["curl x"],
                                                                                  ["wget y"]]


def test_quoting_and_escapes_are_removed() -> None:
    (cmd,) = parse("'r'm \"a b\" c\\ d $'\\x72\\155' $\"q\"")
    values = ["".join(p[1] for p in w.parts) for w in cmd.words]
    assert values == ["rm", "a b", "c d", "rm", "q"]


def test_substitutions_are_nested_command_lists() -> None:
    (cmd,) = parse('echo "$(curl x)" `wget y` <(ls) ${v:-$(id)} $((1 + $(date)))')
    nested = [c.segment for w in cmd.words for p in w.parts if p[3] for c in p[3]]
    assert nested == ["curl x", "wget y", "ls", "id", "date"]


def test_assignments_and_redirections() -> None:
    (cmd,) = parse("A=1 B=\"x y\" cmd 2>&1 >> out.log < in.txt")
    assert [name for name, _ in cmd.assigns] == ["A", "B"]
    assert [r.op for r in cmd.redirs] == [">&", ">>", "<"]
    assert cmd.segment == "A=1 B=\"x y\" cmd 2>&1 >> out.log < in.txt"


def test_heredocs_keep_their_body_and_expand_only_when_unquoted() -> None:
    cmds = parse("cat <<EOF > a\n$(rm x)\nEOF\ncat <<'EOF'\n$(rm y)\nEOF\ncat <<-X\n\tz\n\tX\n")
    first, second, third = cmds
    assert first.redirs[0].body == "$(rm x)\n"
    assert [c.segment for c in first.redirs[0].body_subs] == ["rm x"]
    assert second.redirs[0].body == "$(rm y)\n" and second.redirs[0].body_subs == []
    assert third.redirs[0].body == "\tz\n"


def test_condition_operators_are_words() -> None:
    (cmd,) = parse("[[ -f a && $b > c || ( d ) ]]")
    assert cmd.redirs == []
    assert len(cmd.words) > 6


def test_comments_and_line_continuations() -> None:
    assert segments("ls # rm -rf /\necho \\\n  hi") == ["ls", "echo \\\n  hi"]


@pytest.mark.parametrize("text", ["echo 'x", "echo \"x", "echo $(x", "echo `x", "a )", "a ;; b",
                                  "echo ${x", "case a in", "echo > ", "(( 1 )"])
def test_malformed_input_raises_parse_error(text: str) -> None:
    with pytest.raises(ParseError):
        parse(text)


def test_limits_raise_limit_error() -> None:
    with pytest.raises(LimitError):
        parse("echo " + "$(" * 100 + ")" * 100, max_nesting=20)
    with pytest.raises(LimitError):
        parse("a " * 50, max_words=10)


def test_a_loop_fed_by_a_process_substitution_marks_its_first_command() -> None:
    """``while read f; do ...; done < <(CMD)``: the loop's first command reads CMD's output."""
    cmds = parse("while IFS= read -r f; do rm \"$f\"; done < <(find /srv -type f)")
    assert [c.fed for c in cmds] == ["find /srv -type f", None, None]
    nested = parse("for d in a b; do until read x; do :; done < <(ls \"$d\"); rm y; done")
    assert [c.fed for c in nested if c.fed] == ['ls "$d"']
    listed = parse("while read f; do :; done < list.txt")
    assert all(c.fed is None for c in listed) and listed[0].fed_from is not None
    assert listed[0].fed_from.text is not None and listed[0].fed_from.parts[0][1] == "list.txt"
    assert all(c.fed is None for c in parse("for f in a; do :; done < <(ls)"))
