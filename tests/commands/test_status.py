"""`governance status`: the first command a user runs, in a few lines, whatever is missing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from governance.project import installed_version
from tests.helpers import REPO, install


def gov(*args: str, cwd: str = "/") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "governance.commands.cli", *args],
                          capture_output=True, text=True, cwd=cwd, timeout=60, check=False,
                          env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent",
                               "PYTHONPATH": str(REPO)})


def test_not_installed_is_one_sentence_with_the_fix(tmp_path: Path) -> None:
    done = gov("status", cwd=str(tmp_path))
    assert done.returncode == 1
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1 and done.stderr == ""
    assert f"governance is not installed in {tmp_path}" in lines[0]
    assert f"`governance install --project {tmp_path}`" in lines[0]
    data = json.loads(gov("status", "--json", "--project", str(tmp_path)).stdout)
    assert data == {"version": installed_version(), "project": str(tmp_path), "installed": False,
                    "fix": f"governance install --project {tmp_path}"}
    assert list(tmp_path.iterdir()) == []


def test_a_fresh_install(project: Path) -> None:
    install(project)
    done = gov("status", "--project", str(project))
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith(f"governance {installed_version()} in {project}\n")
    for part in ("hooks:", "matrix:", "state:", "sandbox:", "server:", "ledger:", "intents:"):
        assert f"  {part}" in out, part
    assert "registered for PostToolUse, PostToolUseFailure, PreToolUse" in out
    assert "packaged default (no project override)" in out
    assert "EXPLORE" in out and "No cycle state is set" in out
    assert "sandbox:  off" in out and "server:   not running" in out
    assert "ledger:   no records yet" in out and "intents:  none declared" in out
    assert len(out.splitlines()) <= 10


def test_everything_set(project: Path) -> None:
    install(project)
    p = str(project)
    assert gov("state", "set", "implementation-cycle/DO/WORK-064", "--project", p).returncode == 0
    override = project / ".claude" / "governance" / "activity_matrix.yaml"
    override.write_text("extends: default\nsettings:\n  require_intent: true\n")
    assert gov("validate", "--project", p).returncode == 0
    assert gov("intent", "new", "WORK-064", "--title", "JWT", "--scope", "src/",
               "--project", p).returncode == 0
    data = json.loads(gov("status", "--json", "--project", p).stdout)
    assert data["state"]["label"] == "implementation-cycle/DO/WORK-064"
    assert [layer["layer"] for layer in data["matrix"]["layers"]] == ["default", "override"]
    assert data["matrix"]["override_accepted"] is True
    assert data["intents"] == {"declared": 1, "active": "WORK-064", "required": True}
    assert data["ledger"]["records"] == 1 and data["ledger"]["tail_matches_head"] is True
    assert data["sandbox"] == {"on": False}
    text = gov("status", "--project", p).stdout
    assert "state:    DO (implementation-cycle/DO/WORK-064)" in text
    assert ".claude/governance/activity_matrix.yaml (accepted)" in text
    assert "1 declared, WORK-064 active (by work item); required for changes" in text
    assert "1 records" in text and "matches the chain's head" in text

    # a change behind governance's back: the accepted version stays in force, and status says so
    override.write_text("extends: default\nrules:\n  web-fetch:\n    DO: {action: blok}\n")
    data = json.loads(gov("status", "--json", "--project", p).stdout)
    assert data["matrix"]["override_accepted"] is False
    assert "without `governance validate`" in data["matrix"]["unaccepted"]
    assert "changed without being accepted" in gov("status", "--project", p).stdout


def test_a_broken_part_is_named_and_the_others_still_shown(project: Path) -> None:
    install(project)
    (project / ".claude" / "settings.json").write_text("{not json")
    ledger = project / ".claude" / "governance" / "ledger.jsonl"
    ledger.write_text('{"seq": 1, "hash": "x", "prev": "0"}\n')
    done = gov("status", "--project", str(project))
    assert done.returncode == 0 and "Traceback" not in done.stderr
    assert "hooks:    cannot be read:" in done.stdout and "settings are not valid JSON" in done.stdout
    assert "state:    EXPLORE" in done.stdout
    assert "does not match the chain's head" in done.stdout
