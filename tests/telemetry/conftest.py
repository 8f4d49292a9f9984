"""Fixtures for the OTLP export tests: an environment with only the variables a test sets, and a
real ledger, written with the project's own chain and rotated into sealed segments."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from governance.ledger import chain
from tests.ledger.records import pre_record

# Fake credentials of the shapes the ledger's redaction knows; none may reach the collector.
AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
GITHUB_TOKEN = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
SECRETS = (AWS_KEY, GITHUB_TOKEN, GITHUB_TOKEN[4:])
SEGMENT_BYTES = 6000   # a few records per sealed segment


@pytest.fixture(autouse=True)
def _otel_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No OTEL_* variable nor proxy of the machine's: each test sets what it means."""
    for name in list(os.environ):
        if name.startswith("OTEL_") or name.lower() in ("http_proxy", "https_proxy",
                                                        "all_proxy", "no_proxy"):
            monkeypatch.delenv(name, raising=False)


def gov_dir(project: Path) -> str:
    return str(project / ".claude" / "governance")


def record(i: int) -> dict[str, Any]:
    """Record ``i`` of a test ledger: every third by a subagent, every fifth decided by the
    organisation's layer and denied, every seventh holding a secret in its command."""
    extra: dict[str, Any] = {"acts": [{"primitive": "shell-execute", "segment": f"echo {i}",
                                       "reason": "", "action": "allow"},
                                      {"primitive": "shell-execute", "segment": "ls",
                                       "reason": "", "action": "allow"}]}
    if i % 3 == 0:
        extra.update(agent_id=f"agent-{i}", agent_type="general-purpose")
    if i % 5 == 0:
        extra.update(layer="org", action="block", reason=f"call {i}: the organisation forbids it")
    if i % 7 == 0:
        extra["acts"][0]["segment"] = f"aws s3 ls --key {AWS_KEY} && git push https://{GITHUB_TOKEN}@x"
        extra["reason"] = f"token {GITHUB_TOKEN} seen"
    return pre_record(i, **extra)


@pytest.fixture
def fill(project: Path) -> Callable[[int], list[dict[str, Any]]]:
    """Append ``n`` more records to the project's ledger (rotating segments); returns them as
    stored."""
    written: list[int] = [0]

    def _fill(n: int) -> list[dict[str, Any]]:
        start = written[0]
        written[0] += n
        return [chain.append(gov_dir(project), record(i), max_bytes=SEGMENT_BYTES)
                for i in range(start, start + n)]

    return _fill
