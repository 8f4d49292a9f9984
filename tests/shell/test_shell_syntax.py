"""The parser against Bash itself: scripts generated from a small grammar of Bash (quoting,
expansions, redirections, process substitution, compound commands, functions, arrays, ``[[ ]]``,
arithmetic, heredocs ...) that ``bash -n`` accepts must parse, and a harmless script is not
``shell-unknown`` merely because of its syntax. Plus tricky snippets from real scripts."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from governance.shell.analysis import analyse_command
from governance.shell.parser import LimitError, ParseError, parse
from governance.shell.schema import load_default_shell
from tests.shell.corpus import is_protected

SHELL = load_default_shell()
BASH = shutil.which("bash")
pytestmark = pytest.mark.skipif(BASH is None, reason="bash is not installed")
STOPPED = {"web-fetch", "destructive", "vcs-push", "package-install", "governance-admin",
           "privilege", "shell-unknown"}


def bash_accepts(script: str) -> bool:
    assert BASH is not None
    done = subprocess.run([BASH, "-O", "extglob", "-n", "-c", script], capture_output=True,
                          check=False)
    return done.returncode == 0


def primitives(command: str) -> set[str]:
    return {a.primitive for a in analyse_command(command, SHELL, is_protected=is_protected)}


# --- a small grammar of Bash, built from harmless parts ------------------------------------------
NAMES = st.sampled_from(["ls", "cat", "grep -n x", "wc -l", "sort", "head -5", "echo", "true",
                         "printf '%s\\n'", "test -f x", "uniq -c", "tr a-z A-Z"])
WORDS = st.sampled_from([
    "a.txt", "'single quoted'", '"double $HOME"', "$'ansi\\tc\\x41'", '$"locale"', "${x:-def}",
    "${#arr[@]}", "${x%%.*}", "${x//a/b}", "${x^^}", "${x:1:2}", "$(( 1 + 2 * 3 ))",
    "{a,b}.c", "{1..3}", "*.py", "@(a|b).c", "!(*.txt)", "+(x)", "\\ spaced", "a\\$b",
    '"$(echo "nested "quoted" words")"', "`echo tick`", "$(echo sub)", '"${arr[@]}"', "$#",
    '"$@"', "${!x}", "${x@Q}", "-- -x", "'it'\\''s'", '"a\\"b"', "#notacomment"[1:], "x#y",
    "~/notes", "'$(not run)'", "$((16#ff))", "${x:+\"alt\"}", '"${x/#pre/}"'])
REDIRS = st.sampled_from([
    "", " > out.txt", " 2>&1", " >> log 2>&1", " < in.txt", " &> /dev/null", " 2>/dev/null",
    " <<< \"here string\"", " < <(ls)", " > >(cat)", " 3>&1", " <> f", " >| f", " {fd}>f"])


@st.composite
def simple(draw: st.DrawFn) -> str:
    words = draw(st.lists(WORDS, max_size=3))
    prefix = draw(st.sampled_from(["", "LC_ALL=C ", "x=1 y=$(echo 2) "]))
    return prefix + " ".join([draw(NAMES), *words]) + draw(REDIRS)


def compound(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    two = st.tuples(inner, inner)
    return st.one_of(
        two.map(lambda p: f"{p[0]} | {p[1]}"),
        two.map(lambda p: f"{p[0]} |& {p[1]}"),
        two.map(lambda p: f"{p[0]} && {p[1]}"),
        two.map(lambda p: f"{p[0]} || {p[1]}"),
        two.map(lambda p: f"{p[0]}; {p[1]}"),
        two.map(lambda p: f"{p[0]}\n{p[1]}"),
        inner.map(lambda c: f"{c} &"),
        inner.map(lambda c: f"! {c}"),
        inner.map(lambda c: f"( {c} )"),
        inner.map(lambda c: f"{{ {c}; }}"),
        inner.map(lambda c: f"{{ {c}; }} 2>&1 | tee log"),
        two.map(lambda p: f"if {p[0]}; then {p[1]}; fi"),
        two.map(lambda p: f"if {p[0]}\nthen\n  {p[1]}\nelif true; then :; else {p[1]}; fi"),
        two.map(lambda p: f"while {p[0]}; do {p[1]}; done"),
        two.map(lambda p: f"until {p[0]}; do {p[1]}; break; done"),
        inner.map(lambda c: f"for f in *.txt a 'b c'; do {c}; done"),
        inner.map(lambda c: f"for ((i = 0; i < 3; i++)); do {c}; done"),
        inner.map(lambda c: f"select x in a b; do {c}; break; done"),
        two.map(lambda p: f"case $x in a|b) {p[0]};; (c) {p[1]};& *) :;;& esac"),
        inner.map(lambda c: f"f() {{ {c}; }}; f a b"),
        inner.map(lambda c: f"function g {{ {c}; }}\ng"),
        inner.map(lambda c: f"function h() ( {c} ); h"),
        inner.map(lambda c: f"[[ $x =~ ^(a|b)+$ && -n \"$y\" ]] && {c}"),
        inner.map(lambda c: f"(( n += 2 )) || {c}"),
        inner.map(lambda c: f"declare -A m=([k]=v [\"a b\"]=2); {c}"),
        inner.map(lambda c: f"local -a arr=(1 \"2 3\" $(echo 4)) 2>/dev/null; {c}"),
        inner.map(lambda c: f"arr=(\n  one\n  two\n); arr+=(three); {c}"),
        inner.map(lambda c: f"coproc {c}"),
        inner.map(lambda c: f"time {c}"),
        inner.map(lambda c: f"x=\"$({c})\""),
        inner.map(lambda c: f"while read -r line; do {c}; done < <(ls)"),
        inner.map(lambda c: f"diff <({c}) <(sort b)"),
        inner.map(lambda c: f"cat <<'EOF'\n$(not run) `x`\nEOF\n{c}"),
        inner.map(lambda c: f"cat <<-EOF\n\tvalue $HOME $(echo sub)\n\tEOF\n{c}"),
        inner.map(lambda c: f"{c} \\\n  --more"),
        inner.map(lambda c: f"{c} # a comment with 'quotes"),
        inner.map(lambda c: f"trap 'echo bye' EXIT; {c}"),
        inner.map(lambda c: f"eval '{c}'" if "'" not in c else c),
    )


SCRIPTS = st.recursive(simple(), compound, max_leaves=6)


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(SCRIPTS)
def test_what_bash_parses_we_parse(script: str) -> None:
    assume(bash_accepts(script))
    try:
        parse(script)
    except (ParseError, LimitError) as exc:
        raise AssertionError(f"{script!r}: {exc}") from exc
    assert "shell-unknown" not in primitives(script), script


# Real-world snippets: each must be accepted by bash, parse, and stay quiet.
SNIPPETS = [
    "diff <(sort a) <(sort b)",
    "diff -u <(git show HEAD:README.md) README.md",
    "comm -12 <(sort a.txt) <(sort b.txt)",
    "while IFS= read -r line; do echo \"$line\"; done < <(git ls-files)",
    "mapfile -t files < <(find . -name '*.py')",
    "declare -A seen=([a]=1 [b]=2); echo \"${!seen[@]}\"",
    "typeset -a list=(x y z); echo \"${list[1]}\"",
    "[[ $branch =~ ^(feature|fix)/[a-z0-9-]+$ ]] && echo ok",
    "case $1 in start) echo s;;& st*) echo t;; *) echo other;; esac",
    "coproc worker { cat; }; echo hi >&\"${worker[1]}\"",
    "select opt in yes no; do echo $opt; break; done <<< 1",
    "for ((i=0; i<5; i++)); do echo $((i * i)); done",
    "function cleanup { rm -f \"$tmp\"; }; trap cleanup EXIT",
    "echo {a,b,c}.txt {1..10..2}",
    "shopt -s extglob; ls !(*.md)",
    "echo $'line1\\nline2' $\"translated\"",
    "make test |& tee build.log",
    "result=\"$(grep -c \"needle\" \"$(ls *.txt | head -1)\")\"",
    "cat <<< \"$(date +%F)\"",
    "echo \"${PATH//:/$'\\n'}\"",
    "if (( $# > 0 )); then echo \"$1\"; fi",
    "x=$(( (RANDOM % 6) + 1 )); echo $x",
    "printf '%s\\n' \"${arr[@]:1:2}\"",
    "{ echo a; echo b; } > out.txt",
    "exec 3< input.txt; read -r first <&3; exec 3<&-",
    "git log --format='%h %s' -n 5 | awk '{print $1}'",
    "python3 - <<'PY'\nprint('hi')\nPY",
    "time (sleep 0.1; echo done)",
    "echo \"$(echo \"$(echo deep)\")\"",
    "ls -la | while read -r perms links owner rest; do echo \"$owner\"; done",
    "tar -czf - src | wc -c",
    "run(){ echo \"+ $*\"; \"$@\"; }; run ls -la",
    "echo $(case x in a) echo y;; esac)",
    "cat <(echo a) <(echo b) > >(tee log)",
    "if [[ $x == \"a\" ]]; then :; elif (( y > 2 )); then :; fi",
    "while (( i < 3 )); do ((i++)); done",
    "cmd_output=$(ls) && for i in $(seq 3); { echo $i; }",
    "readonly -a R=(1 2); echo \"${R[@]}\"",
    "exec {fd}<README.md; read -r -u \"$fd\" first",
    "time -p ls",
    "x=\"$((( n += 2 )) || ls)\"",
    "((ls) | wc -l)",
    "retry() { local n=0; until \"$@\"; do n=$((n+1)); [ $n -ge 3 ] && return 1; done; }; "
    "retry make lint",
]


@pytest.mark.parametrize("snippet", SNIPPETS)
def test_tricky_snippets_parse_and_stay_quiet(snippet: str) -> None:
    assert bash_accepts(snippet), snippet
    parse(snippet)
    assert not primitives(snippet) & STOPPED, (snippet, primitives(snippet))
