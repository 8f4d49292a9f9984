"""Generative: acts wrapped in launchers, quoting styles, stdin feeding, definitions and inline
code, composed up to three layers deep. A class is closed when its compositions pass, not when
its examples do: every composition must still show the act inside it."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from governance.shell.analysis import analyse_command
from governance.shell.schema import load_default_shell
from tests.shell.corpus import is_protected

SHELL = load_default_shell()
EXAMPLES = 400  # per test; CI runs each test this many times

ACTS = [
    ("git push origin main", "vcs-push"),
    ("npm publish", "vcs-push"),
    ("docker push registry.example.com/app:1", "vcs-push"),
    ("curl -s https://example.com/x", "web-fetch"),
    ("wget -q https://example.com/x", "web-fetch"),
    ("git fetch origin", "web-fetch"),
    ("rm -rf build", "destructive"),
    ("git reset --hard HEAD~1", "destructive"),
    ("git clean -fdx", "destructive"),
    ("pip install requests", "package-install"),
    ("npm install lodash", "package-install"),
    ("cargo add serde", "package-install"),
    ("governance state set DONE", "governance-admin"),
    ("cp /tmp/s.json .claude/settings.json", "governance-admin"),
]


def _single(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _double(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$") + '"'


def _ansi(text: str) -> str:
    return "$'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


QUOTES = [_single, _double, _ansi]

# {c}: the inner command as words; {q}: the inner command as one quoted string
ARGV_LAYERS = [
    "chrt -f 1 {c}", "prlimit --nofile=64 -- {c}", "numactl -C 0 {c}", "nice -n 5 {c}",
    "timeout 30 {c}", "env A=1 B=2 {c}", "command {c}", "nohup {c}", "stdbuf -oL {c}",
    "taskset -c 0 {c}", "ionice -c3 {c}", "setsid {c}", "time {c}", "/usr/bin/env {c}",
    "some-unknown-launcher --flag value {c}", "sudo -u deploy {c}", "exec {c}",
    "( {c} )", "{{ {c}; }}", "true && {c}", "false || {c}", "{c} 2>&1 | tail -5",
    "if true; then {c}; fi", "for i in 1; do {c}; done",
]
STRING_LAYERS = [
    "bash -c {q}", "sh -c {q}", "zsh -c {q}", "dash -c {q}", "eval {q}", "watch -n 5 {q}",
    "ssh build-host {q}", "su -c {q} root", "flock /tmp/lock -c {q}", "script -qc {q} /dev/null",
    "echo {q} | bash", "echo {q} | sh -s", "printf '%s\\n' {q} | zsh", "bash <<< {q}",
    ". /dev/stdin <<< {q}", "echo {q} > run.sh && bash run.sh",
    "echo {q} | tee run.sh >/dev/null; sh run.sh", "x={q}; eval \"$x\"", "x={q}; bash -c \"$x\"",
    "emacs --batch --eval {elisp}", "xargs -I{{}} sh -c {q} < /dev/null",
]
BLOCK_LAYERS = [
    "sh <<'EOF'\n{c}\nEOF", "bash <<EOF\n{c}\nEOF", "f() {{ {c}; }}; f",
    "cat > job.sh <<'EOF'\n{c}\nEOF\nbash job.sh",
]


@st.composite
def composed(draw: st.DrawFn) -> tuple[str, str]:
    command, act = draw(st.sampled_from(ACTS))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        kind = draw(st.sampled_from(["argv", "string", "block"]))
        if kind == "argv":
            head = command.split(" ", 1)[0]
            if any(c in command for c in ";|&\n") or "=" in head or head in ("(", "{", "if",
                                                                               "for"):
                command = "sh -c " + _single(command)  # a launcher runs one program
            command = draw(st.sampled_from(ARGV_LAYERS)).format(c=command)
        elif kind == "string":
            quote = draw(st.sampled_from(QUOTES))
            layer = draw(st.sampled_from(STRING_LAYERS))
            if "{elisp}" in layer and ('"' in command or "\\" in command):
                # Lisp strings in Lisp strings: one level is enough; and a Lisp string drops
                # the backslash of \' (the shell's '\'' quoting would lose its meaning there)
                layer = "bash -c {q}"
            elisp = _single(f'(shell-command "{command}")')
            command = layer.format(q=quote(command), elisp=elisp)
        else:
            command = draw(st.sampled_from(BLOCK_LAYERS)).format(c=command)
    return command, act


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(composed())
def test_the_act_is_found_in_every_composition(case: tuple[str, str]) -> None:
    command, act = case
    found = {a.primitive for a in analyse_command(command, SHELL, is_protected=is_protected)}
    # shell-unknown is the cautious answer when a layer hides the text; it still blocks
    assert act in found or "shell-unknown" in found, (command, sorted(found))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(ACTS), st.sampled_from(QUOTES), st.sampled_from(["python3", "python"]))
def test_inline_python_that_runs_the_act(act: tuple[str, str], quote: object,
                                         python: str) -> None:
    command, expected = act
    codes = [f"import os; os.system({command!r})",
             f"import subprocess; subprocess.run({command.split()!r})",
             f"import subprocess as sp; sp.check_call({command!r}, shell=True)",
             f"from os import system as s; s({command!r})"]
    for code in codes:
        line = f"{python} -c {quote(code)}"  # type: ignore[operator]
        found = {a.primitive for a in analyse_command(line, SHELL, is_protected=is_protected)}
        assert expected in found, (line, sorted(found))
