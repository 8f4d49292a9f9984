"""The names a new user tries: --version, a misspelt command, `explain` given a command rather
than an id, and a state-changing command run where governance is not installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from governance.commands.cli import WRITES
from governance.project import installed_version
from tests.helpers import REPO, hook_command, install, run_command


def gov(*args: str, cwd: str = "/", home: str = "/nonexistent") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "governance.commands.cli", *args],
                          capture_output=True, text=True, cwd=cwd, timeout=60, check=False,
                          env={"PATH": "/usr/bin:/bin", "HOME": home, "PYTHONPATH": str(REPO)})


def test_version() -> None:
    done = gov("--version")
    assert (done.returncode, done.stdout.strip()) == (0, f"governance {installed_version()}")
    assert installed_version() != "unknown"


@pytest.mark.parametrize(("words", "suggested"), [
    (["stauts"], ["`governance status`", "`governance stats`"]),
    (["instal"], ["`governance install`"]),
    (["explian", "x"], ["`governance explain`"]),
    (["state", "sett", "DO"], ["`governance state set`"]),
    (["memory", "ad"], ["`governance memory add`"]),
])
def test_an_unknown_command_suggests_the_nearest(words: list[str], suggested: list[str]) -> None:
    done = gov(*words)
    assert done.returncode == 2
    unknown = words[1] if words[0] in ("state", "memory") else words[0]
    assert f"unknown {'action' if unknown != words[0] else 'command'} '{unknown}'" in done.stderr
    for name in suggested:
        assert name in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and "invalid choice" not in done.stderr


def test_an_unknown_command_with_nothing_near_says_where_the_list_is() -> None:
    done = gov("zzzzzz")
    assert done.returncode == 2
    assert "unknown command 'zzzzzz'" in done.stderr and "did you mean" not in done.stderr
    assert "`governance --help` lists them all" in done.stderr


def test_explain_takes_a_recorded_id(project: Path) -> None:
    install(project)
    run_command(hook_command(project), json.dumps({
        "session_id": "s1", "cwd": str(project), "hook_event_name": "PreToolUse",
        "tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "toolu_0042"}))
    done = gov("explain", "toolu_0042", "--project", str(project))
    assert done.returncode == 0, done.stderr
    assert "Bash" in done.stdout and "toolu_0042" in done.stdout
    as_json = json.loads(gov("explain", "toolu_0042", "--json", "--project", str(project)).stdout)
    assert as_json["decisions"][0]["tool_use_id"] == "toolu_0042"


def test_explain_given_a_command_explains_the_command(project: Path) -> None:
    install(project)
    done = gov("explain", "git push --force", "--state", "DO", "--project", str(project))
    assert done.returncode == 0, done.stderr
    assert "is not the id of a recorded tool call" in done.stderr
    assert "explain-command" in done.stderr
    assert "Decision:  block (vcs-push: git push --force)" in done.stdout
    # a one-word command too, and JSON for scripts
    as_json = json.loads(gov("explain", "ls", "--json", "--project", str(project)).stdout)
    assert as_json["command"] == "ls" and as_json["acts"][0]["primitive"] == "shell-read"


def test_explain_of_an_unknown_id_says_where_to_find_ids(project: Path) -> None:
    install(project)
    done = gov("explain", "toolu_nothere", "--project", str(project))
    assert done.returncode == 1
    assert "no ledger record has tool_use_id 'toolu_nothere'" in done.stderr
    assert "governance log" in done.stderr and done.stdout == ""


# One call of each command (and action) that writes governance files.
WRITING_CALLS = [
    ["state", "set", "implementation-cycle/DO/W-1"], ["state", "next"], ["state", "get"],
    ["accept"], ["validate"], ["bypass", "--minutes", "5", "--reason", "x"],
    ["intent", "select", "W-1"], ["intent", "clear"],
    ["intent", "new", "W-1", "--title", "t", "--scope", "src/"],
    ["memory", "add", "a note", "--category", "process"], ["memory", "rm", "mem-1"],
    ["decisions", "review", "dec-1", "--outcome", "success"],
    ["sandbox", "off"], ["knowledge", "reindex"], ["secrets", "clear"],
]


def test_every_writing_command_is_tried_here() -> None:
    assert {words[0] for words in WRITING_CALLS} | {"pre-action", "decisions"} >= set(WRITES)


@pytest.mark.parametrize("words", WRITING_CALLS, ids=lambda w: " ".join(w[:2]))
def test_a_writing_command_refuses_a_folder_without_governance(tmp_path: Path,
                                                                words: list[str]) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    done = gov(*words, cwd=str(folder))
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"governance is not installed in {folder}" in done.stderr
    assert f"governance install --project {folder}" in done.stderr
    assert "Traceback" not in done.stderr
    assert list(tmp_path.rglob("*")) == [folder], "the refusal created files"
    # the same with --project
    assert gov(*words, "--project", str(folder)).returncode == 1
    assert list(tmp_path.rglob("*")) == [folder]


def test_the_home_folder_is_not_a_project(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    done = gov("state", "set", "DO", cwd=str(home), home=str(home))
    assert done.returncode == 1 and "is not installed in" in done.stderr
    assert sorted(os.listdir(home / ".claude")) == []


def test_reading_commands_still_work_anywhere(tmp_path: Path) -> None:
    done = gov("explain-command", "ls -la", cwd=str(tmp_path))
    assert done.returncode == 0 and "shell-read" in done.stdout
    assert gov("memory", "list", cwd=str(tmp_path)).returncode == 0
    assert list(tmp_path.iterdir()) == []
