"""Generative: programs renamed, copied, linked, hashed or re-found through PATH, and names given by
aliases and functions (``shell.names``, ``shell.copies``). A program reached under another name is
still that program; a copy of something known only at run time is ``shell-unknown``; the same
routes to harmless programs stay quiet."""

from __future__ import annotations

import tempfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from governance.shell.analysis import analyse_command
from governance.shell.schema import load_default_shell
from tests.shell.corpus import is_protected

SHELL = load_default_shell()
EXAMPLES = 300
STOPPED = {"web-fetch", "destructive", "vcs-push", "package-install", "governance-admin",
           "privilege", "shell-unknown"}

# (program, its arguments, the primitive the program with those arguments is)
ACTS = [
    ("git", "push origin main", "vcs-push"),
    ("git", "reset --hard HEAD~1", "destructive"),
    ("curl", "-s https://example.com/x", "web-fetch"),
    ("wget", "-q https://example.com/x", "web-fetch"),
    ("rm", "-rf src", "destructive"),
    ("npm", "publish", "vcs-push"),
    ("pip", "install requests", "package-install"),
    ("docker", "push registry.example.com/app:1", "vcs-push"),
]
HARMLESS = [("ls", "-la"), ("cat", "README.md"), ("grep", "-rn TODO src"), ("wc", "-l notes.txt"),
            ("git", "status --short"), ("echo", "hello")]

# how the program's path is written: {p} is the program's name
SOURCES = ["/usr/bin/{p}", "/bin/{p}", '"$(command -v {p})"', "$(which {p})", "`which {p}`",
           '"$(type -P {p})"', '"$(readlink -f "$(command -v {p})")"', "$(hash -t {p})",
           '"$(realpath "$(which {p})")"']
# how a copy or link of {src} is made under {dest}
COPIES = ["cp {src} {dest}", "cp -p {src} {dest}", "ln -s {src} {dest}", "ln -sf {src} {dest}",
          "ln {src} {dest}", "install -m755 {src} {dest}", "install -m 0755 {src} {dest}",
          "cp -- {src} {dest}", "dd if={src} of={dest} status=none", "ln -s -T {src} {dest}",
          "cp {src} {dest} && chmod +x {dest}"]
DESTS = ["./dl", "dl", "tools/x", "/tmp/.cache-bin", "./bin/helper"]
# how the copy is run: {run} is the path to the copy
RUNS = ["{run} {args}", "sudo {run} {args}", "env {run} {args}", "timeout 30 {run} {args}",
        "exec {run} {args}", "bash -c '{run} {args}'", "nohup {run} {args}", "( {run} {args} )"]
JOINS = ["; ", " && ", "\n"]


FOLDER = tempfile.mkdtemp(prefix="names-")   # an empty folder to run in: files are read there


def _both(command: str) -> tuple[set[str], set[str]]:
    """The primitives without a folder to read files in, and with one."""
    return tuple({a.primitive for a in analyse_command(command, SHELL, is_protected=is_protected,
                                                       cwd=cwd)} for cwd in (None, FOLDER))


def primitives(command: str) -> set[str]:
    """What both ways of analysing find (an act must be found either way)."""
    alone, there = _both(command)
    return alone & there


def loud(command: str) -> set[str]:
    """What either way finds that DO would stop."""
    alone, there = _both(command)
    return (alone | there) & STOPPED


def _as_path(dest: str) -> str:
    return dest if "/" in dest else "./" + dest


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(ACTS), st.sampled_from(SOURCES), st.sampled_from(COPIES),
       st.sampled_from(DESTS), st.sampled_from(RUNS), st.sampled_from(JOINS))
def test_a_copy_or_link_of_a_program_is_that_program(act: tuple[str, str, str], source: str,
                                                      copy: str, dest: str, run: str,
                                                      join: str) -> None:
    program, args, primitive = act
    made = copy.format(src=source.format(p=program), dest=dest)
    command = made + join + run.format(run=_as_path(dest), args=args)
    assert primitive in primitives(command), command


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(ACTS), st.sampled_from(SOURCES), st.sampled_from(["b", "bin", ".t/x"]),
       st.sampled_from(["x", "get", "helper"]),
       st.sampled_from(["PATH={d}:$PATH {n} {args}", "export PATH={d}:$PATH; {n} {args}",
                        'PATH="$PWD/{d}:$PATH" {n} {args}', "env PATH={d}:$PATH {n} {args}",
                        'export PATH="$(pwd)/{d}:$PATH" && {n} {args}',
                        "PATH={d}:$PATH; sudo {n} {args}"]),
       st.sampled_from(["ln -s {src} {d}/{n}", "cp {src} {d}/{n}", "cp {src} {d}/",
                        "install -D -m755 {src} {d}/{n}", "ln -s {src} {d}"]))
def test_a_program_found_in_a_folder_the_command_filled_is_what_was_put_there(
        act: tuple[str, str, str], source: str, folder: str, name: str, run: str,
        fill: str) -> None:
    program, args, primitive = act
    if fill.endswith("{d}/") or fill.endswith("{d}"):
        name = program                  # cp SRC b/ keeps the program's own name
    if fill.endswith("{d}"):
        folder = folder + "/x"          # ln -s SRC b/x: b/x is the link; its folder goes on PATH
        fill, folder = fill.replace("{d}", "{d}/" + program), folder.rsplit("/", 1)[0]
    command = (f"mkdir -p {folder}; " + fill.format(src=source.format(p=program), d=folder,
                                                    n=name)
               + "; " + run.format(d=folder, n=name, args=args))
    assert primitive in primitives(command), command


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(ACTS), st.sampled_from(SOURCES), st.sampled_from(["get", "g", "x", "ls"]),
       st.sampled_from([
           "hash -p {src} {n}; {n} {args}",
           "alias {n}={src}; {n} {args}",
           "alias {n}='{src} {args}'; {n}",
           "{n}() {{ {src} \"$@\"; }}; {n} {args}",
           "{n}() {{ command {src} \"$@\"; }}; {n} {args}",
           "function {n} {{ {src} \"$@\"; }}\n{n} {args}",
           "{n}() ( {src} \"$@\" ); {n} {args}",
           "{n}() {{ \"$@\"; }}; {n} {src} {args}",
           "{n}() {{ local first=$1; shift; {src} \"$@\"; }}; {n} ignored {args}",
       ]))
def test_a_name_given_by_hash_alias_or_function_is_what_it_names(
        act: tuple[str, str, str], source: str, name: str, form: str) -> None:
    program, args, primitive = act
    command = form.format(src=source.format(p=program), n=name, args=args)
    assert primitive in primitives(command), command


@settings(max_examples=EXAMPLES // 2, deadline=None)
@given(st.sampled_from(['"$X"', "$1", "$(cat prog.txt)", "$(ls /usr/bin | head -1)",
                        "/usr/bin/*", '"$(command -v "$P")"']),
       st.sampled_from(COPIES[:8]), st.sampled_from(DESTS),
       st.sampled_from(RUNS[:5]))
def test_a_copy_of_something_known_only_at_run_time_is_shell_unknown(
        source: str, copy: str, dest: str, run: str) -> None:
    command = copy.format(src=source, dest=dest) + "; " + run.format(run=_as_path(dest),
                                                                     args="-x y")
    assert "shell-unknown" in primitives(command), command


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(HARMLESS), st.sampled_from(SOURCES[:6]), st.sampled_from(COPIES[:7]),
       st.sampled_from(DESTS[:3]), st.sampled_from(["get", "ll", "x"]),
       st.sampled_from([
           "{copy}; {run} {args}",
           "alias {n}={src}; {n} {args}",
           "{n}() {{ {src} \"$@\"; }}; {n} {args}",
           "run() {{ echo \"+ $*\"; \"$@\"; }}; run {src} {args}",
           "hash -p {src} {n}; {n} {args}",
       ]))
def test_the_same_routes_to_harmless_programs_stay_quiet(
        harmless: tuple[str, str], source: str, copy: str, dest: str, name: str,
        form: str) -> None:
    program, args = harmless
    src = source.format(p=program)
    command = form.format(copy=copy.format(src=src, dest=dest), run=_as_path(dest), src=src,
                          n=name, args=args)
    assert not loud(command), command


def test_everyday_wrappers_and_definitions_stay_quiet() -> None:
    for command in ('run(){ echo "+ $*"; "$@"; }; run ls -la',
                    'log() { printf "%s\\n" "$*" >&2; }; log starting; ls',
                    'retry() { for i in 1 2 3; do "$@" && return 0; sleep 1; done; }; retry make',
                    "alias ll='ls -la'; ll src",
                    'f() { git status --short; }; f',
                    'PATH=node_modules/.bin:$PATH jest --ci',
                    'diff <(sort a.txt) <(sort b.txt)',
                    'G=$(command -v git); "$G" log --oneline -5'):
        assert not loud(command), command


def test_what_a_name_shadows_is_read_too() -> None:
    """A function or alias named like a program may be undefined where it is called (defined in
    a subshell, a branch not taken): the program is read as well."""
    assert "vcs-push" in primitives("( git() { echo no; } ); git push")
    assert "destructive" in primitives("alias rm='echo'; command rm -rf src")
    assert "vcs-push" in primitives("f() { git push; }")          # defined, never called


@settings(max_examples=EXAMPLES // 2, deadline=None)
@given(st.sampled_from(ACTS), st.sampled_from(["ls", "make", "git", "x", "helper"]),
       st.sampled_from(["echo '{c}' > {f}", "printf '#!/bin/sh\\n{c}\\n' > {f}",
                        "cat > {f} <<'EOF'\n{c}\nEOF", "echo '{c}' | tee {f} >/dev/null"]),
       st.sampled_from(["./{f}", "PATH=.:$PATH {f}", "sudo ./{f}", "mkdir -p b; cp {f} b/; "
                        "PATH=b:$PATH {f}"]))
def test_a_script_the_command_wrote_runs_as_what_it_holds_whatever_its_name(
        act: tuple[str, str, str], name: str, write: str, run: str) -> None:
    program, args, primitive = act
    command = (write.format(c=f"{program} {args}", f=name) + "\nchmod +x " + name + "\n"
               + run.format(f=name))
    found = primitives(command)
    # a script named like the program it runs, found through PATH, runs itself again and again
    assert primitive in found or (name == program and "shell-unknown" in found), command


def test_every_command_the_resolver_hands_over_is_recorded() -> None:
    from governance.shell import names, resolver

    assert resolver.NAMING <= names._RECORDED


@pytest.mark.parametrize("folder", ['"$VIRTUAL_ENV/bin', "${CONDA_PREFIX}/bin", "$HOME/.local/bin",
                                    "$JAVA_HOME/bin"])
@pytest.mark.parametrize("act", ACTS)
def test_a_program_under_a_folder_the_environment_names_is_that_program(
        folder: str, act: tuple[str, str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CONDA_PREFIX", raising=False)    # set or not, the name decides
    monkeypatch.setenv("VIRTUAL_ENV", "/srv/app/.venv")
    program, args, primitive = act
    quote = '"' if folder.startswith('"') else ""
    assert primitive in primitives(f"{folder}/{program}{quote} {args}")


def test_an_interpreter_from_the_environment_runs_quietly(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VIRTUAL_ENV", "/srv/app/.venv")
    assert not loud('"$VIRTUAL_ENV/bin/python" -m pytest -q')
    assert not loud("${CONDA_PREFIX}/bin/pip list")


@pytest.mark.parametrize("command", [
    '"$TOOL/bin/python" x.py', 'VIRTUAL_ENV=$X; "$VIRTUAL_ENV/bin/python" x.py',
    '"$VIRTUAL_ENV/bin/$P" x', '"$VIRTUAL_ENV/$(echo bin)/python" x.py', "$VIRTUAL_ENV x",
])
def test_other_names_known_only_at_run_time_stay_unknown(command: str) -> None:
    assert "shell-unknown" in primitives(command)
