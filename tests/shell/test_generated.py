"""Deleting generated output: ``rm -r`` of what git ignores (or, without git, of a build or cache
folder) is ``file-delete``; tracked work, the repository and anything outside it stay
``destructive``, and the reason says which (``governance.shell.generated``)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from governance.commands.cli import main
from governance.shell.analysis import analyse_command
from governance.shell.generated import MEMO
from governance.shell.schema import load_default_shell
from tests.helpers import set_state

SHELL = load_default_shell()


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=root,
                   check=True, capture_output=True)


@pytest.fixture
def repo(project: Path) -> Path:
    """A governed project in a git repository: src/ tracked, dist/ and caches ignored, and
    vendor/ ignored but holding a file added with --force."""
    for folder in ("src", "dist", "htmlcov", ".pytest_cache", "vendor"):
        (project / folder).mkdir()
    (project / "src" / "app.py").write_text("x = 1\n")
    (project / "dist" / "app.js").write_text("built\n")
    (project / ".coverage").write_text("data")
    (project / "vendor" / "patched.c").write_text("int x;\n")
    (project / ".gitignore").write_text("dist/\nhtmlcov/\n.pytest_cache/\n.coverage\nvendor/\n")
    git(project, "init", "-q")
    git(project, "add", ".gitignore", "src")
    git(project, "add", "--force", "vendor/patched.c")
    git(project, "commit", "-qm", "start")
    return project


def acts(command: str, cwd: Path) -> dict[str, str]:
    found = analyse_command(command, SHELL, is_protected=lambda _p: False, cwd=str(cwd))
    return {a.primitive: a.reason for a in found}


def explain(capsys: pytest.CaptureFixture[str], project: Path, command: str) -> dict[str, object]:
    assert main(["explain-command", "--project", str(project), "--json", command]) == 0
    result: dict[str, object] = json.loads(capsys.readouterr().out)
    return result


def test_deleting_what_git_ignores_before_a_build_is_allowed_in_do(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    set_state(repo, "implementation-cycle/DO/w1")
    result = explain(capsys, repo, "rm -rf dist && pnpm build")
    assert result["decision"]["action"] == "allow"  # type: ignore[index]
    delete = next(a for a in result["acts"] if a["primitive"] == "file-delete")  # type: ignore[attr-defined]
    assert "dist is ignored by git" in delete["reason"]
    assert "destructive" not in {a["primitive"] for a in result["acts"]}  # type: ignore[attr-defined]


def test_clearing_test_caches_in_check_is_a_file_delete(repo: Path) -> None:
    found = acts("rm -rf .pytest_cache htmlcov .coverage", repo)
    assert set(found) == {"file-delete"}
    assert ".pytest_cache, htmlcov and .coverage are ignored by git" in found["file-delete"]


@pytest.mark.parametrize(("command", "why"), [
    ("rm -rf src", "src holds files git tracks"),
    ("rm -rf dist src", "src holds files git tracks"),
    ("rm -rf vendor", "vendor holds files git tracks"),           # ignored, but a parent of work
    ("rm -rf dist/../src", "holds files git tracks"),
    ("rm -rf .", "is the repository or outside it"),
    ("rm -rf .git", "the repository's own .git folder"),
    ("rm -rf ../elsewhere", "is the repository or outside it"),
    ("rm -rf notes", "notes is not ignored by git"),
    ("rm -rf \"$OUT\"", "known only at run time"),
])
def test_tracked_work_and_the_repository_stay_destructive(repo: Path, command: str,
                                                          why: str) -> None:
    (repo / "notes").mkdir()
    found = acts(command, repo)
    assert "destructive" in found, found
    assert why in found["destructive"]


def test_a_link_named_like_output_is_judged_by_what_it_points_at(repo: Path) -> None:
    (repo / "dist").rename(repo / "old-dist")
    (repo / "dist").symlink_to(repo / "src")
    assert "destructive" in acts("rm -rf dist/", repo)


def test_the_answer_is_remembered_until_the_ignore_rules_change(
        repo: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (repo / ".claude" / "governance").mkdir(parents=True, exist_ok=True)
    assert set(acts("rm -rf dist", repo)) == {"file-delete"}
    assert (repo / ".claude" / "governance" / ".cache" / MEMO).is_file()
    empty = tmp_path / "no-git"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))            # git cannot run: only the memo answers
    assert set(acts("rm -rf dist", repo)) == {"file-delete"}
    (repo / ".gitignore").write_text("htmlcov/\n")    # the rules changed: ask git again
    found = acts("rm -rf dist", repo)
    assert "git could not say" in found["destructive"]


def test_without_git_build_and_cache_folders_are_file_deletes(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    (root / "node_modules").mkdir(parents=True)
    (root / "lib").mkdir()
    assert not any((p / ".git").exists() for p in [root, *root.parents])
    assert set(acts("rm -rf node_modules build", root)) == {"file-delete"}
    assert "no git repository" in acts("rm -rf node_modules", root)["file-delete"]
    assert "lib is not a build or cache folder" in acts("rm -rf lib", root)["destructive"]
    assert "outside the folder" in acts(f"rm -rf {os.path.dirname(root)}/x/dist", root)[
        "destructive"]


# --- find -name PATTERN -delete -------------------------------------------------------------------
@pytest.fixture
def pyrepo(repo: Path) -> Path:
    """``repo`` with Python bytecode git ignores, and a tracked ``keep.log``."""
    (repo / ".gitignore").write_text((repo / ".gitignore").read_text() +
                                     "*.pyc\n__pycache__/\n*.tmp\n")
    (repo / "src" / "__pycache__").mkdir()
    (repo / "src" / "__pycache__" / "app.cpython-312.pyc").write_bytes(b"\0")
    (repo / "src" / "old.pyc").write_bytes(b"\0")
    (repo / "src" / "keep.log").write_text("kept\n")
    (repo / "src" / "new.txt").write_text("work not yet added\n")
    git(repo, "add", ".gitignore", "src/keep.log")
    git(repo, "commit", "-qm", "ignore bytecode")
    return repo


@pytest.mark.parametrize("command", [
    "find . -name '*.pyc' -delete", "find . -type f -name '*.pyc' -delete",
    "find src -name '*.pyc' -delete", "find . -name __pycache__ -type d -delete",
    "find . -iname '*.pyc' -delete", "find . -name '*.tmp' -delete", "find . -name '*.py[co]' -delete",
    "find . -name '*.pyc' -newer src/app.py -delete",
    "find . \\( -name '*.pyc' \\) -delete", "find . \\( -name '*.pyc' -o -name '*.tmp' \\) -delete",
    "find . -type f \\( -name '*.pyc' -or -name '*.tmp' \\) -print -delete",
])
def test_find_deleting_what_git_ignores_is_file_delete(pyrepo: Path, command: str) -> None:
    found = acts(command, pyrepo)
    assert "destructive" not in found and "file-delete" in found, found


@pytest.mark.parametrize("command, why", [
    ("find . -delete", "no name pattern"),
    ("find . -name '*' -delete", "match every file"),
    ("find . -name '*.py' -delete", "git does not ignore *.py"),      # tracked work
    ("find . -name '*.txt' -delete", "git does not ignore"),          # not added, not ignored
    ("find . -name '*.orig' -delete", "git does not ignore"),         # nothing matches now
    ("find vendor -name '*.c' -delete", "vendor/patched.c"),         # ignored, yet tracked
    ("find . -not -name '*.pyc' -delete", "plain list"),
    ("find . ! -name '*.pyc' -delete", "plain list"),
    ("find . -name '*.pyc' -o -name '*.py' -delete", "plain list"),
    ("find . \\( -name '*.pyc' -o -name '*.py' \\) -delete", "git does not ignore *.py"),
    ("find . \\( -name '*.pyc' -o -name '*' \\) -delete", "match every file"),
    ("find . -name '*.pyc' -o -type f -delete", "plain list"),
    ("find . \\( -name '*.pyc' -type f \\) -delete", "plain list"),
    ("find . ! \\( -name '*.pyc' -o -name '*.tmp' \\) -delete", "plain list"),
    ("find . \\( \\( -name '*.pyc' \\) \\) -delete", "plain list"),
    ("find . -path '*/src/*' -delete", "plain list"),
    ("find -L . -name '*.pyc' -delete", "plain list"),
    ("find / -name '*.pyc' -delete", "outside the repository"),
    ("find ~ -name '*.pyc' -delete", "outside the repository"),
    ("find .. -name '*.pyc' -delete", "outside the repository"),
    ("find .git -name '*.pyc' -delete", ".git"),
    ("find . -name HEAD -delete", ".git folder"),
    ("find . -name 'index' -delete", ".git folder"),
    ("find \"$D\" -name '*.pyc' -delete", "not a plain list"),
    ("find . -name \"$P\" -delete", "no name pattern"),
])
def test_find_deleting_anything_else_stays_destructive(pyrepo: Path, command: str,
                                                       why: str) -> None:
    found = acts(command, pyrepo)
    assert "destructive" in found and why in found["destructive"], found


def test_find_delete_without_git_keeps_to_build_output(tmp_path: Path) -> None:
    assert "destructive" not in acts("find . -name '*.pyc' -delete", tmp_path)
    assert "destructive" not in acts("find . -name __pycache__ -delete", tmp_path)
    assert "destructive" in acts("find . -name '*.py' -delete", tmp_path)
    assert "destructive" in acts("find / -name '*.pyc' -delete", tmp_path)
