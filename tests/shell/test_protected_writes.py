"""Governance files written by any program (docs/shell.md, "Files a program writes", "Patterns and
loops", "The governance command by any route"): commands built from parts, a writing program and
the spelling of its output (an option, a position, a redirection, in place) times a spelling of
the path (relative, ``./``, absolute, glob, brace, variable, loop, ``cd``, ``env -C``, ``git -C``)
times a protected file, must be governance-admin; the same commands on an ordinary file must not.

Decided as the PreToolUse hook decides, in a project with the default matrix whose protected files
exist on disk (globs are expanded against the tree)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from governance.policy.layer import GovernanceLayer
from governance.shell.words import quote
from tests.helpers import layer_in_do

PROTECTED = [".claude/settings.json", ".claude/settings.local.json",
             ".claude/governance/state.json", ".claude/governance/activity_matrix.yaml",
             ".claude/hooks/guard.sh", ".claude/agents/reviewer.md", ".mcp.json"]
ORDINARY = ["docs/settings.json", "build/state.json", "out/notes.md", "notes/governance.md"]


@pytest.fixture(scope="module")
def layer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GovernanceLayer]:
    root = tmp_path_factory.mktemp("writers")
    project = root / "shop-api"
    project.mkdir()
    for name in [*PROTECTED, *ORDINARY, "src/app.py", "x.json"]:
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text("{}\n")
    import tarfile
    import zipfile

    with tarfile.open(project / "backup.tar", "w") as archive:
        archive.add(project / ".claude/settings.json", ".claude/settings.json")
        archive.add(project / "x.json", "x.json")
    with zipfile.ZipFile(project / "backup.zip", "w") as packed:
        packed.write(project / ".claude/settings.json", ".claude/settings.json")
    (project / ".claude" / "Makefile").write_text("clean:\n\trm -f settings.local.json\n")
    (project / "justfile").write_text(
        "reset:\n    governance state set implementation-cycle/PLAN\n"
        "look:\n    governance status\n")
    with layer_in_do(project, root / "home") as layer:
        yield layer


def primitives(layer: GovernanceLayer, command: str) -> set[str]:
    acts, _ = layer.acts_for("Bash", {"command": command}, layer.project_dir)
    return {a.primitive for a in acts}


# --- writers: a template takes the path as one shell word ----------------------------------------
@dataclass(frozen=True)
class Writer:
    template: str          # {p}: the path word
    program: bool = True   # a program (may run under env -C); False: the shell writes (redirection)
    git: bool = False      # a git command (may take git -C)
    # every word the path expands to is written (rm a b): a brace pattern, which bash expands
    # into several words, still names the file; elsewhere (sort -o {p} x) only its first does
    spread: bool = False


WRITERS = [
    Writer("echo {{}} > {p}", program=False), Writer("cat x.json >> {p}", program=False),
    Writer(": > {p}", program=False), Writer("printf x 1> {p}", program=False),
    Writer("tee {p} < x.json"), Writer("cp x.json {p}"), Writer("mv x.json {p}"),
    Writer("cp -rT /tmp/src {p}"), Writer("cp --no-target-directory x.json {p}"),
    Writer("install -T x.json {p}"), Writer("ln -f x.json {p}"), Writer("ln -sf /dev/null {p}"),
    Writer("install -m644 x.json {p}"),
    Writer("rm -f {p}", spread=True), Writer("unlink {p}"), Writer("truncate -s0 {p}", spread=True),
    Writer("sed -i s/a/b/ {p}", spread=True), Writer("sort -o {p} x.json"),
    Writer("uniq x.json {p}"), Writer("uniq -c x.json {p}"),
    Writer("python3 -m json.tool x.json {p}"), Writer("python -m json.tool --indent 2 x.json {p}"),
    Writer("xxd -r x.json {p}"), Writer("xxd -r -p x.json {p}"),
    Writer("openssl enc -aes256 -in x.json -out {p}"), Writer("openssl base64 -d -in x -out {p}"),
    Writer("iconv -f latin1 -t utf8 -o {p} x.json"), Writer("iconv --output={p} x.json"),
    Writer("yq -i .a=1 {p}"), Writer("yq e -i 'del(.hooks)' {p}"),
    Writer("cmake -E remove {p}", spread=True), Writer("cmake -E rm -f {p}", spread=True),
    Writer("cmake -E copy x.json {p}"),
    Writer("sudoedit {p}"), Writer("dd if=x.json of={p}"), Writer("dos2unix {p}", spread=True),
    Writer("prettier --write {p}", spread=True), Writer("gpg -d -o {p} x.gpg"),
    Writer("pandoc x.md -o {p}"), Writer("mytool --output {p}"), Writer("mytool --output={p}"),
    Writer("mytool -o {p} in"), Writer("some-gen --out {p}"), Writer("some-gen --output-file={p}"),
    Writer("go build -o {p} ./cmd/app"), Writer("docker save -o {p} app:1"),
    Writer("pytest --junitxml={p}"), Writer("some-daemon --log-file {p}"),
    Writer("ruff check --output-file {p} ."), Writer("bundler --outDir={p}"),
    Writer("/usr/bin/time -o {p} ls"), Writer("strace -o {p} ls"), Writer("zip {p} x.json"),
    Writer("ssh-keygen -q -N '' -f {p}"),
    Writer("git checkout -- {p}", git=True), Writer("git checkout HEAD~1 -- {p}", git=True),
    Writer("git restore {p}", git=True), Writer("git restore --source=HEAD~2 {p}", git=True),
    Writer("git stash push -- {p}", git=True), Writer("git stash -- {p}", git=True),
]


def _glob(path: str, draw: Callable[[st.SearchStrategy[int]], int]) -> str:
    """A glob that still names ``path``: in one segment, a run of letters after the first becomes
    ``*``, one letter ``?`` or ``[c]``."""
    segments = path.split("/")
    k = draw(st.integers(0, len(segments) - 1))
    seg = segments[k]
    if len(seg) < 3:
        return path
    a = draw(st.integers(1, len(seg) - 2))
    b = draw(st.integers(a + 1, len(seg) - 1))
    kind = draw(st.integers(0, 2))
    if kind == 0:
        seg = seg[:a] + "*" + seg[b:]
    elif kind == 1:
        seg = seg[:a] + "?" + seg[a + 1:]
    else:
        seg = seg[:a] + "[" + seg[a] + "]" + seg[a + 1:]
    segments[k] = seg
    return "/".join(segments)


def _brace(path: str, draw: Callable[[st.SearchStrategy[int]], int]) -> str:
    """A brace expansion one of whose words is ``path``: ``.claude/{settings,other}.json``."""
    folder, _, name = path.rpartition("/")
    stem, dot, ext = name.partition(".")
    cut = draw(st.integers(0, len(stem)))
    other = "zz" if draw(st.booleans()) else "a,b"
    body = "{" + stem[cut:] + "," + other + "}" if draw(st.booleans()) else \
        "{" + other + "," + stem[cut:] + "}"
    word = stem[:cut] + body + dot + ext
    return f"{folder}/{word}" if folder else word


SPELLINGS = ["relative", "dot", "absolute", "pwd", "quoted", "glob", "brace", "variable",
             "positional", "loop", "loop-glob", "cd", "subshell-cd", "env-C", "git-C"]


@st.composite
def routes(draw: st.DrawFn, paths: list[str], project: str, *, patterns: bool = True
           ) -> tuple[str, str]:
    """(command, how it was built) for a writer, a path and a spelling of the path."""
    writer = draw(st.sampled_from(WRITERS))
    path = draw(st.sampled_from(paths))
    spellings = SPELLINGS if patterns else [s for s in SPELLINGS if "glob" not in s and
                                             s != "brace"]
    spelling = draw(st.sampled_from(spellings))
    folder, _, name = path.rpartition("/")
    if spelling in ("cd", "subshell-cd", "env-C", "git-C") and not folder:
        spelling = "relative"
    if (spelling == "env-C" and not writer.program) or (spelling == "git-C" and not writer.git):
        spelling = "cd"
    if spelling == "brace" and writer.program and not writer.spread:
        spelling = "relative"
    fill = writer.template.format
    if spelling == "relative":
        cmd = fill(p=path)
    elif spelling == "dot":
        cmd = fill(p="./" + path)
    elif spelling == "absolute":
        cmd = fill(p=f"{project}/{path}")
    elif spelling == "pwd":
        form = draw(st.sampled_from(['"$PWD"/{}', "$(pwd)/{}", '"${{PWD}}/{}"', "~+/{}"]))
        cmd = fill(p=form.format(path))
    elif spelling == "quoted":
        cut = draw(st.integers(1, len(path) - 1))
        cmd = fill(p=f"'{path[:cut]}'\"{path[cut:]}\"")
    elif spelling == "glob":
        cmd = fill(p=_glob(path, draw))
    elif spelling == "brace":
        cmd = fill(p=_brace(path, draw))
    elif spelling == "variable":
        quoted = draw(st.sampled_from(['"$t"', "$t", '"${t}"']))
        cmd = f"t={path}; " + fill(p=quoted)
    elif spelling == "positional":
        cmd = f"set -- README.md {path}; " + fill(p='"$2"')
    elif spelling == "loop":
        cmd = f"for t in README.md {path}; do " + fill(p='"$t"') + "; done"
    elif spelling == "loop-glob":
        cmd = f"for t in {_glob(path, draw)} README.md; do " + fill(p='"$t"') + "; done"
    elif spelling == "cd":
        cmd = f"cd {folder} && " + fill(p=name)
    elif spelling == "subshell-cd":
        cmd = f"(cd {folder}; " + fill(p=name) + ")"
    elif spelling == "env-C":
        cmd = f"env -C {folder} " + fill(p=name)
    else:
        cmd = fill(p=name).replace("git ", f"git -C {folder} ", 1)
    return cmd, f"{writer.template} / {spelling} / {path}"


PROFILE = settings(max_examples=300, deadline=None,
                   suppress_health_check=[HealthCheck.function_scoped_fixture])


@PROFILE
@given(data=st.data())
def test_a_protected_file_written_by_any_route_is_governance_admin(
        layer: GovernanceLayer, data: st.DataObject) -> None:
    cmd, how = data.draw(routes(PROTECTED, layer.project_dir))
    assert "governance-admin" in primitives(layer, cmd), (cmd, how)


@PROFILE
@given(data=st.data())
def test_the_same_routes_to_an_ordinary_file_are_not_governance_admin(
        layer: GovernanceLayer, data: st.DataObject) -> None:
    cmd, how = data.draw(routes(ORDINARY, layer.project_dir))
    assert "governance-admin" not in primitives(layer, cmd), (cmd, how)


@pytest.mark.parametrize("cmd", [
    "for f in $(ls .claude/*.json); do rm $f; done",
    "for f in `find .claude -name '*.json'`; do : > \"$f\"; done",
    "find .claude -name '*.json' | xargs rm", "ls .claude/governance | xargs rm -f",
    "ln -s .claude x; rm x/settings.json", "ln -s .claude/settings.json s; echo {} > s",
    "cmake -E create_hardlink .claude/settings.json y", "rm -rf .cl*", "rm -r .c?aude/gov*",
    "shopt -s dotglob; rm -rf */governance", "cd .claude; for f in settings*.json; do : > $f; done",
    "for x in governance; do rm -rf .claude/$x; done", "git -C .claude rm settings.json",
    "env --chdir .claude/governance rm state.json", "sudo -D .claude rm settings.json",
    "make -C .claude clean", "tar -xf a.tar -C .claude",
    "tar -xf backup.tar .claude/settings.json", "tar xf backup.tar", "unzip -o backup.zip",
    "unzip -o backup.zip .claude/settings.json", "cat backup.tar | tar -x .claude/settings.json",
    "cp -t .claude settings.json", "install --target-directory=.claude/hooks x.sh",
    "tar czf .claude/settings.json src", "set -- .claude/settings.json; rm \"$1\"",
    "env -iC .claude rm settings.json", "env -C .claude bash -c 'true; rm settings.json'",
    "env -C .claude/governance sh -c 'ls && : > state.json'",
    "cd \"$(dirname .claude/settings.json)\" && rm settings.json",
    # the files git ignores, governance's state, seal and ledger among them
    "git clean -fdx", "git clean -f -d -X", "git clean -xf -- .claude", "git stash --all",
    "git stash push -a", "git -c core.quotepath=off clean -ffdx", "git clean -fdx .",
    # sed's w commands, compressors that replace their files, attributes that lock them
    "sed -n 'w .claude/settings.local.json' x.json", "sed -n '1,$W .claude/settings.json' x.json",
    "sed -i 's/a/b/w .claude/settings.local.json' src/app.py",
    "sed -nf /dev/stdin x.json <<< 'w .claude/settings.json'",
    "gzip .claude/settings.json", "xz -z .claude/governance/state.json", "bzip2 .mcp.json",
    "chattr +i .claude/settings.json", "chattr -R +i .",
    # a run-time name in a protected folder, or one that could spell a protected file
    "echo > \".claude/$(echo settings).json\"", "echo > \".claude/$(date +%F).json\"",
    "echo > \".claude/settings$(date +%s).json\"", "echo > \"activity_matrix$((1)).yaml\"",
    "echo > \".claude/governance/x$$.txt\"", "cd .claude && echo > \"x-$(date +%F).md\"",
    "echo > \"docs/$(cat f)activity_matrix.md\"", "echo > \"docs/$X-activity_matrix.md\"",
    "echo x > \"$HOME/.claude/x-$(date +%F).md\"",
    "echo > \".claude/commands/x-$(date +%s).md\"",
    # lines a listing writes, read one by one
    "find .claude -name '*.json' | while read f; do rm \"$f\"; done",
    "ls .claude/*.json | while read -r f; do : > \"$f\"; done",
    "while read f; do rm \"$f\"; done < <(find .claude -name '*.json')",
    "printf '%s\\n' .claude/settings.json > t.txt; while read -r f; do : > \"$f\"; done < t.txt",
])
def test_protected_files_reached_through_run_time_values_and_aliases(
        layer: GovernanceLayer, cmd: str) -> None:
    assert "governance-admin" in primitives(layer, cmd), cmd


@pytest.mark.parametrize("cmd", [
    "find .claude -name '*.json' | xargs cat", "ls .claude | xargs -n1 echo",
    "for f in $(ls docs); do rm docs/$f.bak; done", "ln -s /usr/bin/python3 bin/python",
    "find build -name '*.o' | xargs rm -f", "rm -rf build/*",
    "find build -name '*.o' | while read f; do rm \"$f\"; done",
    "find .claude -name '*.json' | while read f; do cat \"$f\"; done",
    "printf '%s\\n' docs/a.md > t.txt; while read -r f; do : > \"$f\"; done < t.txt",
    "for f in src/*.py; do : > \"$f\"; done",
    # a name that only holds a protected file's name, its run-time part printing no "/"
    "echo x > \"docs/activity_matrix-$(date +%F).md\"", "echo > \"notes/settings-$$.json\"",
    "date > \"logs/governance-$(date +%Y%m%d).log\"", "echo > \"out/run-$((n+1)).txt\"",
])
def test_run_time_values_from_ordinary_places_are_not_governance_admin(
        layer: GovernanceLayer, cmd: str) -> None:
    assert "governance-admin" not in primitives(layer, cmd)


# --- the governance command by any route ---------------------------------------------------------
CHANGING = [["state", "set", "implementation-cycle/PLAN"], ["install"], ["uninstall"], ["accept"],
            ["validate"], ["sandbox", "off"], ["bypass", "1h"], ["ledger", "anchor"],
            ["memory", "rm", "m-1"], ["intent", "select", "I-1"], ["serve"], ["frobnicate"]]
READING = [["status"], ["doctor"], ["log"], ["stats"], ["state", "show"], ["state"],
           ["explain-command", "ls"], ["ledger", "verify"], ["memory", "list"], ["--version"]]


def _route(route: str, args: list[str]) -> str:
    words = " ".join(args)
    if route == "xargs":                        # the last argument arrives on standard input
        return f"echo {args[-1]} | xargs governance {' '.join(args[:-1])}".rstrip()
    if route == "python-c":
        listed = ", ".join(repr(a) for a in args)
        return f"python3 -c 'from governance.commands.cli import main; main([{listed}])'"
    prefix = {"plain": "governance", "module": "python -m governance",
              "cli-module": "python3 -m governance.commands.cli", "venv": ".venv/bin/governance",
              "env": "env GOVERNANCE_VIA=cli governance", "sudo": "sudo -u root governance",
              "gosu": "gosu root governance", "uv": "uv run governance",
              "bash-c": "bash -c 'governance", "eval": "eval 'governance"}[route]
    closing = "'" if route in ("bash-c", "eval") else ""
    return f"{prefix} {words}{closing}"


ROUTES = ["plain", "module", "cli-module", "venv", "env", "sudo", "gosu", "uv", "bash-c", "eval",
          "xargs", "python-c"]


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(route=st.sampled_from(ROUTES), args=st.sampled_from(CHANGING))
def test_a_governance_command_that_changes_governance_is_admin_by_any_route(
        layer: GovernanceLayer, route: str, args: list[str]) -> None:
    cmd = _route(route, args)
    assert "governance-admin" in primitives(layer, cmd), cmd


@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(route=st.sampled_from([r for r in ROUTES if r not in ("python-c", "sudo", "gosu", "uv",
                                                            "xargs")]),
       args=st.sampled_from(READING))
def test_a_read_only_governance_command_stays_allowed_by_any_route(
        layer: GovernanceLayer, route: str, args: list[str]) -> None:
    """(Through xargs, a governance action read at run time is cautious: ``echo verify | xargs
    governance ledger`` is governance-admin.)"""
    cmd = _route(route, args)
    assert "governance-admin" not in primitives(layer, cmd), cmd


@pytest.mark.parametrize("cmd", [
    "cp -rT /tmp/x .claude", "cp -a -T /tmp/x ./.claude/", "cp -r --no-target-directory /tmp/x .claude",
    "cp -RT /tmp/x .claude/hooks", "install -T /tmp/s .claude/settings.json"])
def test_a_folder_copied_over_a_protected_folder_is_admin(layer: GovernanceLayer,
                                                          cmd: str) -> None:
    """``-T``: the last name is the destination itself, so the source's files land over the
    protected folder's own, as ``cp -r SRC/. .claude`` does."""
    assert "governance-admin" in primitives(layer, cmd)


@pytest.mark.parametrize("cmd", [
    "mount --bind /tmp/x .claude", "sudo mount -o bind /tmp/x .claude/hooks",
    "mount -t tmpfs tmpfs .claude/governance", "mount --target .claude /dev/sdb1",
    "unshare -m sh -c 'mount --bind /tmp/x .claude'", "bindfs /tmp/x .claude",
    "docker run -v \"$PWD/.claude:/c\" alpine sh -c 'echo {} > /c/settings.json'",
    "docker run --mount type=bind,src=.claude,dst=/c alpine true",
    "podman run --volume=./.claude/hooks:/h img", "docker create -v .claude:/c img",
    # the project mounted whole: what the container's command writes, as the files they are
    "docker run -v \"$PWD:/w\" alpine sh -c 'echo x > /w/.claude/settings.json'",
    "docker run --rm -v \"$(pwd)\":/app -w /app node:20 sh -c 'rm -rf /app/.claude'",
    "docker run -v .:/w alpine cp /tmp/s /w/.claude/settings.json",
    "docker run --mount type=bind,src=.,dst=/src img sh -c ': > /src/.claude/settings.json'",
])
def test_a_protected_folder_mounted_over_or_into_a_container_is_admin(layer: GovernanceLayer,
                                                                      cmd: str) -> None:
    assert "governance-admin" in primitives(layer, cmd), cmd


@pytest.mark.parametrize("cmd", [
    "mount", "mount | grep sda", "mount /dev/sdb1 /mnt/usb", "mount -t tmpfs tmpfs build/tmp",
    "docker run -v .claude:/c:ro alpine cat /c/settings.json", "docker run -v \"$PWD:/app\" img",
    "docker run --mount type=bind,src=.claude,dst=/c,readonly alpine true",
    "docker run -v data:/var/lib/postgresql/data postgres", "docker run -v ./src:/app/src node",
    "docker run -v \"$PWD:/w\" alpine sh -c 'echo x > /w/src/a.txt'",
    "docker run -v \"$PWD:/w:ro\" alpine sh -c 'echo x > /w/.claude/settings.json'",
    "docker run -v /tmp:/t alpine sh -c 'echo x > /t/y'",
])
def test_ordinary_mounts_and_read_only_volumes_are_not_admin(layer: GovernanceLayer,
                                                             cmd: str) -> None:
    assert "governance-admin" not in primitives(layer, cmd), cmd


@pytest.mark.parametrize("cmd", ["cp -r /tmp/x .claude", "cp -rT /tmp/x build/out",
                                 "cp -rT assets dist/assets"])
def test_a_folder_copied_into_a_protected_folder_or_over_another_is_not(
        layer: GovernanceLayer, cmd: str) -> None:
    assert "governance-admin" not in primitives(layer, cmd)


@pytest.mark.parametrize("cmd", ["just reset", "env FOO=1 just reset", "sudo just reset",
                                 "just --justfile justfile reset"])
def test_a_recipe_that_changes_governance_is_admin(layer: GovernanceLayer, cmd: str) -> None:
    assert "governance-admin" in primitives(layer, cmd)


def test_a_recipe_that_only_reads_governance_is_not(layer: GovernanceLayer) -> None:
    assert "governance-admin" not in primitives(layer, "just look")


# --- everyday commands the output table and the patterns must leave alone -----------------------
@pytest.mark.parametrize("cmd", [
    "grep -o foo .claude/settings.json", "cat .claude/settings*.json", "ls .claude/*",
    "for f in .claude/settings*.json; do jq . \"$f\"; done", "rm -f build/*.o",
    "cd docs && rm -f *.bak", "gcc -o main src/app.c", "go build -o bin/app ./cmd/app",
    "mytool --output out.json", "uniq -c x.json", "xxd x.json | head", "env -C docs ls",
    "git -C docs log --oneline", "cmake -E make_directory build", "mkdir -p build/{bin,lib}",
    "python -m json.tool x.json", "openssl x509 -in cert.pem -text -noout",
    "governance explain-command \"$c\"", "echo ls | xargs governance explain-command",
    "for f in $(ls docs); do wc -l docs/$f; done", "ls -o .claude/", "tree --dirsfirst .claude",
    "mytool --timeout 5 .claude/settings.json", "go build -o . ./cmd/app", "pip download -d . x",
    "zip backup.zip .claude/settings.json", "time -p ls .claude", "tar -tf backup.tar",
    "tar -xf backup.tar x.json", "unzip -o backup.zip -d /tmp/restore",
    "tar czf backup.tgz .claude", "cp -t docs x.json", "env -C .claude ls; rm settings.json",
    "git clean -fd src", "git clean -ndx", "git clean -fdx build dist", "git clean -fX build/",
    "git stash", "git stash -u -- src", "git stash list", "git stash pop",
    "git stash push -a -- src",
    "sed -n '/warning/p' x.json", "sed -n 'w out/first.txt' x.json", "sed 's/a/b/w /dev/stdout' x.json",
    "gzip -c .claude/settings.json > /tmp/settings.gz", "gzip -dc backup.gz > x.json",
    "xz -l a.xz", "gzip build/state.json", "chattr +a out/notes.md",
])
def test_everyday_commands_are_not_governance_admin(layer: GovernanceLayer, cmd: str) -> None:
    assert "governance-admin" not in primitives(layer, cmd)


@pytest.mark.parametrize("code", [
    "python3 -c 'import os;os.chdir(\".claude\");open(\"settings.json\",\"w\").write(\"{}\")'",
    "python3 -c 'import os;os.rename(\".claude\",\".c2\")'",
    "python3 -c 'import shutil;shutil.move(\".claude\",\"/tmp/x\")'",
    "node -e 'process.chdir(\".claude\");require(\"fs\").unlinkSync(\"settings.json\")'",
    "node -e 'require(\"fs\").renameSync(\".claude\",\".c2\")'",
    "ruby -e 'Dir.chdir(\".claude\"){File.write(\"settings.json\",\"{}\")}'",
    "ruby -e 'require \"fileutils\";FileUtils.mv(\".claude\",\"/tmp/c\")'",
    "perl -e 'chdir \".claude\"; unlink \"settings.json\"'", "perl -e 'rename(\".claude\",\".c2\")'",
    "php -r 'chdir(\".claude\");unlink(\"settings.json\");'", "php -r 'rename(\".claude\",\".c2\");'",
    "lua -e 'os.rename(\".claude\",\".c2\")'",
    "node -e 'require(\"fs\").writeFileSync([\".claude\",\"settings.json\"].join(\"/\"),\"{}\")'",
    "node -e 'const p=require(\"path\");"
    "require(\"fs\").writeFileSync(p.join(\".claude\",\"settings.json\"),\"\")'",
    "ruby -e 'File.write(File.join(\".claude\",\"settings.json\"),\"{}\")'",
    "lua -e 'os.remove(\".claude/\"..\"settings.json\")'", "php -r 'unlink(\".claude/\".\"settings.json\");'",
    "python3 -c 'import os;p=os.path.join(os.getcwd(),\".claude\");os.rename(p,p+\"x\")'",
])
def test_code_that_moves_governance_or_writes_there_after_a_chdir(layer: GovernanceLayer,
                                                                  code: str) -> None:
    assert "governance-admin" in primitives(layer, code), code


def test_code_that_changes_folder_elsewhere_stays_ordinary(layer: GovernanceLayer) -> None:
    for code in ("python3 -c 'import os;os.chdir(\"out\");open(\"x\",\"w\")'",
                 "python3 -c 'import os;os.rename(\"src/app.py\",\"src/b.py\")'",
                 "node -e 'process.chdir(\"docs\");require(\"fs\").writeFileSync(\"a\",\"b\")'"):
        assert "governance-admin" not in primitives(layer, code), code
    assert "shell-unknown" in primitives(
        layer, "python3 -c 'import os,sys;os.chdir(sys.argv[1]);os.remove(\"x\")' .claude")


@pytest.mark.parametrize("command", [
    "cp -a /tmp/payload/. .", "cp -rT /tmp/payload .", "gzip -r .claude", "bzip2 -r .claude",
    "split -b 1 /dev/null .claude/governance/state.json", "split --filter='rm -rf .claude' x.json",
    "csplit -f .claude/governance/seal x.json 1", "fallocate -l 0 -p .claude/settings.json",
    "git config --file .claude/settings.json a.b c", "git config -f .claude/settings.json --add a.b c",
    "sqlite3 :memory: '.output .claude/settings.json' 'select 1'",
    "sqlite3 :memory: '.backup .claude/governance/g.db'",
    "sqlite3 /tmp/x.db \"ATTACH '.claude/governance/ledger.db' AS l; DELETE FROM l.events\"",
    "git worktree add .claude/governance/x", "git clone /tmp/repo .claude/governance/y",
    "python3 -m zipfile -e /tmp/evil.zip .", "python3 -m tarfile -e /tmp/evil.tar .",
])
def test_writers_of_whole_folders_pieces_and_databases(layer: GovernanceLayer,
                                                       command: str) -> None:
    assert "governance-admin" in primitives(layer, command), command


@pytest.mark.parametrize("command", [
    "cp -a /tmp/payload/. build/", "cp x.json .", "gzip out/notes.md", "split -l 10 x.json out/p",
    "fallocate -l 1M out/disk.img", "git config -f .gitmodules submodule.x.url y",
    "sqlite3 app.db '.output out/rows.csv' 'select * from t'",
    "sqlite3 /tmp/x.db \"ATTACH '.claude/governance/ledger.db' AS l; select count(*) from l.events\"",
    "git clone https://github.com/a/b vendor/b", "python3 -m zipfile -e /tmp/a.zip out/",
])
def test_those_writers_elsewhere_are_ordinary(layer: GovernanceLayer, command: str) -> None:
    assert "governance-admin" not in primitives(layer, command), command


@pytest.mark.parametrize("command", [
    "find . -maxdepth 1 -name '.c*' -execdir mv {} /tmp/gone \\;",
    "find . -maxdepth 1 -name '.c*' -exec rm -rf {} +", "find . -name .claude -exec mv {} /tmp \\;",
    "find . -mindepth 2 -maxdepth 2 -name governance -type d -exec rm -r {} +",
])
def test_find_acting_on_a_folder_of_governance_files(layer: GovernanceLayer,
                                                     command: str) -> None:
    assert "governance-admin" in primitives(layer, command), command


def test_find_acting_on_other_folders(layer: GovernanceLayer) -> None:
    for command in ("find . -maxdepth 1 -type d -exec du -sh {} \\;",
                    "find . -name out -type d -exec rm -rf {} +", "find docs -exec touch {} +"):
        assert "governance-admin" not in primitives(layer, command), command


# --- the false denies of the issue ---------------------------------------------------------------
@pytest.mark.parametrize("cmd, kept_out", [
    ("rpm -qip pkg.rpm", "package-install"), ("rpm -qlp pkg.rpm", "package-install"),
    ("rpm -q --changelog bash", "package-install"), ("rpm -V bash", "package-install"),
    ("chmod -R g+r docs/", "destructive"), ("chmod -R a+rX docs", "destructive"),
    ("chmod -R u+w src", "destructive"), ("chmod -R go-rwx notes", "destructive"),
    ("dd if=/dev/urandom bs=16 count=1 | base64", "destructive"),
    ("dd if=x.json | sha256sum", "destructive"),
    ("pacman -Ss nginx", "package-install"), ("yay -Si foo", "package-install"),
])
def test_everyday_system_commands_are_not_denied(layer: GovernanceLayer, cmd: str,
                                                 kept_out: str) -> None:
    assert kept_out not in primitives(layer, cmd)


MODES = st.sampled_from(["777", "000", "755", "644", "a=r", "u=rwx,go=", "a-w", "-w", "u-r",
                         "-x", "+x", "a+x", "o+w", "+w", "g+s", "ug+w", "go+u", "=rw"])


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mode=MODES, recursive=st.sampled_from(["-R", "--recursive", "-Rv", "-cR"]),
       folder=st.sampled_from(["src", "docs/", "."]))
def test_a_recursive_chmod_that_replaces_removes_or_opens_is_destructive(
        layer: GovernanceLayer, mode: str, recursive: str, folder: str) -> None:
    assert "destructive" in primitives(layer, f"chmod {recursive} {mode} {folder}")


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mode=st.sampled_from(["g+r", "a+r", "+r", "a+rX", "u+w", "go-rwx", "o-r", "g-w", "+X",
                             "u+rw,go+r"]),
       recursive=st.sampled_from(["-R", "--recursive", "-Rv"]))
def test_a_recursive_chmod_that_only_adds_reading_is_not_destructive(
        layer: GovernanceLayer, mode: str, recursive: str) -> None:
    assert "destructive" not in primitives(layer, f"chmod {recursive} {mode} docs")


@pytest.mark.parametrize("cmd", ["rpm -ivh pkg.rpm", "rpm -Uvh pkg.rpm", "rpm -e bash",
                                 "rpm --install pkg.rpm", "pacman -Syu", "pacman -S nginx"])
def test_installing_is_still_package_install(layer: GovernanceLayer, cmd: str) -> None:
    assert "package-install" in primitives(layer, cmd)


def test_dd_writing_a_file_is_still_destructive(layer: GovernanceLayer) -> None:
    assert "destructive" in primitives(layer, "dd if=/dev/zero of=disk.img bs=1M count=1")


@pytest.mark.parametrize("command", [
    "echo {} > /proc/self/cwd/.claude/settings.json",
    "cd src && echo {} > /proc/self/cwd/../.claude/settings.json",
    "cp x.json /proc/$$/cwd/.claude/settings.local.json",
    "cd src; rm -f /proc/thread-self/cwd/../.claude/governance/state.json",
])
def test_a_process_folder_link_is_the_shells_folder(layer: GovernanceLayer, command: str) -> None:
    # /proc/self/cwd is the folder the shell is in when it runs the command, not the hook's
    assert "governance-admin" in primitives(layer, command), command


COMPOSE_ADMIN = [
    "services:\n  a:\n    image: alpine\n    volumes:\n      - ./.claude:/c\n",
    "services:\n  a:\n    image: alpine\n    volumes: [\".claude/hooks:/h:rw\"]\n",
    "services:\n  a:\n    volumes:\n      - type: bind\n        source: ./.claude\n        target: /c\n",
    "services:\n  a:\n    volumes: ['.:/w']\n    command: sh -c 'echo {} > /w/.claude/settings.json'\n",
    "services:\n  a:\n    volumes: ['.:/w']\n    entrypoint: [rm, -rf, /w/.claude/governance]\n",
]
COMPOSE_ORDINARY = (
    "services:\n  web:\n    build: .\n    volumes:\n      - .:/app\n      - node_modules:/app/node_modules\n"
    "    command: npm run dev\n    environment:\n      - NODE_ENV=development\n"
    "  db:\n    image: postgres:16\n    volumes: [pgdata:/var/lib/postgresql/data]\n"
    "volumes:\n  pgdata: {}\n  node_modules: {}\n")


@pytest.mark.parametrize("text", COMPOSE_ADMIN)
@pytest.mark.parametrize("command", [
    "docker compose up -d", "docker compose -f {f} up", "docker-compose --file={f} run a",
    "podman compose up", "docker compose --project-directory . create", "docker compose start",
])
def test_compose_files_that_mount_or_write_governance_files(tmp_path: Path, text: str,
                                                            command: str) -> None:
    project = tmp_path / "p"
    (project / ".claude" / "governance").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text("{}")
    name = "docker-compose.yml" if "{f}" not in command else "deploy/stack.yml"
    (project / name).parent.mkdir(parents=True, exist_ok=True)
    (project / name).write_text(text)
    (project / "deploy" / ".claude").mkdir(parents=True, exist_ok=True)   # stays unread
    with layer_in_do(project, tmp_path / "home") as layer:
        assert "governance-admin" in primitives(layer, command.format(f=name)), command
        written = f"printf %s {quote(text)} > c.yml && docker compose -f c.yml up"
        assert "governance-admin" in primitives(layer, written)


def test_an_ordinary_compose_file_and_reading_commands_are_not_admin(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text("{}")
    (project / "compose.yaml").write_text(COMPOSE_ORDINARY)
    with layer_in_do(project, tmp_path / "home") as layer:
        for command in ("docker compose up -d", "docker compose run --rm web npm test",
                        "docker-compose up --build", "docker compose -f missing.yml up"):
            assert "governance-admin" not in primitives(layer, command), command
        (project / "compose.yaml").write_text(COMPOSE_ADMIN[0])
        for command in ("docker compose ps", "docker compose logs -f", "docker compose config"):
            assert "governance-admin" not in primitives(layer, command), command
        assert "shell-unknown" in primitives(layer, 'docker compose -f "$COMPOSE" up')


@pytest.mark.parametrize("code", [
    "python3 -c 'import sys; open(sys.argv[1], \"w\").write(\"{{}}\")' {path}",
    "python3 -c 'import os, sys; os.remove(sys.argv[-1])' -- {path}",
    "perl -e 'unlink @ARGV' {path}",
    "node -e 'require(\"fs\").rmSync(process.argv[1])' {path}",
    "ruby -e 'File.delete(ARGV[0])' {path}",
])
def test_inline_code_that_writes_the_file_it_is_given(layer: GovernanceLayer, code: str) -> None:
    assert "governance-admin" in primitives(layer, code.format(path=".claude/settings.json"))
    assert "governance-admin" not in primitives(layer, code.format(path="docs/settings.json"))


def test_inline_code_that_only_reads_the_file_it_is_given(layer: GovernanceLayer) -> None:
    command = "python3 -c 'import sys, json; print(json.load(open(sys.argv[1])))' "
    assert "governance-admin" not in primitives(layer, command + ".claude/settings.json")


@pytest.mark.parametrize("command", [
    "grep -rlF '{}' . | xargs sed -i s/a/b/",
    "grep -rl '[{]' . | sort | xargs rm -f",
    "rm -f $(grep -rlF '{}' .)",
    "for f in $(grep -rlF '{}' .); do sed -i s/a/b/ \"$f\"; done",
    "find . -name settings.json | xargs rm -f",
    "find . -type f | xargs sed -i s/a/b/",
    "rg -l --hidden -F '{}' | xargs rm",
    "fd -H settings | xargs rm",
])
def test_a_search_that_may_list_governance_files_feeds_a_write(layer: GovernanceLayer,
                                                               command: str) -> None:
    assert "governance-admin" in primitives(layer, command), command


@pytest.mark.parametrize("command", [
    "grep -rl no-such-words-anywhere . | xargs sed -i s/a/b/",
    "grep -rlF '{}' src docs | xargs sed -i s/a/b/",
    "find . -name '*.py' | xargs sed -i s/a/b/",
    "rg -lF '{}' | xargs sed -i s/a/b/",
    "fd settings | xargs rm",
])
def test_a_search_that_cannot_list_them_stays_ordinary(layer: GovernanceLayer,
                                                       command: str) -> None:
    assert "governance-admin" not in primitives(layer, command), command
