"""Format versions: the matrix's ``version``, the state file's ``version`` and the ledger's ``v``.

A file without one is format 1 (existing projects keep working); a later format is refused with
a sentence naming the file and the fix, never read as if it were the current one. And who set a
state is recorded, also where ``$USER`` is unset.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from governance.errors import ConfigError
from governance.policy import matrix, seal, state
from governance.policy.compiler import compile_matrix
from governance.project import default_matrix_path
from tests.helpers import REPO

OVERRIDE = "/p/.claude/governance/activity_matrix.yaml"
PACKAGED = (default_matrix_path(), Path(default_matrix_path()).read_bytes())


def _problems(text: str) -> list[str]:
    compiled, problems = compile_matrix(PACKAGED, (OVERRIDE, text.encode()), "hash")
    errors = [p.render() for p in problems if p.level == "error"]
    assert (compiled is None) == bool(errors)
    return errors


@pytest.mark.parametrize("line", ["", "version: 1\n", "version: '1.0'\n", "version: 1.0\n",
                                  "version: '1'\n"])
def test_the_matrix_format_1_and_a_file_without_version_are_read(line: str) -> None:
    assert _problems(f"{line}extends: default\n") == []


def test_a_later_matrix_format_is_refused_with_the_fix() -> None:
    errors = _problems("version: 2\nextends: default\n")
    assert len(errors) == 1
    assert errors[0].startswith(f"error: {OVERRIDE}: at key version: the file is in matrix format 2")
    assert "upgrade claude-governance" in errors[0] and "version: 1" in errors[0]
    assert "at key version: expected a format version" in _problems("version: latest\n")[0]


def test_the_hook_reports_a_later_matrix_format(project: Path) -> None:
    """The hook's reader (the compiled cache) refuses it too, loudly, naming file and fix."""
    path = project / ".claude" / "governance" / "activity_matrix.yaml"
    path.parent.mkdir(parents=True)
    path.write_text("version: '2.0'\nextends: default\n")
    default, override, config_hash = matrix.read_sources(str(project))
    compiled, _ = compile_matrix(default, override, config_hash)
    assert compiled is None
    seal.accept_matrix(str(project), path.read_bytes())
    with pytest.raises(ConfigError) as info:
        matrix.load(str(project))
    assert "matrix format 2" in str(info.value) and info.value.file == str(path)


@pytest.fixture
def compiled(project: Path) -> dict:
    return matrix.load(str(project))


def _accepted_state_file(project: Path, content: dict) -> Path:
    path = Path(state.state_path(str(project)))
    path.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps(content).encode()
    path.write_bytes(data)
    seal.accept_state(str(project), data, content)
    return path


def test_a_state_file_without_version_is_format_1(project: Path, compiled: dict) -> None:
    _accepted_state_file(project, {"cycle": "implementation-cycle", "phase": "DO",
                                   "work_item": "W-1"})
    view = state.read_state(str(project), compiled)
    assert (view.state, view.source, view.label) == ("DO", "file", "implementation-cycle/DO/W-1")


def test_set_state_writes_the_format_version(project: Path, compiled: dict) -> None:
    state.set_state(str(project), compiled, "implementation-cycle", "PLAN", "W-2")
    written = json.loads(Path(state.state_path(str(project))).read_text())
    assert written["version"] == state.STATE_VERSION == 1
    assert state.read_state(str(project), compiled).state == "PLAN"


@pytest.mark.parametrize("version", [2, "1", None, True])
def test_a_state_file_in_another_format_is_not_guessed_at(project: Path, compiled: dict,
                                                          version: object) -> None:
    path = _accepted_state_file(project, {"version": version, "cycle": "implementation-cycle",
                                          "phase": "DO"})
    view = state.read_state(str(project), compiled)
    assert (view.state, view.source) == ("EXPLORE", "fallback")
    assert str(path) in view.note and f"format {version!r}" in view.note
    assert "Upgrade claude-governance, or set one from a terminal: `" in view.note


def gov(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "governance.commands.cli", *args],
                          capture_output=True, text=True, timeout=120, check=False,
                          env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent",
                               "PYTHONPATH": str(REPO), **env})


@pytest.mark.parametrize(("env", "how"), [({}, "cli"), ({"CLAUDECODE": "1"}, "claude-code"),
                                          ({"USER": "alice"}, "cli")])
def test_a_state_change_records_who_and_how(project: Path, env: dict[str, str],
                                            how: str) -> None:
    """``$USER`` is unset under cron, in containers and with ``env -i``: the account the process
    runs as is recorded instead, with how the change was made."""
    done = gov("state", "set", "implementation-cycle/DO/W-1", "--project", str(project), env=env)
    assert done.returncode == 0, done.stderr
    user = env.get("USER") or pwd.getpwuid(os.getuid()).pw_name
    expected = f"{user} ({how})"
    folder = project / ".claude" / "governance"
    record = json.loads((folder / "ledger.jsonl").read_text().splitlines()[-1])
    assert record["event"] == "StateChange" and record["actor"] == expected
    assert json.loads((folder / "state.json").read_text())["set_by"] == expected
    assert seal.read(str(project))["state"]["by"] == expected


JUST = shutil.which("just") or str(Path(sys.executable).parent / "just")


GOV = Path(sys.executable).parent / "governance"


@pytest.mark.skipif(not os.path.exists(JUST) or not GOV.exists(),
                    reason="needs just and the venv's governance command")
def test_a_state_change_through_the_repositorys_just_recipe_says_just(project: Path) -> None:
    """The recipe marks its command (``GOVERNANCE_VIA=just``); a process merely started under just
    (the test suite itself runs under ``just test``) stays ``cli``."""
    env = {"PATH": f"{GOV.parent}:/usr/bin:/bin", "HOME": "/nonexistent",
           "GOVERNANCE_PROJECT": str(project)}
    done = subprocess.run([JUST, "--justfile", str(REPO / "justfile"), "set-cycle",
                           "implementation-cycle", "DO", "W-1"], capture_output=True,
                          text=True, timeout=120, check=False, env=env)
    assert done.returncode == 0, done.stderr
    ledger = project / ".claude" / "governance" / "ledger.jsonl"
    assert json.loads(ledger.read_text().splitlines()[-1])["actor"].endswith(" (just)")
