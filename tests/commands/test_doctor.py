"""``governance doctor`` says each problem once, on one line, with one concrete fix, and which
version of governance is installed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from governance.commands.cli import main
from governance.project import installed_version
from tests.helpers import install

GOV = Path(".claude") / "governance"
CONCRETE = re.compile(r"; fix: \S|`governance [a-z]")   # a fix, or a command the sentence names


def doctor(project: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    capsys.readouterr()
    code = main(["doctor", "--project", str(project)])
    return code, capsys.readouterr().out.splitlines()


def failures(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("  FAIL  ")]


def assert_one_line_each_with_a_fix(lines: list[str]) -> None:
    found = failures(lines)
    assert found, lines
    assert not [line for line in lines if line.strip().startswith("fix:")], lines
    assert len(set(found)) == len(found), found
    assert all(CONCRETE.search(line) for line in found), found
    assert not any("fix what it names" in line for line in lines)


def test_a_removed_override_is_one_finding_with_its_fix(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    install(project)
    override = project / GOV / "activity_matrix.yaml"
    override.write_text("extends: default\nrules:\n  web-fetch:\n    DO: {action: warn, "
                        "message: ok}\n")
    assert main(["validate", "--project", str(project)]) == 0
    override.unlink()   # the user's own rm, without `governance validate`
    code, lines = doctor(project, capsys)
    assert code == 1
    assert_one_line_each_with_a_fix(lines)
    said = "\n".join(lines)
    assert said.count("was removed without `governance validate`") == 1, said
    (finding,) = failures(lines)
    assert finding.endswith("check and accept it from a terminal: `governance validate`.")
    assert "live PreToolUse call answered" in said   # the hook answers, saying the same thing


def test_every_finding_is_one_line_with_one_fix(project: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    install(project)
    path = project / ".claude" / "settings.json"
    data = json.loads(path.read_text())
    del data["hooks"]["PostToolUse"]
    data["hooks"]["PreToolUse"].append(data["hooks"]["PreToolUse"][0])
    path.write_text(json.dumps(data))
    (project / GOV / "state.json").write_text("garbage{")   # behind governance's back
    (project / ".mcp.json").write_text("{ not json")
    code, lines = doctor(project, capsys)
    assert code == 1
    assert_one_line_each_with_a_fix(lines)
    said = "\n".join(failures(lines))
    for expected in ("PostToolUse hook not registered", "PreToolUse hook registered 2 times",
                     "state file", ".mcp.json"):
        assert expected in said, said


def test_settings_that_are_not_json_are_one_finding(project: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    install(project)
    (project / ".claude" / "settings.json").write_text("{ not json")
    code, lines = doctor(project, capsys)
    assert code == 1
    assert_one_line_each_with_a_fix(lines)
    assert sum("settings are not valid JSON" in line for line in lines) == 1


def test_doctor_names_the_installed_version(project: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    install(project)
    _, lines = doctor(project, capsys)
    assert lines[1].startswith(f"Governance: {installed_version()} (python ")
