"""git on this machine: a checkout or restore of paths writes only the files git says differ
(``git restore .`` with governance untracked or unchanged is the destructive act it is, not a
change of governance; with governance's settings changed, or from a branch where they differ, it
is), and a repository cloned or archived from a path, not a remote, is not a web fetch."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from governance.policy.layer import GovernanceLayer
from tests.helpers import layer_in_do


def git(folder: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=a@b", "-c", "user.name=a", *args], cwd=folder,
                   check=True, capture_output=True)


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GovernanceLayer, Path]]:
    """Two projects: ``untracked`` commits src/ only; ``tracked`` commits .claude/settings.json,
    and has a branch ``evil`` whose settings are empty."""
    root = tmp_path_factory.mktemp("gitpaths")
    for name in ("untracked", "tracked"):
        project = root / name
        (project / "src").mkdir(parents=True)
        (project / "src" / "app.py").write_text("x = 1\n")
        (project / ".claude").mkdir()
        (project / ".claude" / "settings.json").write_text('{"hooks": {}}\n')
        git(project, "init", "-q", "-b", "main")
        git(project, "add", "src", *([".claude/settings.json"] if name == "tracked" else []))
        git(project, "commit", "-qm", "start")
        (project / "src" / "app.py").write_text("x = 2\n")       # work to discard
    tracked = root / "tracked"
    git(tracked, "checkout", "-q", "-b", "evil")
    (tracked / ".claude" / "settings.json").write_text("{}\n")
    (tracked / "src" / "app.py").write_text("x = 1\n")
    git(tracked, "commit", "-qam", "empty settings")
    git(tracked, "checkout", "-q", "main")
    (tracked / "src" / "app.py").write_text("x = 2\n")
    with layer_in_do(root / "untracked", root / "home") as layer:
        yield layer, root


def primitives(root: Path, name: str, command: str) -> set[str]:
    layer = GovernanceLayer(str(root / name))
    acts, _ = layer.acts_for("Bash", {"command": command}, str(root / name))
    return {a.primitive for a in acts}


@pytest.mark.parametrize("command", ["git restore .", "git checkout .", "git checkout -- .",
                                     "git checkout main -- .", "git restore --source=HEAD .",
                                     "git restore .claude", "git checkout -- src"])
def test_discarding_work_where_governance_is_not_tracked_is_only_destructive(
        repos: tuple[GovernanceLayer, Path], command: str) -> None:
    found = primitives(repos[1], "untracked", command)
    assert "destructive" in found and "governance-admin" not in found, (command, found)


@pytest.mark.parametrize("command", ["git checkout evil -- .", "git checkout evil .",
                                     "git restore --source=evil .",
                                     "git checkout evil -- .claude", 'git checkout evil -- "$P"'])
def test_a_checkout_that_brings_other_settings_is_governance_admin(
        repos: tuple[GovernanceLayer, Path], command: str) -> None:
    assert "governance-admin" in primitives(repos[1], "tracked", command), command


def test_restoring_changed_settings_is_governance_admin(
        repos: tuple[GovernanceLayer, Path]) -> None:
    root = repos[1]
    settings = root / "tracked" / ".claude" / "settings.json"
    before = settings.read_text()
    assert "governance-admin" not in primitives(root, "tracked", "git restore .")
    settings.write_text('{"hooks": {"PreToolUse": []}}\n')
    try:
        for command in ("git restore .", "git checkout .", "git checkout -- .claude"):
            assert "governance-admin" in primitives(root, "tracked", command), command
    finally:
        settings.write_text(before)


@pytest.mark.parametrize("command", [
    "git clone {root}/tracked /tmp/copy-of-tracked", "git clone ../tracked copy",
    "git clone file://{root}/tracked copy", "git fetch ../tracked main",
    "git archive --format=tar.gz -o release.tgz HEAD", "git archive HEAD | gzip > release.tgz",
])
def test_a_repository_on_this_machine_is_not_a_web_fetch(repos: tuple[GovernanceLayer, Path],
                                                          command: str) -> None:
    found = primitives(repos[1], "untracked", command.format(root=repos[1]))
    assert "web-fetch" not in found, (command, found)


@pytest.mark.parametrize("command", [
    "git clone https://github.com/acme/app", "git clone git@github.com:acme/app.git",
    "git fetch origin", "git clone --recurse-submodules ../tracked copy",
    "git archive --remote=git@github.com:acme/app.git HEAD",
])
def test_a_remote_is_still_a_web_fetch(repos: tuple[GovernanceLayer, Path], command: str) -> None:
    assert "web-fetch" in primitives(repos[1], "untracked", command), command


@pytest.mark.parametrize("command", ["git clone ../tracked .claude",
                                     "git clone ../tracked .claude/hooks"])
def test_a_clone_into_governance_is_governance_admin(repos: tuple[GovernanceLayer, Path],
                                                     command: str) -> None:
    assert "governance-admin" in primitives(repos[1], "untracked", command), command


@pytest.mark.parametrize("command", ["unzip -l dist/app.whl", "unzip -p dist/app.whl app.py",
                                     "unzip -lv dist/app.zip", "unzip -t dist/app.zip"])
def test_unzip_that_lists_prints_or_tests_writes_nothing(repos: tuple[GovernanceLayer, Path],
                                                         command: str) -> None:
    found = primitives(repos[1], "untracked", command)
    assert not found & {"file-write", "governance-admin"}, (command, found)


@pytest.mark.parametrize("command, quiet", [
    ('cd "$(git rev-parse --show-toplevel)" && git status', True),
    ('cd src && cd "$(git rev-parse --show-toplevel)" && ls', True),
    ('make -C "$(git rev-parse --show-toplevel)" test', True),
    ('rm -f "$(git rev-parse --show-toplevel)/.claude/settings.json"', False),
    ('cd src && rm -rf "$(git rev-parse --show-toplevel)"/.claude', False),
])
def test_the_work_tree_top_is_known(repos: tuple[GovernanceLayer, Path], command: str,
                                    quiet: bool) -> None:
    found = primitives(repos[1], "untracked", command)
    assert "shell-unknown" not in found, (command, found)
    assert ("governance-admin" not in found) == quiet, (command, found)
