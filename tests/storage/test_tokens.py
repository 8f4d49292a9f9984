"""The team database's ``tokens`` table (migration 0002): hashes only, hostile text stored as data."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from governance.server.identity import DatabaseTokens, Verifier, digest, mint

HOSTILE = "o'brien \"x\" '; DROP TABLE tokens; -- ünïcødé 🚀 $1 %s"


def test_tokens_round_trip_hashed_with_hostile_text(database: str) -> None:
    tokens = DatabaseTokens(database)
    token, row = mint(tokens, HOSTILE, "reviewer", "shop-api-1234", "12h")
    expired, _ = mint(tokens, HOSTILE + "-old", "agent", None, "1m", now=time.time() - 120)
    found = tokens.find(digest(token))
    assert found == row and found.agent == HOSTILE and found.project_id == "shop-api-1234"
    verifier = Verifier(tokens, ttl=0)
    caller = verifier.caller(token)
    assert caller is not None and caller.key == f"agent:{HOSTILE}" and caller.role == "reviewer"
    assert verifier.caller(expired) is None and verifier.caller(HOSTILE) is None
    from governance.storage.pool import connect

    with connect(database) as conn:
        dumped = str(conn.execute("SELECT * FROM tokens").fetchall())
    assert token not in dumped and expired not in dumped and digest(token) in dumped
    assert tokens.revoke(HOSTILE, time.time()) == 1
    assert verifier.caller(token) is None
    assert {t.agent for t in tokens.all()} >= {HOSTILE, HOSTILE + "-old"}


def test_a_team_token_reads_every_project_a_scoped_one_its_own(
        database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from governance.decisions import fields
    from governance.decisions.store import DecisionStore
    from governance.server.cstp import Service
    from governance.server.identity import Caller
    from governance.server.protocol import Call, RpcError
    from governance.server.ratelimit import RateLimiter
    from governance.storage.database import project_id

    shop, billing = tmp_path / "shop", tmp_path / "billing"
    for folder in (shop, billing):
        (folder / ".claude" / "governance").mkdir(parents=True)
    other = DecisionStore.for_project(str(billing), database)
    other.record(fields.action({"description": "Zebrafish queue for billing exports",
                                "category": "architecture", "stakes": "low",
                                "confidence": 0.7, "tags": ["queue"],
                                "pattern": "queue"}), "billing-bot")
    other.close()
    monkeypatch.setenv("GOVERNANCE_DATABASE_URL", database)
    service = Service(str(shop), RateLimiter(0, 1))
    query = Call("cstp.queryDecisions", {"query": "zebrafish queue"}, 1)
    team = service.run(query, Caller("agent:lead", "agent", None, "lead"))
    scoped = service.run(query, Caller("agent:bot", "agent", project_id(str(shop)), "bot"))
    wanted = "Zebrafish queue for billing exports"
    assert wanted in [d["description"] for d in team["decisions"]], team
    assert wanted not in [d["description"] for d in scoped["decisions"]]
    with pytest.raises(RpcError) as refused:
        service.run(Call("cstp.reviewDecision", {"id": "x", "outcome": "success"}, 2),
                    Caller("agent:bot", "agent", None, "bot"))
    assert refused.value.code == -32003
    service.close()
