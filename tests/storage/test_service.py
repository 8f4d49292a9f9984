"""The CSTP methods on a PostgreSQL store: what ``governance serve --database`` runs. Each decision
is its own transaction on the process's pool, answered once committed."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from governance.decisions.store import DecisionStore
from governance.server.cstp import Service
from governance.server.protocol import Call
from governance.server.ratelimit import RateLimiter


@pytest.fixture
def service(database: str, project: Path, monkeypatch: pytest.MonkeyPatch) -> Service:
    (project / ".claude" / "governance").mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("GOVERNANCE_DATABASE_URL", database)
    return Service(str(project), RateLimiter(0, 1))


def test_cstp_calls_record_and_read_the_projects_rows(service: Service, project: Path,
                                                       database: str) -> None:
    action = {"description": "Cache the session lookups", "category": "architecture",
              "stakes": "low", "confidence": 0.8, "tags": ["cache"], "pattern": "read-through"}
    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda k: service.run(
            Call("cstp.preAction", {"action": action, "agent_id": f"a{k}"}, k), "bearer:t"),
            range(8)))
    ids = {a["decision_id"] for a in answers}
    assert len(ids) == 8 and None not in ids, answers
    assert service.stores.writer is None          # no SQLite group commit: PostgreSQL commits each
    reviewed = service.run(Call("cstp.reviewDecision", {"id": answers[0]["decision_id"],
                                                        "outcome": "success"}, 9), "bearer:t")
    assert reviewed["decision"]["outcome"] == "success"
    found = service.run(Call("cstp.queryDecisions", {"query": "session cache", "limit": 20},
                             10), "bearer:t")
    assert {d["id"] for d in found["decisions"]} == ids
    calibration = service.run(Call("cstp.getCalibration", {"agent": {"id": "a0"}}, 11),
                              "bearer:t")
    assert calibration["overall"]["sample_size"] == 1
    context = service.run(Call("cstp.getSessionContext", {"agent": {"id": "a0"}}, 12),
                          "bearer:t")
    assert context["decisionCount"] == 8
    service.close()
    assert not (project / ".claude" / "governance" / "decisions.db").exists()
    store = DecisionStore.for_project(str(project), database)
    assert store.count() == 8 and all(store.get(i) for i in ids)


def test_a_database_that_is_down_follows_the_fail_mode(project: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    (project / ".claude" / "governance").mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("GOVERNANCE_DATABASE_URL",
                       "postgresql:///nope?host=/nonexistent&user=governance")
    service = Service(str(project), RateLimiter(0, 1))
    answer = service.run(Call("cstp.preAction", {"action": {
        "description": "Cache the session lookups", "category": "architecture",
        "stakes": "low", "confidence": 0.8}, "agent_id": "a"}, 1), "bearer:t")
    assert answer["allowed"] is True and answer["decision_id"] is None   # fail-open by default
    assert "cannot reach the decision database" in answer["internal_error"]
