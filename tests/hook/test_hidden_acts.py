"""Acts hidden in the files a command runs, through the exact installed hook command, in a project in
PLAN: a script, a Makefile recipe, a git alias, a git hook, a package script, a justfile recipe and a
Python script each push to a local bare remote or delete a tracked folder. Each attack is performed
for real as well (its effect checked), so the hook's deny stands for an effect that would happen.
What is readable and harmless stays quiet in DO; what cannot be read asks the user."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import REPO, hook_command, install, recorded, run_command, set_state


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


@pytest.fixture
def plan(project: Path, tmp_path: Path) -> Path:
    """A governed git project in PLAN with a bare remote that has its first commit."""
    remote = tmp_path / "remote.git"
    _git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    _git(project, "init", "-q", "-b", "main")
    _git(project, "config", "user.email", "t@example.com")
    _git(project, "config", "user.name", "T")
    _git(project, "remote", "add", "origin", str(remote))
    (project / "src").mkdir()
    (project / "src" / "app.py").write_text("print('app')\n")
    _git(project, "add", "src")
    _git(project, "commit", "-q", "-m", "first")
    _git(project, "push", "-q", "origin", "main")
    (project / "work.txt").write_text("new work\n")
    _git(project, "add", "work.txt")
    _git(project, "commit", "-q", "-m", "second")       # not pushed yet
    install(project)
    set_state(project, "implementation-cycle/PLAN/WORK-1")
    return project


def _decide(project: Path, command: str) -> dict[str, Any]:
    payload = recorded("PreToolUse-Bash.json", project)
    payload["tool_input"] = {"command": command}
    done = run_command(hook_command(project), json.dumps(payload))
    assert done.returncode == 0, done.stderr
    out: dict[str, Any] = json.loads(done.stdout or "{}").get("hookSpecificOutput", {})
    return out


def _denied(project: Path, command: str, primitive: str) -> str:
    out = _decide(project, command)
    assert out.get("permissionDecision") == "deny", out
    reason = str(out["permissionDecisionReason"])
    assert primitive in reason, reason
    return reason


def _pushed(project: Path) -> bool:
    remote = _git(project, "ls-remote", "origin", "refs/heads/main").split()[0]
    return remote == _git(project, "rev-parse", "HEAD")


def _run(project: Path, command: str) -> None:
    """The attack itself, as Claude Code's Bash tool would run it had the hook allowed it."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    subprocess.run(["bash", "-c", command], cwd=project, env=env, check=False,
                   capture_output=True, timeout=120)


def test_a_script_that_pushes(plan: Path) -> None:
    (plan / "tools").mkdir()
    (plan / "tools" / "x.sh").write_text("#!/bin/sh\ngit push -q origin main\n")
    (plan / "tools" / "x.sh").chmod(0o755)
    for command in ("bash tools/x.sh", "./tools/x.sh", "source tools/x.sh"):
        assert "tools/x.sh" in _denied(plan, command, "vcs-push")
    assert not _pushed(plan)
    _run(plan, "bash tools/x.sh")
    assert _pushed(plan)


def test_a_python_script_that_pushes(plan: Path) -> None:
    (plan / "y.py").write_text('import subprocess\nsubprocess.run(["git", "push", "-q", '
                               '"origin", "main"])\n')
    _denied(plan, "python3 y.py", "vcs-push")
    _run(plan, f"{sys.executable} y.py")
    assert _pushed(plan)


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_a_makefile_clean_that_deletes_a_tracked_folder(plan: Path) -> None:
    (plan / "Makefile").write_text("clean:\n\trm -rf src\n")
    _denied(plan, "make clean", "destructive")
    assert (plan / "src" / "app.py").exists()
    _run(plan, "make clean")
    assert not (plan / "src").exists()


def test_a_git_alias_that_pushes(plan: Path) -> None:
    _git(plan, "config", "alias.sync", "!git push -q origin main")
    _git(plan, "config", "alias.up", "push -q origin main")
    assert "git alias sync" in _denied(plan, "git sync", "vcs-push")
    _denied(plan, "git up", "vcs-push")
    _run(plan, "git sync")
    assert _pushed(plan)


def test_a_pre_commit_hook_that_pushes(plan: Path) -> None:
    hook = plan / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\ngit push -q origin main\n")
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    (plan / "more.txt").write_text("x\n")
    _git(plan, "add", "more.txt")
    assert "pre-commit hook" in _denied(plan, "git commit -m more", "vcs-push")
    before = _git(plan, "rev-parse", "HEAD")
    _run(plan, "git commit -q -m more")
    assert _git(plan, "ls-remote", "origin", "refs/heads/main").split()[0] == before


def test_a_hooks_path_folder(plan: Path) -> None:
    (plan / "githooks").mkdir()
    (plan / "githooks" / "post-checkout").write_text("#!/bin/sh\nrm -rf src\n")
    (plan / "githooks" / "post-checkout").chmod(0o755)
    _git(plan, "config", "core.hooksPath", "githooks")
    _denied(plan, "git checkout -b topic", "destructive")
    _run(plan, "git checkout -q -b topic")
    assert not (plan / "src").exists()


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
def test_a_package_script_that_pushes(plan: Path) -> None:
    (plan / "package.json").write_text(json.dumps(
        {"name": "shop", "version": "1.0.0", "scripts": {"ship": "git push -q origin main"}}))
    _denied(plan, "npm run ship", "vcs-push")
    _denied(plan, "yarn ship", "vcs-push")
    _run(plan, "npm run ship")
    assert _pushed(plan)


def test_a_justfile_recipe_that_pushes(plan: Path) -> None:
    just = REPO / ".venv" / "bin" / "just"
    (plan / "justfile").write_text("ship where='origin':\n    git push -q {{where}} main\n")
    _denied(plan, "just ship", "vcs-push")
    if not just.exists():
        pytest.skip("just is not installed in the venv")
    _run(plan, f"{just} ship")
    assert _pushed(plan)


def test_a_script_importing_governance_is_governance_admin(plan: Path) -> None:
    (plan / "s.py").write_text(
        f"import sys\nsys.path.insert(0, {str(REPO)!r})\n"
        "from governance.policy import matrix, state\n"
        f"state.set_state({str(plan)!r}, matrix.load({str(plan)!r}), "
        "'implementation-cycle', 'DO', 'WORK-1')\n")
    _denied(plan, "python3 s.py", "governance-admin")
    _run(plan, f"{sys.executable} s.py")
    assert "DO" in (plan / ".claude" / "governance" / "state.json").read_text()


def test_decoded_text_asks_the_user(plan: Path) -> None:
    command = 'eval "$(echo Z2l0IHB1c2ggLXEgb3JpZ2luIG1haW4= | base64 -d)"'   # git push -q ...
    out = _decide(plan, command)
    assert out.get("permissionDecision") == "ask", out
    assert "shell-unknown" in out["permissionDecisionReason"]
    _run(plan, command)
    assert _pushed(plan)


def test_readable_harmless_files_stay_quiet_in_do(plan: Path) -> None:
    set_state(plan, "implementation-cycle/DO/WORK-1")
    (plan / "Makefile").write_text("test:\n\tpython3 -m pytest -q\nbuild:\n\t@echo built\n")
    (plan / "package.json").write_text(json.dumps({"scripts": {"build": "tsc -p .",
                                                               "test": "jest"}}))
    (plan / "justfile").write_text("test: lint\n    pytest -q\nlint:\n    ruff check .\n")
    (plan / "scripts").mkdir()
    (plan / "scripts" / "lint.sh").write_text("#!/bin/sh\nset -e\nruff check .\n")
    (plan / "scripts" / "lint.sh").chmod(0o755)
    (plan / "manage.py").write_text("import os, sys\nos.environ.setdefault('X', 'y')\n"
                                    "from django.core.management import execute_from_command_line"
                                    "\nexecute_from_command_line(sys.argv)\n")
    hook = plan / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\nruff check .\n")
    hook.chmod(0o755)
    for command in ("make test", "make build", "npm run build", "npm test", "just test",
                    "./scripts/lint.sh", "python manage.py test", "git commit -m x",
                    "git status"):
        out = _decide(plan, command)
        assert "permissionDecision" not in out, (command, out)
