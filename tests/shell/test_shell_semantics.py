"""Generative: shell semantics read exactly (``shell.escapes``, ``shell.names``). A command spelled
in escapes (``$'\\x67it'``, ``$(printf '\\147it')``, ``echo -e``) is the command; a function that
forwards its arguments is the command it forwards to; ``sudo -k CMD`` runs CMD. The escape decoder
is checked against Bash itself."""

from __future__ import annotations

import shutil
import subprocess
import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from governance.shell.analysis import analyse_command
from governance.shell.escapes import echo, printf
from governance.shell.schema import load_default_shell
from tests.shell.corpus import is_protected

SHELL = load_default_shell()
EXAMPLES = 300
BASH = shutil.which("bash")
STOPPED = {"web-fetch", "destructive", "vcs-push", "package-install", "governance-admin",
           "privilege", "shell-unknown"}
ACTS = [
    ("git", "push origin main", "vcs-push"),
    ("curl", "-s https://example.com/x", "web-fetch"),
    ("wget", "-q https://example.com/x", "web-fetch"),
    ("rm", "-rf src", "destructive"),
    ("npm", "publish", "vcs-push"),
    ("pip", "install requests", "package-install"),
    ("governance", "state set DONE", "governance-admin"),
]


FOLDER = tempfile.mkdtemp(prefix="semantics-")   # an empty folder to run in


def _both(command: str) -> list[set[str]]:
    return [{a.primitive for a in analyse_command(command, SHELL, is_protected=is_protected,
                                                  cwd=cwd)} for cwd in (None, FOLDER)]


def primitives(command: str) -> set[str]:
    """What the analysis finds both without a folder to read files in and with one."""
    alone, there = _both(command)
    return alone & there


def loud(command: str) -> set[str]:
    """What DO would stop, found either way."""
    alone, there = _both(command)
    return (alone | there) & STOPPED


def _escape(c: str, style: str) -> str:
    code = ord(c)
    return {"x": f"\\x{code:02x}", "X": f"\\x{code:X}", "o": f"\\{code:03o}",
            "0": f"\\0{code:03o}", "u": f"\\u{code:04x}", "U": f"\\U{code:08x}",
            "l": c}[style]


@st.composite
def spelled(draw: st.DrawFn, word: str, styles: str) -> str:
    """``word`` with each character literal or escaped in one of ``styles``."""
    return "".join(_escape(c, draw(st.sampled_from(styles))) for c in word)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(ACTS), st.data())
def test_a_command_name_spelled_in_escapes_is_the_command(act: tuple[str, str, str],
                                                           data: st.DataObject) -> None:
    program, args, primitive = act
    form = data.draw(st.sampled_from(["ansi", "printf", "printf-s", "printf-b", "echo",
                                      "eval-printf", "eval-echo", "var"]))
    if form == "ansi":
        name = "$'" + data.draw(spelled(program, "xXouUl")) + "'"
    elif form == "printf":
        name = "$(printf '" + data.draw(spelled(program, "xXouUl")) + "')"
    elif form == "printf-s":
        name = "$(printf '%s' '" + program + "')"
    elif form == "printf-b":
        name = "$(printf '%b' '" + data.draw(spelled(program, "x0uUl")) + "')"
    elif form == "echo":
        name = "$(echo -e '" + data.draw(spelled(program, "x0uUl")) + "')"
    elif form == "var":
        name = '"$N"'
        args = f"{args}"
        command = "printf -v N '%s' " + program + "; N=$(printf '" + data.draw(
            spelled(program, "xol")) + "'); " + name + " " + args
        assert primitive in primitives(command), command
        return
    else:
        tool = "printf" if form == "eval-printf" else "echo -e"
        whole = data.draw(spelled(f"{program} {args}", "xol" if tool == "printf" else "x0l"))
        command = f"eval \"$({tool} '{whole}')\""
        assert primitive in primitives(command), command
        return
    command = f"{name} {args}"
    assert primitive in primitives(command), command


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(ACTS), st.sampled_from(["up", "run", "g", "_x"]), st.sampled_from([
    "{f}() {{ {p} \"$@\"; }}; {f} {a}",
    "{f}() {{ {p} $@; }}; {f} {a}",
    "{f}() {{ {p} $*; }}; {f} {a}",
    "{f}() {{ {p} \"${{@}}\"; }}; {f} {a}",
    "function {f} {{ {p} \"$@\"; }}; {f} {a}",
    "function {f}() {{ {p} \"$@\"; }}; {f} {a}",
    "{f}() {{ \"$@\"; }}; {f} {p} {a}",
    "{f}() {{ \"$1\" \"${{@:2}}\"; }}; {f} {p} {a}",
    "{f}() {{ local c=$1; shift; \"$c\" \"$@\"; }}; {f} {p} {a}",
    "{f}() {{ shift 2; {p} \"$@\"; }}; {f} x y {a}",
    "{f}() {{ echo \"+ $*\" >&2; \"$@\"; }}; {f} {p} {a}",
    "{f}() {{ inner() {{ {p} \"$@\"; }}; inner \"$@\"; }}; {f} {a}",
    "{f}() {{ while [ $# -gt 0 ]; do \"$1\" {a}; shift; done; }}; {f} echo {p}",
    "set -- {a}; {p} \"$@\"",
    "{f}() {{ {p} \"$@\"; }}\n{f} {a}",
    "{f}() {{ bash -c \"$*\"; }}; {f} {p} {a}",
    "{f}() {{ sudo -k {p} \"$@\"; }}; {f} {a}",
]))
def test_a_function_that_forwards_its_arguments_is_the_command_it_forwards_to(
        act: tuple[str, str, str], name: str, form: str) -> None:
    program, args, primitive = act
    command = form.format(f=name, p=program, a=args)
    assert primitive in primitives(command), command


@settings(max_examples=EXAMPLES // 2, deadline=None)
@given(st.sampled_from(ACTS), st.sampled_from(["", "-u root ", "-n ", "-E ", "-H "]))
def test_sudo_k_with_a_command_runs_it(act: tuple[str, str, str], more: str) -> None:
    program, args, primitive = act
    found = primitives(f"sudo -k {more}{program} {args}")
    assert {primitive, "privilege"} <= found


@settings(max_examples=EXAMPLES // 2, deadline=None)
@given(st.sampled_from(ACTS), st.sampled_from(["", "-u app ", "-E "]),
       st.sampled_from(["DEBIAN_FRONTEND=noninteractive ", "X=1 Y=\"$Z\" ", "HOME=/tmp "]))
def test_sudo_runs_the_command_after_its_variables(act: tuple[str, str, str], more: str,
                                                   names: str) -> None:
    """``sudo [OPTIONS] NAME=VALUE... CMD``: CMD runs, with those variables set."""
    program, args, primitive = act
    found = primitives(f"sudo {more}{names}{program} {args}")
    assert {primitive, "privilege"} <= found and "shell-unknown" not in found


def test_sudo_k_alone_only_resets() -> None:
    assert primitives("sudo -k") == {"shell-read"}


@settings(max_examples=EXAMPLES, deadline=None)
@given(st.sampled_from(["ls -la", "cat README.md", "git status", "wc -l x", "grep -n x y"]),
       st.sampled_from([
           "run() {{ \"$@\"; }}; run {c}",
           "run() {{ echo \"+ $*\"; \"$@\"; }}; run {c}",
           "quiet() {{ \"$@\" >/dev/null 2>&1; }}; quiet {c}",
           "t() {{ local start=$SECONDS; \"$@\"; echo $((SECONDS-start)); }}; t {c}",
           "$'{e}' {r}",
           "$(printf '{e}') {r}",
       ]))
def test_harmless_commands_through_the_same_forms_stay_quiet(command: str, form: str) -> None:
    head, _, rest = command.partition(" ")
    text = form.format(c=command, e="".join(f"\\x{ord(c):02x}" for c in head), r=rest)
    assert not loud(text), text


# --- the decoder against Bash ---------------------------------------------------------------------
PIECES = ["\\x67", "\\x6", "\\x", "\\147", "\\0147", "\\01477", "\\c", "\\u67", "\\U00000067",
          "\\'", '\\"', "\\?", "\\e", "\\8", "\\\\", "\\n", "\\t", "q", "g", " ", "-"]
FORMATS = [*PIECES, "%s", "%b", "%d", "%%", "%5s", "%-3s|", "%c", "%x", "%.2s", "%03d", "%+d",
           "%#x", "%.3d", "%-4d|"]


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(FORMATS), min_size=1, max_size=6).map("".join),
       st.lists(st.lists(st.sampled_from(PIECES), max_size=3).map("".join), max_size=3))
def test_printf_and_echo_decode_as_bash_does(form: str, args: list[str]) -> None:
    assert BASH is not None
    done = subprocess.run([BASH, "-c", 'printf -- "$@"', "printf", form, *args],
                          capture_output=True, check=False)
    ours = printf(form, args)          # None only where bash fails too (a number that is not)
    assert (ours is None and b"invalid number" in done.stderr) or (
        ours is not None and ours.encode("latin-1") == done.stdout), (form, args)
    real = subprocess.run([BASH, "-c", 'echo "$@"', "echo", "-e", *args], capture_output=True,
                          check=False).stdout
    assert echo(["-e", *args]).encode("latin-1") == real, args


@pytest.mark.skipif(BASH is None, reason="bash is not installed")
@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from([p for p in PIECES if p not in ("\\c", "\\'")]), min_size=1,
                max_size=6).map("".join))
def test_ansi_c_strings_decode_as_bash_does(text: str) -> None:
    assert BASH is not None
    from governance.shell.parser import parse

    real = subprocess.run([BASH, "-c", f"printf %s $'{text}'"], capture_output=True,
                          check=False).stdout
    (cmd,) = parse(f"printf %s $'{text}'")
    ours = "".join(p[1] for p in cmd.words[2].parts)
    assert ours.encode("latin-1") == real, text


@settings(max_examples=EXAMPLES // 2, deadline=None)
@given(st.sampled_from(ACTS), st.sampled_from([
    "{f}() {{ local cmd=(\"$@\"); \"${{cmd[@]}}\"; }}; {f} {p} {a}",
    "{f}() {{ local -a cmd=({p} {a}); \"${{cmd[@]}}\"; }}; {f}",
    "declare -a cmd=({p} {a}); \"${{cmd[@]}}\"",
    "c=ls; {f}() {{ local c=$(printf {p}); $c {a}; }}; {f}",
    "c=ls; {f}() {{ local c=\"$X\"; $c {a}; }}; {f}",
    "printf -v c '%s' {p}; $c {a}",
]), st.sampled_from(["run", "f"]))
def test_values_declared_in_functions_are_read_or_unknown(act: tuple[str, str, str], form: str,
                                                          name: str) -> None:
    program, args, primitive = act
    found = primitives(form.format(f=name, p=program, a=args))
    assert primitive in found or "shell-unknown" in found, (form, found)


@settings(max_examples=EXAMPLES // 3, deadline=None)
@given(st.sampled_from(ACTS), st.sampled_from(["sh -c {q}", "bash -c {q}", "dash -c {q}", "{c}"]),
       st.data())
def test_echo_text_that_shells_decode_differently_is_the_command_or_unknown(
        act: tuple[str, str, str], shell: str, data: st.DataObject) -> None:
    program, args, primitive = act
    spelled_text = data.draw(spelled(f"{program} {args}", "0l"))
    inner = f'eval "$(echo \'{spelled_text}\')"'
    command = shell.format(q="'" + inner.replace("'", "'\\''") + "'", c=inner)
    found = primitives(command)
    assert primitive in found or "shell-unknown" in found, command


# --- the analysis stays inside its own time ------------------------------------------------------
@pytest.mark.parametrize("command", [
    ': "$(printf %0999999999d 0)"; rm -rf /srv',
    "printf '%*d' 2000000000 1 | sh",
    "printf '%.*s' 999999999 x | bash",
    "x=$(printf '%5000s' rm); $x -rf /srv",
])
def test_huge_printf_fields_are_not_written_out(command: str) -> None:
    import time

    start = time.process_time()        # processor time: other work on the machine does not count
    acts = {a.primitive for a in analyse_command(command, SHELL, is_protected=is_protected)}
    assert time.process_time() - start < 2, command
    assert acts & {"destructive", "shell-unknown"}, (command, acts)


def test_printf_bounds_its_fields_and_output() -> None:
    assert printf("%04096d", ["7"]) == "0" * 4095 + "7"
    assert printf("%04097d", ["7"]) is None
    assert printf("%*s", ["5000", "x"]) is None
    assert printf("%.*s", ["-99999", "x"]) is None
    assert printf("%4000s", ["x"] * 300) is None      # 1.2 MB in all
    assert printf("%4000s", ["x"] * 200) == (" " * 3999 + "x") * 200


def test_a_command_the_analysis_cannot_finish_in_time_is_shell_unknown() -> None:
    shell = {**SHELL, "limits": {**SHELL.get("limits", {}), "max_seconds": 1e-9}}
    acts = analyse_command("ls; ls; rm -rf /srv", shell, is_protected=is_protected)
    assert acts[0].primitive == "shell-unknown", acts
    assert "longer than" in acts[0].reason
    assert "destructive" in {a.primitive for a in acts}      # the text still names rm -rf
