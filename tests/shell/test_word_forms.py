"""Words read as bash reads them before a program sees them: a bare brace pattern is several
words (``git {push,}`` is ``git push``), ``$HOME`` and ``~+`` name the folders they stand for,
git's dashed programs (``git-push``) are the git commands they are, chmod's ``-x`` is a mode,
and Claude Code's own folders are protected wherever ``CLAUDE_CONFIG_DIR`` puts them.

Decided as the PreToolUse hook decides, in a project with the default matrix in DO."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from governance.policy.layer import GovernanceLayer
from tests.helpers import layer_in_do


@pytest.fixture
def layer(tmp_path: Path) -> Iterator[GovernanceLayer]:
    root = tmp_path / "forms"
    project = root / "shop-api"
    for name in (".claude/settings.json", "src/app.py", "src/a.py"):
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text("{}\n")
    home = root / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text("{}\n")
    with layer_in_do(project, home) as layer:
        yield layer


def primitives(layer: GovernanceLayer, command: str) -> set[str]:
    acts, _ = layer.acts_for("Bash", {"command": command}, layer.project_dir)
    return {a.primitive for a in acts}


@pytest.mark.parametrize(("command", "primitive"), [
    ("git {push,}", "vcs-push"), ("git {push,origin}", "vcs-push"), ("git pu{s,}h", "vcs-push"),
    ("x=push; git {\"$x\",}", "vcs-push"), ("rm {-rf,src}", "destructive"),
    ("{rm,-rf,/}", "destructive"), ("terraform {destroy,-auto-approve}", "destructive"),
    ("rm -rf .c{laude,ache}", "governance-admin"), ("mv .{claude,old}", "governance-admin"),
])
def test_a_bare_brace_pattern_is_the_words_it_expands_to(layer: GovernanceLayer, command: str,
                                                         primitive: str) -> None:
    assert primitive in primitives(layer, command), command


@pytest.mark.parametrize("command", [
    "git '{push,}'", 'git "{push,}"', "git \\{push,\\}", "echo {a,b}", "mkdir -p src/{a,b}/c",
    "awk '{print $1}' src/a.py", "find . -name '{a,b}'", "echo {1..100}",
])
def test_quoted_braces_and_harmless_patterns_stay_quiet(layer: GovernanceLayer,
                                                         command: str) -> None:
    assert not primitives(layer, command) & {"vcs-push", "destructive", "governance-admin",
                                              "shell-unknown"}, command


def test_a_brace_pattern_names_every_file_it_expands_to(layer: GovernanceLayer) -> None:
    assert "file-write" in primitives(layer, "cp src/{a,app}.py")   # cp src/a.py src/app.py


@pytest.mark.parametrize(("command", "primitive"), [
    ("/usr/lib/git-core/git-push", "vcs-push"), ("git-push --force origin main", "vcs-push"),
    ("cd /usr/lib/git-core && ./git-push", "vcs-push"), ("git-reset --hard", "destructive"),
    ("git-clean -ffdx", "governance-admin"), ("git-lfs prune", "destructive"),
])
def test_git_dashed_programs_are_the_git_commands_they_run(layer: GovernanceLayer, command: str,
                                                           primitive: str) -> None:
    assert primitive in primitives(layer, command), command
    assert primitives(layer, "git-status") == {"shell-read"}


@pytest.mark.parametrize("command", [
    'mv "$HOME/.claude" /tmp/hc', 'rm -rf "$HOME/.claude"', "mv ${HOME}/.claude /tmp/x",
    "rm -rf ~+/.claude", "rm -rf ~+", "chmod -x .claude/settings.json",
    "chmod -w .claude/settings.json", "chmod -- -r .claude/settings.json",
    'echo x > "$HOME/.claude/shell-snapshots/snapshot-bash-1.sh"',
    "echo '{}' > ~/.claude/daemon.json", "rm -rf ~/.claude/jobs", "touch ~/.claude/rm-guard/rm",
])
def test_home_here_and_mode_spellings_of_governance_files(layer: GovernanceLayer,
                                                          command: str) -> None:
    assert "governance-admin" in primitives(layer, command), command


def test_a_home_the_command_sets_is_that_home(layer: GovernanceLayer) -> None:
    found = primitives(layer, 'HOME=/tmp/elsewhere; rm -rf "$HOME/.claude"')
    assert "governance-admin" not in found and "destructive" in found
    assert primitives(layer, 'cat "$HOME/.bashrc"') == {"shell-read"}
    assert "file-write" in primitives(layer, "chmod -x src/a.py")
    assert "governance-admin" not in primitives(layer, "chmod -v 644 src/a.py")


def test_claude_code_configuration_elsewhere_is_protected(
        layer: GovernanceLayer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tmp_path / "claude-config"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(elsewhere))
    fresh = GovernanceLayer(layer.project_dir, layer.matrix)
    for path in ("settings.json", "session-env/s.sh", ".claude.json", "shell-snapshots/x.sh"):
        assert fresh.is_protected(str(elsewhere / path)), path
    assert not fresh.is_protected(str(elsewhere / "notes.txt"))
    acts, _ = fresh.acts_for("Bash", {"command": f"rm -rf {elsewhere}"}, fresh.project_dir)
    assert "governance-admin" in {a.primitive for a in acts}
    monkeypatch.delenv("CLAUDE_CONFIG_DIR")
    assert not GovernanceLayer(layer.project_dir, layer.matrix).is_protected(
        str(elsewhere / "settings.json"))


def test_git_deleting_governance_files_it_does_not_track(layer: GovernanceLayer) -> None:
    """``git clean -f`` and ``git stash -u`` take the untracked files git does not ignore: in a
    project that does not commit ``.claude/settings.json``, the hooks' settings."""
    import subprocess

    for command in ("git clean -fd", "git clean -f", "git stash -u",
                    "git stash push --include-untracked", "git clean -fd .claude"):
        assert "governance-admin" in primitives(layer, command), command
    assert "governance-admin" not in primitives(layer, "git clean -fd src")
    assert "governance-admin" not in primitives(layer, "git clean -n")
    root = layer.project_dir
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"],
                   cwd=root, check=True)
    for command in ("git clean -fd", "git stash -u"):      # committed: git keeps them
        assert "governance-admin" not in primitives(layer, command), command


@pytest.mark.parametrize(("command", "primitive"), [
    ("declare -a 'a=([$(git push)]=1)'", "vcs-push"), ("declare 'a=([$(rm -rf src)]=1)'",
                                                      "destructive"),
    ("local -a 'a=($(git push))'", "vcs-push"), ("typeset -A 'm=([k]=$(git push))'", "vcs-push"),
])
def test_a_quoted_compound_value_is_parsed_as_typed(layer: GovernanceLayer, command: str,
                                                    primitive: str) -> None:
    assert primitive in primitives(layer, command), command
    assert primitives(layer, "declare -a 'a=(one two)'") == {"shell-read"}


@pytest.mark.parametrize(("command", "primitive"), [
    ("railway up", "deploy"), ("skaffold run -p prod", "deploy-production"),
    ("ansible-playbook -i prod deploy.yml", "deploy-production"), ("eas submit -p ios", "deploy"),
    ("zappa update production", "deploy-production"), ("dpl --provider=heroku", "deploy"),
    ("npx surge dist example.surge.sh", "deploy"), ("wrangler deploy", "deploy"),
    ("wrangler pages deploy dist", "deploy"), ("az webapp up -n shop", "deploy"),
    ("dokku ps:rebuild shop", "deploy"), ("nomad job stop -purge api", "destructive"),
])
def test_deploys_of_other_platforms(layer: GovernanceLayer, command: str, primitive: str) -> None:
    assert primitive in primitives(layer, command), command


def test_checks_of_those_platforms_are_not_deploys(layer: GovernanceLayer) -> None:
    for command in ("ansible-playbook --check site.yml", "wrangler dev", "nomad job status",
                    "dokku apps:list"):
        assert not {p for p in primitives(layer, command) if p.startswith("deploy")}, command


def test_a_reset_after_the_command_moved_a_ref_brings_unknown_files(
        layer: GovernanceLayer) -> None:
    """A branch, HEAD or tag moved earlier in the command: which commit ``reset --hard`` then
    brings is known only at run time, and the project holds governance files."""
    import subprocess

    root = layer.project_dir

    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root,
                       check=True, capture_output=True)

    git("add", "-A")
    git("commit", "-qm", "start")
    git("checkout", "-qb", "loose")
    (Path(root) / ".claude" / "settings.json").write_text('{"hooks": {}}\n')
    git("commit", "-qam", "loose")
    git("checkout", "-q", "-")
    for command in ("git update-ref HEAD loose && git reset --hard",
                    "git symbolic-ref HEAD refs/heads/loose && git reset --hard",
                    "echo ref: refs/heads/loose > .git/HEAD && git reset --hard",
                    "git tag t loose && git reset --hard t",
                    "git branch -f main2 loose && git checkout main2"):
        assert "governance-admin" in primitives(layer, command), command
    for command in ("git branch feature && git checkout feature", "git reset --hard",
                    "git checkout -b topic && git commit -qam x"):
        assert "governance-admin" not in primitives(layer, command), command


@pytest.mark.parametrize("command", [
    "echo 'rm -f {root}/.claude/settings.json' >> ~/.bashrc",
    "printf 'rm -rf {root}/.claude\\n' >> ~/.profile",
    "echo 'rm -rf .claude' > .git/hooks/post-commit && chmod +x .git/hooks/post-commit",
    "echo '{{\"scripts\":{{\"postinstall\":\"rm -rf .claude\"}}}}' > package.json",
    "echo 'rm -rf .claude' > .envrc && direnv allow",
    "cat > ~/.config/systemd/user/x.service <<'EOF'\n[Service]\nExecStart=/bin/rm -rf {root}/.claude\nEOF",
    "echo '* * * * * rm -f {root}/.claude/settings.json' >> /var/spool/cron/crontabs/me",
    "echo '*/5 * * * * root rm -rf {root}/.claude' > /etc/cron.d/sync",
])
def test_a_command_planted_where_it_runs_later(layer: GovernanceLayer, command: str) -> None:
    """What a start-up file, a git hook, .envrc, a unit or package.json runs later may run in
    the person's own terminal, outside any hook: a governance change planted there is
    governance-admin now."""
    cmd = command.format(root=layer.project_dir)
    assert "governance-admin" in primitives(layer, cmd), cmd


@pytest.mark.parametrize("command", [
    "echo 'export PATH=$HOME/bin:$PATH' >> ~/.bashrc", "echo 'npm test' > .git/hooks/pre-push",
    "echo '{\"scripts\":{\"test\":\"jest\"}}' > package.json", "echo 'layout python' > .envrc",
    "echo 'rm -rf .claude' > notes.txt",
])
def test_ordinary_start_up_files_and_hooks_are_not(layer: GovernanceLayer, command: str) -> None:
    assert "governance-admin" not in primitives(layer, command), command


def test_file_tools_planting_a_governance_change(layer: GovernanceLayer) -> None:
    root = Path(layer.project_dir)

    def kinds(tool: str, tool_input: dict[str, object]) -> set[str]:
        acts, _ = layer.acts_for(tool, tool_input, layer.project_dir)
        return {a.primitive for a in acts}

    hook = str(root / ".git" / "hooks" / "post-commit")
    assert "governance-admin" in kinds("Write", {"file_path": hook,
                                                 "content": "#!/bin/sh\nrm -rf .claude\n"})
    assert "governance-admin" in kinds("Write", {
        "file_path": str(root / "package.json"),
        "content": '{"scripts": {"prepare": "rm -f .claude/settings.json"}}'})
    assert "governance-admin" in kinds("Edit", {"file_path": hook, "old_string": "x",
                                                "new_string": "rm -rf .claude"})
    found = kinds("Write", {"file_path": hook, "content": "#!/bin/sh\nnpm test\n"})
    assert "governance-admin" not in found and "exec-config" in found


@pytest.mark.parametrize("command", [
    'a=(.claude settings.json); rm "${a[0]}/${a[1]}"', 'x=.claude; y=x; rm -rf "${!y}"',
    'p=.CLAUDE; rm -rf "${p,,}"', 'p=.cl_ude; rm -rf "${p/_/a}"', 'p=x/.claude; rm -rf "${p#*/}"',
    'p=.claude.bak; rm -rf "${p%.bak}"', 'p=""; rm -rf "${p:-.claude}"',
    'rm -rf "${NOT_SET_ANYWHERE:-.claude}"', 'p=.claudeXYZ; rm -rf "${p:0:7}"',
])
def test_parameter_expansions_the_analysis_can_work_out(layer: GovernanceLayer,
                                                        command: str) -> None:
    assert "governance-admin" in primitives(layer, command), command


def test_parameter_expansion_values() -> None:
    from governance.shell.parameters import value

    known = {"p": "src/app.py", "a": "one two three", "r": "p", "e": ""}
    assert value("p%.py", known) == "src/app"
    assert value("p%%/*", known) == "src"
    assert value("p##*/", known) == "app.py"
    assert value("p//p/P", known) == "src/aPP.Py"
    assert value("p/#src/lib", known) == "lib/app.py"
    assert value("a[2]", known) == "three"
    assert value("!r", known) == "src/app.py"
    assert value("#p", known) == "10"
    assert value("p^^", known) == "SRC/APP.PY"
    assert value("e:-fallback", known) == "fallback"
    assert value("e-fallback", known) == ""
    assert value("p:4", known) == "app.py"
    assert value("p:-x", known) == "src/app.py"
    assert value("q:-x", known) is None                       # may be set in the environment
    assert value("q:-x", known, lambda _name: None) == "x"
    assert value("q:-x", known, lambda _name: "env") == "env"
    assert value("p/$x/y", known) is None and value("p@Q", known) is None


def test_a_folder_named_by_ls_d_is_the_folder_it_lists(layer: GovernanceLayer) -> None:
    for command in ('cd "$(ls -d .c*)" && rm settings.json', "rm -rf $(ls -d .c*)",
                    "mv $(ls -d .cl?ude) /tmp/x"):
        assert "governance-admin" in primitives(layer, command), command
    assert "governance-admin" not in primitives(layer, 'cd "$(ls -d sr*)" && rm a.py')


def test_a_list_read_from_a_file_on_disk(layer: GovernanceLayer, tmp_path: Path) -> None:
    """``$(< FILE)``, ``$(cat FILE)``, ``xargs < FILE``, ``xargs -a FILE`` and ``cat FILE |
    xargs`` take the file's text as it is now."""
    names = tmp_path / "names.txt"
    names.write_text(".claude\n")
    for command in (f'p=$(< {names}); rm -rf "$p"', f"rm -rf $(cat {names})",
                    f"xargs rm -rf < {names}", f"xargs -a {names} rm -rf",
                    f"cat {names} | xargs rm -rf"):
        assert "governance-admin" in primitives(layer, command), command
    names.write_text("build\n")
    assert "governance-admin" not in primitives(layer, f"xargs rm -rf < {names}")


@pytest.mark.parametrize("command", [
    "rsync --remove-source-files -a .claude/ /tmp/cc/", "rsync -a --delete /tmp/empty/ ./",
    "uv pip install --python {venv} -e /tmp/other-governance",
    "pip install --python {venv} other-governance",
    "git filter-branch -f --tree-filter 'rm -rf .claude' HEAD",
])
def test_syncs_installs_and_rewrites_that_reach_governance(layer: GovernanceLayer,
                                                           command: str) -> None:
    import sys

    cmd = command.format(venv=sys.executable)
    assert "governance-admin" in primitives(layer, cmd), cmd


def test_those_commands_elsewhere(layer: GovernanceLayer) -> None:
    for command in ("rsync -a --delete src/ /tmp/backup/", "uv pip install -r requirements.txt",
                    "git filter-branch --prune-empty --subdirectory-filter lib HEAD"):
        assert "governance-admin" not in primitives(layer, command), command


def test_git_pathspecs_with_patterns_and_magic(layer: GovernanceLayer) -> None:
    """``*.json`` in a git pathspec crosses folders; ``:(glob)`` and ``:/`` are git's magic:
    git is asked which files the checkout or restore writes."""
    import subprocess

    root = layer.project_dir

    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root,
                       check=True, capture_output=True)

    git("add", "-A")
    git("commit", "-qm", "start")
    git("checkout", "-qb", "loose")
    (Path(root) / ".claude" / "settings.json").write_text('{"hooks": {}}\n')
    (Path(root) / "src" / "a.py").write_text("changed = True\n")
    git("commit", "-qam", "loose")
    git("checkout", "-q", "-")
    for command in ("git checkout loose -- '*.json'", "git checkout loose -- ':(glob)**/settings.json'",
                    "git restore -s loose ':/*.json'"):
        assert "governance-admin" in primitives(layer, command), command
    for command in ("git checkout loose -- 'src/*.py'", "git restore -s loose '*.py'",
                    "git restore --staged '*.json'"):
        assert "governance-admin" not in primitives(layer, command), command
