"""Commands and places given in another command's arguments (docs/shell.md, "Commands in options
and variables", "Folders and links", "Governance's own environment"): a known program's
subcommand that runs what follows it, a reader's option that runs a command or writes a file, a
process substitution a shell reads, the folder stack, links this command makes, the folder git
keeps its repository in, and the Python environment the hooks run from."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from governance.policy.layer import GovernanceLayer
from tests.helpers import layer_in_do
from tests.helpers import layer_primitives as primitives


@pytest.fixture(scope="module")
def layer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GovernanceLayer]:
    root = tmp_path_factory.mktemp("arguments")
    project, home = root / "shop-api", root / "home"
    for name, text in [("shop-api/src/app.py", "x = 1\n"), ("shop-api/.claude/settings.json", "{}\n"),
                       ("home/data/keep.txt", "keep\n")]:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    with layer_in_do(project, home) as layer:
        yield layer


@pytest.fixture(autouse=True)
def home_of_layer(layer: GovernanceLayer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(Path(layer.project_dir).parent / "home"))
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.delenv("PYENV_ROOT", raising=False)


@pytest.mark.parametrize("command", [
    "mise exec -- rm -rf ~/data",
    "mise exec node@20 -- rm -rf ~/data",
    "nix develop -c rm -rf ~/data",
    "micromamba run -n base rm -rf ~/data",
    "npm explore left-pad -- rm -rf ~/data",
    "cmake -E env FOO=1 rm -rf ~/data",
    "gdb --args rm -rf ~/data",
    "lldb -- rm -rf ~/data",
    "fd -e txt . ~/data -x rm -rf",
    "fd . ~/data --exec-batch rm -rf {}",
    "man -P 'rm -rf ~/data' ls",
    "man --pager='rm -rf ~/data' ls",
    "echo 'rm -rf ~/data' > >(sh)",
    "printf 'rm -rf ~/data\\n' | tee >(bash) >/dev/null",
])
def test_a_command_run_from_another_ones_arguments_is_decided_as_itself(
        layer: GovernanceLayer, command: str) -> None:
    assert "destructive" in primitives(layer, command)


@pytest.mark.parametrize("command", [
    "fd -H settings -x rm",
    "fd -H settings .claude -x sed -i s/a/b/ {}",
    "tree -o .claude/settings.json",
    "find . -fprint0 .claude/settings.json",
    "history -w .claude/settings.json",
    "gawk --dump-variables=.claude/settings.json 'BEGIN{}'",
    "gawk --prof=.claude/governance/state.json 'BEGIN{}'",
    "gawk -p.claude/settings.json 'BEGIN{}'",
    "cd .claude; cd /tmp; cd -; rm settings.json",
    "cd .claude && pushd /tmp && popd && rm settings.json",
    "pushd .claude && pushd /tmp && pushd +1 && rm settings.json",
    'cd "$X" && rm settings.json',
    'cd "$(cat where.txt)" && echo {} > settings.local.json',
    "ln -s . loop && rm loop/.claude/settings.json",
    'ln -s "$PWD" loop && echo {} > loop/.claude/settings.json',
    "cd src && ln -s .. up && rm up/.claude/settings.json",
    "cp -al .claude /tmp/x && echo '{}' > /tmp/x/settings.json",
    'ln -s "$X" l && rm l/settings.json',
    "git init .claude/governance",
    "GIT_DIR=.claude/governance git init",
    "export GIT_INDEX_FILE=.claude/settings.json; git add src",
    "git --git-dir=.claude/governance status",
    "git init --separate-git-dir=.claude/governance elsewhere",
    "scala -e 'new java.io.File(\".claude/settings.json\").delete()'",
    "elixir -e 'File.rm!(\".claude/settings.json\")'",
    "guile -c '(delete-file \".claude/governance/state.json\")'",
    "sbcl --eval '(delete-file \".claude/settings.json\")' --quit",
])
def test_a_governance_file_reached_through_arguments_is_governance_admin(
        layer: GovernanceLayer, command: str) -> None:
    assert "governance-admin" in primitives(layer, command)


@pytest.mark.parametrize("command", [
    "cargo run --bin server -- --port 8080",
    "npm test -- --watch",
    "cargo clippy -- -D warnings",
    "cmake -S . -B build",
    "fd -e py -x wc -l",
    "fd -e pyc -x rm {}",
    "man -P cat ls",
    "rg --pre-glob '*.gz' foo",
    "tree -L 2 src",
    "find . -name '*.py' -print0",
    "history 20",
    "awk -F, '{print $1}' data.csv",
    "ls > >(wc -l)",
    "make 2> >(tee build.log >&2)",
    "cd src && cd - && ls",
    "pushd src && popd && git status",
    'cd "$X" && echo x > notes.md',
    "cp -a .claude /tmp/x && echo '{}' > /tmp/x/settings.json",
    "ln -s src s && rm s/app.py",
    "git init newproj",
    "git status",
    "pipx uninstall black",
    "uv pip install requests",
    "uv venv",
    "pyenv uninstall -f 3.9.1",
    "sometool --config=config/app.toml src",
    "scala -e 'println(\"hello\")'",
    "mise exec -- sometool src/app.py",
    "sometool --timeout 5 .claude/settings.json",
    "gzip -c .claude/settings.json > /tmp/settings.gz",
])
def test_everyday_commands_stay_as_they_were(layer: GovernanceLayer, command: str) -> None:
    found = primitives(layer, command)
    assert "governance-admin" not in found
    assert "destructive" not in found


@pytest.mark.parametrize("command", [
    f"{sys.executable} -m pip uninstall -y pyyaml",
    f"{Path(sys.executable).parent}/pip install pyyaml==5.1",
    f"PATH={Path(sys.executable).parent}:$PATH pip uninstall -y pydantic",
    f"uv pip install --python {sys.executable} pyyaml==5.1",
    f"{sys.executable} -m venv --clear {sys.prefix}",
    f"virtualenv --clear {sys.prefix}",
    "uv tool uninstall claude-governance",
    "pipx uninstall claude-governance",
    "pipx uninstall-all",
])
def test_changing_the_environment_the_hooks_run_from_is_governance_admin(
        layer: GovernanceLayer, command: str) -> None:
    assert "governance-admin" in primitives(layer, command)


def test_removing_the_interpreter_the_environment_was_made_from_is_governance_admin(
        layer: GovernanceLayer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = Path(sys.base_prefix)
    if base.parent.name != "versions":
        pytest.skip(f"the interpreter's base ({base}) is not a pyenv version folder")
    monkeypatch.setenv("PYENV_ROOT", str(base.parent.parent))
    assert "governance-admin" in primitives(layer, f"pyenv uninstall -f {base.name}")


@pytest.mark.parametrize("command", [
    "7z a -sdel backup.7z src",
    "rsync -a --delete-delay src/ ~/data/",
    "rsync -a --del src/ ~/data/",
    "git branch -C main feature",
])
def test_more_spellings_of_destruction(layer: GovernanceLayer, command: str) -> None:
    assert "destructive" in primitives(layer, command)
