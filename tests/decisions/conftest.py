from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty project with a .claude folder; HOME points into tmp_path."""
    root = tmp_path / "project"
    (root / ".claude").mkdir(parents=True)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(root))
    monkeypatch.delenv("GOVERNANCE_DEFAULT_GUARDRAILS", raising=False)
    monkeypatch.delenv("GOVERNANCE_AGENT_ID", raising=False)
    return root


def _write_override(project: Path, text: str) -> Path:
    path = project / ".claude" / "governance" / "guardrails.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def write_override() -> Callable[[Path, str], Path]:
    """Write <project>/.claude/governance/guardrails.yaml and return its path."""
    return _write_override
