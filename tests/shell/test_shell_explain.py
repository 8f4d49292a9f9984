"""``governance explain-command``: acts, segments and the decision in the current state."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from governance.commands.cli import main
from tests.helpers import set_state


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def test_text_output_lists_acts_and_decision(project: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    set_state(project, "implementation-cycle/DO/w1")
    out = run(capsys, "explain-command", "--project", str(project),
              "git commit -m 'use curl later' && curl https://example.com")
    assert "Segments:\n  git commit -m 'use curl later'\n  curl https://example.com" in out
    assert "vcs-commit" in out and "web-fetch" in out
    assert "State:     DO" in out
    assert "Decision:  block (web-fetch: curl https://example.com)" in out


def test_json_output_in_a_given_state(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = run(capsys, "explain-command", "--project", str(project), "--state", "EXPLORE",
              "--json", "echo x > .claude/settings.json")
    result = json.loads(out)
    assert result["state"] == "EXPLORE"
    assert {a["primitive"] for a in result["acts"]} == {"file-write", "governance-admin"}
    assert result["decision"]["action"] == "block"
    assert result["decision"]["primitive"] == "governance-admin"


def test_unparseable_command_is_shown_as_unknown(project: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    out = run(capsys, "explain-command", "--project", str(project), "--json", "echo $(")
    result = json.loads(out)
    assert result["segments"][0].startswith("(not parsed:")
    assert [a["primitive"] for a in result["acts"]] == ["shell-unknown"]
