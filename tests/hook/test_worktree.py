"""git commands that bring another commit's files into the working tree (a branch switch, a
merge, a reset, a cherry-pick, a stash) replace a tracked protected file without naming it: git
is asked which files differ, and a protected one is governance-admin. Through the exact installed
PreToolUse command in a temporary project in DO, with the attack performed for real afterwards
to show its effect; everyday switches and merges stay as they were."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.hook.test_exec_config import decision, last_primitives, pre

IDENT = ["-c", "user.name=a", "-c", "user.email=a@b", "-c", "commit.gpgsign=false"]
LOOSE = {"permissions": {"allow": ["Bash(*)"]}}


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *IDENT, *args], capture_output=True,
                          text=True, check=True)
    return done.stdout.strip()


@pytest.fixture
def repo(project: Path) -> Path:
    """A project whose installed settings are committed on main, a branch ``loose`` whose
    settings grant every Bash command, and a branch ``feature`` that changes only code."""
    from tests.helpers import install, set_state

    subprocess.run(["git", "init", "-q", "-b", "main", str(project)], check=True)
    install(project)
    set_state(project, "implementation-cycle/DO/WORK-31")
    (project / ".gitignore").write_text(".claude/governance/\n")
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text("x = 1\n")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "init")
    git(project, "checkout", "-q", "-b", "loose")
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    (project / ".claude" / "settings.json").write_text(json.dumps({**settings, **LOOSE}))
    git(project, "commit", "-q", "-am", "loosen")
    git(project, "checkout", "-q", "-b", "feature", "main")
    (project / "src" / "app.py").write_text("x = 2\n")
    git(project, "commit", "-q", "-am", "feature")
    git(project, "checkout", "-q", "main")
    return project


def denied(repo: Path, command: str) -> bool:
    answer = pre(repo, "Bash", {"command": command})
    return decision(answer) == "deny" and "governance-admin" in last_primitives(repo)


def quiet(repo: Path, command: str) -> bool:
    answer = pre(repo, "Bash", {"command": command})
    return decision(answer) == "none" and "governance-admin" not in last_primitives(repo)


@pytest.mark.parametrize("command", [
    "git checkout loose", "git switch loose", "git checkout -b mine loose",
    "git switch -c mine loose", "git checkout --detach loose", "git -C src checkout loose",
    "git merge loose", "git merge --no-ff feature loose", "git rebase loose",
    "git rebase --onto loose main", "git reset --keep loose", "git cherry-pick loose",
    "git cherry-pick main..loose", "git checkout \"$BRANCH\"", "git switch --orphan empty",
    "cd \"$(git rev-parse --show-toplevel)\" && git checkout loose",
])
def test_a_commit_with_other_settings_is_governance_admin(repo: Path, command: str) -> None:
    assert denied(repo, command), command


@pytest.mark.parametrize("command", [
    "git checkout feature", "git switch feature", "git checkout -b topic", "git switch -c t2",
    "git merge feature", "git rebase feature", "git cherry-pick feature", "git checkout -",
    "git stash", "git checkout src/app.py", "git log loose",
    "git diff loose", "git checkout no-such-branch",
])
def test_switches_that_leave_governance_alone_stay_quiet(repo: Path, command: str) -> None:
    assert quiet(repo, command), command


def test_the_switch_would_have_loosened_the_settings(repo: Path) -> None:
    assert denied(repo, "git checkout loose")
    git(repo, "checkout", "-q", "loose")                      # what the attack does
    settings = json.loads((repo / ".claude" / "settings.json").read_text())
    assert settings["permissions"] == LOOSE["permissions"]


def test_discarding_a_local_change_to_the_settings_is_governance_admin(repo: Path) -> None:
    settings = repo / ".claude" / "settings.json"
    before = settings.read_text()
    (repo / "src" / "app.py").write_text("x = 3\n")
    assert quiet(repo, "git stash")                           # only code changed
    settings.write_text(before.replace("{", '{"note": 1, ', 1))   # the user's own edit
    for command in ("git stash", "git stash push -m wip", "git reset --hard",
                    "git checkout -f feature", "git switch --discard-changes feature"):
        assert denied(repo, command), command
    git(repo, "stash", "-q")                                  # what the attack does
    assert settings.read_text() == before


# --- find: the protected files its actions reach -------------------------------------------------
@pytest.mark.parametrize("command", [
    "find . -name seal.json -delete", "find . -name seal.json -exec rm {} +",
    "find . -iname 'SETTINGS.JSON' -exec cp /tmp/x {} \\;",
    "find . -path ./.claude -prune -o -name '*.json' -delete",     # -delete turns -prune off
    "find .claude -type f -exec sed -i s/a/b/ {} +", "find . -name '*.json' -newer x -delete",
    "cd src && find .. -name 'settings*' -execdir rm {} \\;",
])
def test_find_actions_that_reach_a_protected_file_are_governance_admin(repo: Path,
                                                                       command: str) -> None:
    assert denied(repo, command), command


@pytest.mark.parametrize("command", [
    "find . -name '*.pyc' -delete", "find . -name '*.json' -exec cat {} +",
    "find src -name '*.json' -delete", "find . -path ./.claude -prune -o -name '*.json' -print",
    "find . -path ./.claude -prune -o -name '*.tmp' -exec rm {} +",
    "find . -name seal.json -print", "find . -maxdepth 1 -name '*.json' -delete",
])
def test_find_actions_that_reach_none_stay_quiet(repo: Path, command: str) -> None:
    answer = pre(repo, "Bash", {"command": command})
    assert "governance-admin" not in last_primitives(repo), command
    assert decision(answer) != "deny", command


def test_the_find_would_have_deleted_the_seal(repo: Path) -> None:
    seal = repo / ".claude" / "governance" / "seal.json"
    assert seal.exists() and denied(repo, "find . -name seal.json -delete")
    subprocess.run(["find", ".", "-name", "seal.json", "-delete"], cwd=repo, check=True)
    assert not seal.exists()                                 # what the attack does


def test_find_tests_are_read_on_the_files_themselves(repo: Path) -> None:
    """Times and sizes are the protected files' own: a fresh settings file is not older than a
    week; -ok asks on a terminal a tool call does not have, unless the command feeds it."""
    for command in ("find . -mtime +7 -name '*.json' -delete", "find . -size +10M -delete",
                    "find . -ok rm {} \\;", "find . -name '*.json' -mmin +600 -exec rm {} +"):
        pre(repo, "Bash", {"command": command})
        assert "governance-admin" not in last_primitives(repo), command
    for command in ("find . -mtime -7 -name '*.json' -delete", "yes | find . -ok rm {} \\;",
                    "find . -name '*.json' -mmin -600 -exec rm {} +"):
        assert denied(repo, command), command
