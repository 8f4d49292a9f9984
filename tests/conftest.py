"""Shared fixtures: every test works in a temporary project with a temporary HOME."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

# Outside any test's own HOME (a module-scoped fixture, or a test whose monkeypatch.undo() also
# undid the HOME below), the ledger's anchors still never reach the real home, and the protection
# level never depends on this machine's managed settings.
_OUTSIDE = tempfile.mkdtemp(prefix="governance-tests-")
atexit.register(shutil.rmtree, _OUTSIDE, True)
os.environ["GOVERNANCE_ANCHOR_DIR"] = os.path.join(_OUTSIDE, "anchors")
os.environ["GOVERNANCE_MANAGED_SETTINGS"] = os.path.join(_OUTSIDE, "managed-settings.json")
# A sandbox proxy a test starts (`governance sandbox on`) stops by itself once idle.
os.environ["GOVERNANCE_SANDBOX_PROXY_IDLE"] = "20"


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path_factory: pytest.TempPathFactory,
                  monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GOVERNANCE_ANCHOR_DIR", str(home / ".claude" / "governance" / "anchors"))
    monkeypatch.setenv("GOVERNANCE_MANAGED_SETTINGS", str(home / "managed-settings.json"))
    # The OTLP endpoints: a server a test starts never exports to this machine's collector.
    # A team database in this shell's environment never takes the place of a test's SQLite file.
    for name in ("CLAUDE_PROJECT_DIR", "GOVERNANCE_ON_ERROR", "GOVERNANCE_DEFAULT_MATRIX",
                 "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
                 "GOVERNANCE_DATABASE_URL", "GOVERNANCE_PROJECT_ID"):
        monkeypatch.delenv(name, raising=False)
    yield


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "shop-api"
    (root / ".claude").mkdir(parents=True)
    return root.resolve()
