"""The hook entry scripts' shared bootstrap: a broken installation is said, and denies when closed.

Each test copies the real ``hooks/`` beside a ``governance`` package that cannot be imported (as
after a half-finished upgrade) and runs the scripts the way Claude Code does.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO

PAYLOAD = {"hook_event_name": "PreToolUse", "session_id": "s", "cwd": "/", "tool_name": "Read",
           "tool_input": {"file_path": "/etc/hostname"}}


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    """A checkout whose package lacks its parts: every entry fails to import."""
    shutil.copytree(REPO / "hooks", tmp_path / "hooks", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "governance").mkdir()
    (tmp_path / "governance" / "__init__.py").write_text("")
    return tmp_path


def _run(root: Path, script: str, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run([sys.executable, "-I", "-S", str(root / "hooks" / script), *args],
                          input=json.dumps(PAYLOAD), capture_output=True, text=True, timeout=30,
                          env=env or {})
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    return done.stdout


@pytest.mark.parametrize("args", [(), ("--on-error", "allow")])
def test_fail_open_pre_tool_use_says_so_and_grants_nothing(broken: Path, args: tuple[str, ...]) -> None:
    answer = json.loads(_run(broken, "pre_tool_use.py", *args))
    assert set(answer) == {"systemMessage"}
    assert "governance hook could not start (ModuleNotFoundError" in answer["systemMessage"]
    assert "reinstall it" in answer["systemMessage"]


@pytest.mark.parametrize(("args", "env"), [(("--on-error", "block"), None),
                                           (("--on-error=block",), None),
                                           ((), {"GOVERNANCE_ON_ERROR": "block"})])
def test_fail_closed_pre_tool_use_denies_with_the_reason(
    broken: Path, args: tuple[str, ...], env: dict[str, str] | None
) -> None:
    answer = json.loads(_run(broken, "pre_tool_use.py", *args, env=env))
    specific = answer["hookSpecificOutput"]
    assert specific["hookEventName"] == "PreToolUse"
    assert specific["permissionDecision"] == "deny"
    assert specific["permissionDecisionReason"] == answer["systemMessage"]


@pytest.mark.parametrize("script", ["post_tool_use.py", "session_start.py", "user_prompt_submit.py"])
def test_other_events_never_deny(broken: Path, script: str) -> None:
    answer = json.loads(_run(broken, script, "--on-error", "block"))
    assert set(answer) == {"systemMessage"}
    assert "could not start" in answer["systemMessage"]


def test_status_line_prints_one_short_line(broken: Path) -> None:
    assert _run(broken, "statusline.py") == "◆ governance unavailable (ModuleNotFoundError): reinstall it\n"


def test_an_error_escaping_the_entry_is_answered_too(broken: Path) -> None:
    package = broken / "governance" / "hook"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "run.py").write_text("def pre_tool_use(argv):\n    raise RuntimeError('late import failed')\n")
    answer = json.loads(_run(broken, "pre_tool_use.py", "--on-error", "block"))
    assert "RuntimeError: late import failed" in answer["hookSpecificOutput"]["permissionDecisionReason"]


def test_the_bootstrap_imports_only_builtin_modules(tmp_path: Path) -> None:
    code = ("import os, sys; before = set(sys.modules); sys.path.insert(0, sys.argv[1]); "
            "import bootstrap; print(sorted(set(sys.modules) - before - {'bootstrap'}))")
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code, str(REPO / "hooks")],
                          capture_output=True, text=True, check=True)
    assert done.stdout.strip() in ("[]", "['gc']")   # gc: builtin, no file is read
