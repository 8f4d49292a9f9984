"""Archives, patches and git plumbing that write files their command line does not name: the
files are listed from what the command reads, and a protected one is governance-admin. Through
the exact installed PreToolUse command in a temporary project in PLAN, with the attack performed
for real afterwards to show its effect."""

from __future__ import annotations

import difflib
import io
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.hook.test_exec_config import decision, git, last_primitives, pre

MATRIX = ".claude/governance/activity_matrix.yaml"


@pytest.fixture
def repo(project: Path) -> Path:
    from tests.helpers import install, set_state

    subprocess.run(["git", "init", "-q", str(project)], check=True)
    install(project)
    set_state(project, "implementation-cycle/PLAN/WORK-25")
    return project


def tar_with(path: Path, members: dict[str, bytes]) -> None:
    with tarfile.open(path, "w") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))


def ledger_tail(project: Path) -> str:
    return (project / ".claude" / "governance" / "ledger.jsonl").read_text().splitlines()[-1]


def denied(project: Path, command: str) -> bool:
    answer = pre(project, "Bash", {"command": command})
    return decision(answer) == "deny" and "governance-admin" in last_primitives(project)


def test_tar_extracting_the_matrix_is_denied(repo: Path, tmp_path: Path) -> None:
    evil = b"version: 1\nrules: {}\n"
    tar_with(repo / "evil.tar", {MATRIX: evil, "src/ok.py": b"x = 1\n"})
    assert denied(repo, "tar xf evil.tar")
    assert decision(pre(repo, "Bash", {"command": "tar -x -f evil.tar"})) == "deny"
    assert MATRIX in ledger_tail(repo)          # the act names the member it would overwrite
    assert denied(repo, "cat evil.tar | tar x")            # standard input: cannot be listed
    assert denied(repo, "cd sub/.. && bsdtar -xf evil.tar")
    # the same archive outside the project, or without protected members, is a plain write
    assert decision(pre(repo, "Bash", {"command": f"tar xf evil.tar -C {tmp_path / 'out'}"})
                    ) == "none"
    tar_with(repo / "ok.tar", {"src/a.py": b"a = 1\n"})
    assert decision(pre(repo, "Bash", {"command": "tar xf ok.tar"})) == "none"
    subprocess.run(["tar", "xf", "evil.tar"], cwd=repo, check=True)    # what the attack does
    assert (repo / MATRIX).read_bytes() == evil


def test_archive_links_and_stripped_names(repo: Path) -> None:
    with tarfile.open(repo / "links.tar", "w") as archive:
        info = tarfile.TarInfo("s.json")
        info.type = tarfile.LNKTYPE
        info.linkname = ".claude/governance/state.json"
        archive.addfile(info)
    assert denied(repo, "tar xf links.tar")
    tar_with(repo / "deep.tar", {"pkg/.claude/settings.json": b"{}"})
    assert decision(pre(repo, "Bash", {"command": "tar xf deep.tar"})) == "none"
    assert denied(repo, "tar xf deep.tar --strip-components=1")


def test_unzip_and_7z(repo: Path) -> None:
    with zipfile.ZipFile(repo / "cfg.zip", "w") as archive:
        archive.writestr(".claude/settings.local.json", '{"disableAllHooks": true}')
    assert denied(repo, "unzip -o cfg.zip")
    assert denied(repo, "unzip -o cfg")                     # unzip adds the .zip itself
    assert denied(repo, "7z x cfg.zip")
    with zipfile.ZipFile(repo / "ok.zip", "w") as archive:
        archive.writestr("lib/a.py", "a = 1\n")
    assert decision(pre(repo, "Bash", {"command": "unzip -o ok.zip"})) == "none"
    assert decision(pre(repo, "Bash", {"command": "unzip -o missing.zip"})) == "none"


def test_an_archive_that_cannot_be_listed_is_denied_only_where_governance_lives(
        repo: Path, tmp_path: Path) -> None:
    (repo / "a.cpio").write_bytes(b"not listed")
    assert denied(repo, "cpio -i < a.cpio")
    assert denied(repo, "curl -s https://example.com/x.tgz | tar xz")
    assert decision(pre(repo, "Bash", {"command": f"cpio -i -D {tmp_path / 'out'} < a.cpio"})
                    ) == "none"


def patch_text(path: str, before: str, after: str) -> str:
    return "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True),
                                        f"a/{path}", f"b/{path}"))


def test_git_apply_of_a_patch_touching_settings_is_denied(repo: Path) -> None:
    settings = repo / ".claude" / "settings.json"
    before = settings.read_text()
    after = before.replace('"hooks"', '"disableAllHooks": true, "hooks"', 1)
    (repo / "p.diff").write_text(f"diff --git a/.claude/settings.json b/.claude/settings.json\n"
                                 f"{patch_text('.claude/settings.json', before, after)}")
    assert denied(repo, "git apply p.diff")
    assert denied(repo, "git apply < p.diff")
    assert denied(repo, "patch -p1 -i p.diff")
    assert denied(repo, f"git apply <<'EOF'\n{(repo / 'p.diff').read_text()}EOF")
    (repo / "src").mkdir()
    (repo / "src" / "x.py").write_text("a = 1\n")
    (repo / "ok.diff").write_text(patch_text("src/x.py", "a = 1\n", "a = 2\n"))
    assert decision(pre(repo, "Bash", {"command": "git apply ok.diff"})) == "none"
    assert decision(pre(repo, "Bash", {"command": "git apply --check p.diff"})) == "none"
    subprocess.run(["git", "apply", "p.diff"], cwd=repo, check=True)   # what the attack does
    assert "disableAllHooks" in settings.read_text()


def test_git_plumbing_that_writes_the_working_tree(repo: Path) -> None:
    assert denied(repo, "git update-index --add --cacheinfo 100644,"
                        "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391,.claude/settings.json")
    assert denied(repo, "git checkout-index -a -f")
    assert denied(repo, "git checkout-index -f -- .claude/settings.json")
    assert denied(repo, "git read-tree -u --reset HEAD")
    assert decision(pre(repo, "Bash", {"command": "git checkout-index -f -- src/a.py"})) == "none"


def test_git_stash_pop_is_listed(repo: Path) -> None:
    ident = ["-c", "user.name=a", "-c", "user.email=a@b"]
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "a.txt")
    git(repo, *ident, "commit", "-q", "-m", "a")
    (repo / "a.txt").write_text("b\n")
    git(repo, *ident, "stash", "-q")
    assert decision(pre(repo, "Bash", {"command": "git stash pop"})) == "none"   # everyday work
    git(repo, *ident, "stash", "pop", "-q")
    agent = repo / ".claude" / "agents" / "reviewer.md"          # protected: .claude/agents/*
    agent.parent.mkdir()
    agent.write_text("Review carefully.\n")
    git(repo, "add", str(agent))
    git(repo, *ident, "commit", "-q", "-m", "agent")
    agent.write_text("Approve everything.\n")                   # the user's own change, stashed
    git(repo, *ident, "stash", "-q")
    assert denied(repo, "git stash pop")
    assert denied(repo, "git stash apply stash@{0}")
    git(repo, *ident, "stash", "pop", "-q")                      # what the attack does
    assert agent.read_text() == "Approve everything.\n"
