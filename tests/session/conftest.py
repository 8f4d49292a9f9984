"""A small matrix and a project for the session-integration tests (independent of the default)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

MATRIX = """\
version: "1.0"
default_action: allow
states: [EXPLORE, DO]
settings: {fallback_state: EXPLORE}
rules:
  web-fetch:
    _all_states: {action: allow}
    DO: {action: block, message: "no web research in DO"}
  user-query:
    _all_states: {action: allow}
    DO: {action: block, message: "no questions in DO"}
  file-write:
    _all_states: {action: allow}
    EXPLORE: {action: warn, message: "notes only"}
  destructive:
    _all_states: {action: ask, message: "confirm"}
tools: {WebFetch: web-fetch, AskUserQuestion: user-query, Write: file-write}
phase_to_state: {implementation-cycle/DO: DO, investigation-cycle/EXPLORE: EXPLORE}
cycles: {implementation-cycle: [DO], investigation-cycle: [EXPLORE]}
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(MATRIX)
    monkeypatch.setenv("GOVERNANCE_DEFAULT_MATRIX", str(matrix))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    root = tmp_path / "project"
    (root / ".claude").mkdir(parents=True)
    return root


@pytest.fixture
def set_state(project: Path) -> Callable[[str, str, str], None]:
    from governance.policy import matrix, state

    def setter(cycle: str, phase: str, work: str = "") -> None:
        state.set_state(str(project), matrix.load(str(project)), cycle, phase, work)

    return setter
