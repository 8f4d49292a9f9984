"""Fixtures for the end-to-end tests: the pinned client, the network sandbox, a runner."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from claude_runner import (
    ClaudeRunner,
    ClaudeUnavailable,
    install_claude,
    network_isolation_available,
)

_ISOLATION: list[bool] = []


def _isolated() -> bool:
    if not _ISOLATION:
        _ISOLATION.append(network_isolation_available())
    return _ISOLATION[0]


def pytest_report_header(config: pytest.Config) -> str:
    if _isolated():
        return "e2e: the client runs inside `unshare -n` (loopback only)"
    return "e2e: `unshare -n` is not available here; the client runs on plain loopback"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).resolve().parent
    for item in items:
        if here in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def claude_binary() -> Path:
    """The pinned client, installed into the cache once (skip when it cannot be)."""
    cache = os.environ.get("GOVERNANCE_E2E_CACHE")
    try:
        return install_claude(Path(cache) if cache else None)
    except ClaudeUnavailable as exc:
        pytest.skip(f"e2e: Claude Code is not available: {exc}")


@pytest.fixture(scope="session")
def network_isolated() -> bool:
    """Whether runs happen inside a private network namespace."""
    return _isolated()


@pytest.fixture
def claude(
    claude_binary: Path, network_isolated: bool, tmp_path: Path
) -> Iterator[ClaudeRunner]:
    work = tmp_path / "runs"
    work.mkdir()
    yield ClaudeRunner(binary=claude_binary, isolate=network_isolated, workdir=work)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project directory with a .claude/ folder."""
    root = tmp_path / "project"
    (root / ".claude").mkdir(parents=True)
    return root
