"""Shared fixtures: every test works in a temporary project with a temporary HOME."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path_factory: pytest.TempPathFactory,
                  monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    for name in ("CLAUDE_PROJECT_DIR", "GOVERNANCE_ON_ERROR", "GOVERNANCE_DEFAULT_MATRIX"):
        monkeypatch.delenv(name, raising=False)
    yield


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "shop-api"
    (root / ".claude").mkdir(parents=True)
    return root.resolve()
