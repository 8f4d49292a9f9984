"""Per-agent tokens: minted once, stored hashed, listed without secrets, revocable, expiring; roles
and project scopes enforced by the real server."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from governance.server.identity import FileTokens, digest, mint
from governance.storage.database import project_id
from tests.helpers import REPO, install, set_state
from tests.server.conftest import Served, start_server, stop_server

HOSTILE = "o'brien \"x\" '; DROP TABLE tokens; -- ünïcødé 🚀"


def governance(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("GOVERNANCE_DATABASE_URL", None)
    return subprocess.run([sys.executable, "-m", "governance.commands", "token", *args],
                          cwd=str(project), env=env, capture_output=True, text=True, timeout=60)


def record(index: int, **extra: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "cstp.recordDecision", "id": index,
            "params": {"decision": "Use blue-green deploys", "category": "architecture",
                       "stakes": "medium", "confidence": 0.8, **extra}}


@pytest.fixture
def server(project: Path) -> Iterator[Served]:
    install(project)
    set_state(project, "implementation-cycle/DO/WORK-064")
    served = start_server(project)
    try:
        yield served
    finally:
        stop_server(served)


def test_add_prints_the_token_once_as_its_last_line_and_stores_only_its_hash(
        project: Path) -> None:
    done = governance(project, "add", "--agent", HOSTILE, "--role", "agent",
                      "--project", str(project))
    assert done.returncode == 0, done.stderr
    token = done.stdout.strip().splitlines()[-1]
    assert len(token) >= 40 and done.stdout.count(token) == 1 and token not in done.stderr
    path = project / ".claude" / "governance" / "tokens.json"
    stored = path.read_text()
    assert token not in stored and digest(token) in stored
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    [row] = FileTokens(str(project)).all()
    assert row.agent == HOSTILE and row.project_id == project_id(str(project))
    assert row.expires_at is not None and 89 * 86400 < row.expires_at - row.created_at <= 90 * 86400
    listed = governance(project, "list", "--json")
    assert listed.returncode == 0 and token not in listed.stdout
    assert digest(token) not in listed.stdout
    [shown] = json.loads(listed.stdout)
    assert shown["agent"] == HOSTILE and shown["role"] == "agent" and shown["revoked"] is None
    assert set(shown) == {"agent", "role", "scope", "created", "expires", "revoked"}
    assert governance(project, "revoke", "--agent", HOSTILE).returncode == 0
    assert json.loads(governance(project, "list", "--json").stdout)[0]["revoked"]
    assert governance(project, "revoke", "--agent", HOSTILE).returncode == 1
    bad = governance(project, "add", "--agent", "a", "--role", "agent", "--expires", "soon")
    assert bad.returncode != 0 and "30d" in bad.stderr


def test_roles_scopes_and_the_identity_audited(server: Served, project: Path) -> None:
    tokens = FileTokens(str(project))
    agent, _ = mint(tokens, HOSTILE, "agent", project_id(str(project)))
    reviewer, _ = mint(tokens, "rev", "reviewer", None)
    elsewhere, _ = mint(tokens, "other", "admin", "another-project-1234")

    made = server.rpc(record(1, agent={"id": "claims-to-be-admin"}), token=agent)
    assert made["result"]["agent"] == HOSTILE, made
    refused = server.rpc({"jsonrpc": "2.0", "method": "cstp.reviewDecision", "id": 2,
                          "params": {"id": made["result"]["id"], "outcome": "success"}},
                         token=agent)
    assert refused["error"]["code"] == -32003 and "reviewer" not in refused["error"]["message"]
    assert "'agent'" in refused["error"]["message"]
    for path in ("/report", "/hooks/PreToolUse"):   # the project's token or an admin's only
        assert server.request("POST" if "hooks" in path else "GET", path, b"{}",
                              token=agent)[0] == 403
    reviewed = server.rpc({"jsonrpc": "2.0", "method": "cstp.reviewDecision", "id": 3,
                           "params": {"id": made["result"]["id"], "outcome": "success"}},
                          token=reviewer)
    assert reviewed["result"]["success"] is True
    status, _, body = server.request("POST", "/cstp", json.dumps(record(4)).encode(),
                                     token=elsewhere)
    assert status == 403 and b"another-project-1234" in body
    assert "result" in server.rpc(record(5))    # the project's own token: as before

    lines = [json.loads(line) for line in
             (project / ".claude" / "governance" / "ledger.jsonl").read_text().splitlines()]
    calls = [line for line in lines if line.get("event") == "CSTP"]
    first = next(c for c in calls if c.get("rpc_id") == "1")
    assert first["credential"] == f"agent:{HOSTILE}" and first["agent"] == HOSTILE
    assert first["declared_agent"] == "claims-to-be-admin"
    assert next(c for c in calls if c.get("rpc_id") == "2")["error"] == -32003


def test_revoked_expired_and_unknown_tokens_get_401(server: Served, project: Path) -> None:
    tokens = FileTokens(str(project))
    live, _ = mint(tokens, "bot", "agent", None)
    expired, _ = mint(tokens, "old", "agent", None, "30m", now=time.time() - 3600)
    assert "result" in server.rpc(record(1), token=live)
    for token in (expired, "not-a-token", live + "x"):
        assert server.request("POST", "/cstp", json.dumps(record(2)).encode(),
                              token=token)[0] == 401
    assert tokens.revoke("bot", time.time()) == 1
    time.sleep(2.2)     # the server keeps a lookup 2 s at most
    assert server.request("POST", "/cstp", json.dumps(record(3)).encode(), token=live)[0] == 401
