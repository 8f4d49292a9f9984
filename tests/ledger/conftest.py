"""Fixtures for the ledger tests: a governance folder inside a temporary project."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from governance.ledger import chain as ledger
from tests.ledger.records import pre_record


@pytest.fixture
def gov(tmp_path: Path) -> Path:
    return tmp_path / "project" / ".claude" / "governance"


@pytest.fixture
def fill(gov: Path) -> Callable[..., list[dict[str, Any]]]:
    def _fill(n: int, max_bytes: int | None = None) -> list[dict[str, Any]]:
        return [ledger.append(str(gov), pre_record(i), max_bytes=max_bytes) for i in range(n)]

    return _fill
