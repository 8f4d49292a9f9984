"""One server for many projects (``governance serve --database``): each call acts in the project
its token is scoped to, or the one it names (``params.project`` or the ``X-Governance-Project``
header); a team-wide token learns from every project and records into the one it names."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from governance.decisions.store import DecisionStore
from governance.server.cstp import Service
from governance.server.identity import Caller
from governance.server.protocol import Call, RpcError
from governance.server.ratelimit import RateLimiter
from governance.storage.database import project_id
from tests.helpers import REPO, install, set_state
from tests.server.conftest import Served, start_server, stop_server


class Names:
    """The projects of one test, and a word only its decisions hold (the session's database is
    shared by every test)."""

    def __init__(self) -> None:
        tag = uuid.uuid4().hex[:8]
        self.shop, self.billing, self.ledger = (f"{n}-{tag}" for n in ("shop", "billing", "ledger"))
        self.word = "zebrafish" + "".join(chr(ord("a") + int(c, 16) % 26) for c in tag)
        self.action = {"description": f"Shard the {self.word} export queue by tenant",
                       "category": "architecture", "stakes": "medium", "confidence": 0.8,
                       "tags": ["queue"], "pattern": "sharding"}
        self.lead = Caller(f"agent:lead-{tag}", "reviewer", None, f"lead-{tag}")   # team-wide


@pytest.fixture
def P() -> Names:
    return Names()


def scoped(project: str, agent: str = "bot", role: str = "agent") -> Caller:
    return Caller(f"agent:{agent}", role, project, agent)


def rows(database: str, project: str) -> list[dict[str, Any]]:
    store = DecisionStore.for_project_id(database, project)
    try:
        return store.query(None, limit=100)
    finally:
        store.close()


@pytest.fixture
def team(database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Service]:
    served = tmp_path / "team-server"
    (served / ".claude" / "governance").mkdir(parents=True)
    monkeypatch.setenv("GOVERNANCE_DATABASE_URL", database)
    service = Service(str(served), RateLimiter(0, 1))
    yield service
    service.close()


def test_a_scoped_token_acts_in_its_own_project_and_no_other(P: Names, team: Service,
                                                             database: str) -> None:
    answer = team.run(Call("cstp.preAction", {"action": P.action}, 1), scoped(P.shop))
    assert answer["decision_id"] is not None
    assert [d["id"] for d in rows(database, P.shop)] == [answer["decision_id"]]
    assert rows(database, team.served_id()) == []
    same = team.run(Call("cstp.recordDecision", {"decision": "Keep the queue", "category":
                                                 "architecture", "stakes": "low",
                                                 "confidence": 0.6, "project": P.shop}, 2),
                    scoped(P.shop))
    assert same["success"] is True
    for params in ({"action": P.action, "project": P.billing},):
        with pytest.raises(RpcError) as refused:
            team.run(Call("cstp.preAction", params, 3), scoped(P.shop))
        assert refused.value.code == -32003 and f"acts in project {P.shop}, not {P.billing}" \
            in refused.value.message
    with pytest.raises(RpcError) as header:
        team.run(Call("cstp.queryDecisions", {"query": "queue"}, 4),
                 Caller("agent:bot", "agent", P.shop, "bot", named=P.billing))
    assert header.value.code == -32003
    assert rows(database, P.billing) == []
    seen = team.run(Call("cstp.queryDecisions", {"query": f"{P.word} queue"}, 5),
                    scoped(P.billing))
    assert seen["decisions"] == []          # a scoped token never reads another project


def test_a_team_token_learns_across_projects_and_records_where_it_names(P: Names, team: Service,
                                                                        database: str) -> None:
    first = team.run(Call("cstp.preAction", {"action": P.action}, 1), scoped(P.shop, "a"))
    answer = team.run(Call("cstp.preAction", {"action": P.action, "project": P.billing}, 2), P.lead)
    assert first["decision_id"] in [d["id"] for d in answer["relevant_decisions"]], answer
    assert [d["id"] for d in rows(database, P.billing)] == [answer["decision_id"]]
    by_header = team.run(Call("cstp.recordDecision", {
        "decision": f"Tenant shards for the {P.word} ledger", "category": "architecture",
        "stakes": "low", "confidence": 0.9}, 3), replace(P.lead, named=P.ledger))
    assert [d["id"] for d in rows(database, P.ledger)] == [by_header["id"]]
    found = team.run(Call("cstp.queryDecisions", {"query": P.word, "limit": 10,
                                                  "project": P.billing}, 4), P.lead)
    projects = {d["id"] for d in found["decisions"]}
    assert projects == {first["decision_id"], answer["decision_id"], by_header["id"]}
    # A review acts in the project the call names; the id is unknown in another one.
    reviewed = team.run(Call("cstp.reviewDecision", {"id": answer["decision_id"],
                                                     "outcome": "success",
                                                     "project": P.billing}, 5), P.lead)
    assert reviewed["decision"]["outcome"] == "success"
    with pytest.raises(RpcError):
        team.run(Call("cstp.reviewDecision", {"id": answer["decision_id"], "outcome": "failure",
                                              "project": P.shop}, 6), P.lead)
    team.run(Call("cstp.reviewDecision", {"id": by_header["id"], "outcome": "failure",
                                          "project": P.ledger}, 7), P.lead)
    calibration = team.run(Call("cstp.getCalibration", {"project": P.billing}, 8), P.lead)
    assert calibration["scope"] == "team" and calibration["overall"]["sample_size"] == 2
    own = calibration["projectCalibration"]
    assert own["project"] == P.billing and own["overall"]["sample_size"] == 1
    scoped_view = team.run(Call("cstp.getCalibration", {}, 9),
                           scoped(P.billing, P.lead.agent or ""))
    assert scoped_view["scope"] == "project" and scoped_view["overall"]["sample_size"] == 1
    context = team.run(Call("cstp.getSessionContext", {"project": P.billing}, 10), P.lead)
    assert context["project"] == P.billing


def test_a_team_reviewer_that_names_no_project_reviews_the_decision_where_it_is(
        P: Names, team: Service, database: str) -> None:
    """The one project that holds the id is found (the answer and the audit name it); an id two
    projects hold must be named; a scoped reviewer never looks beyond its own project."""
    made = team.run(Call("cstp.preAction", {"action": P.action}, 1), scoped(P.shop, "a"))
    reviewed = team.run(Call("cstp.reviewDecision", {"id": made["decision_id"],
                                                     "outcome": "success"}, 2), P.lead)
    assert reviewed["project"] == P.shop and reviewed["decision"]["outcome"] == "success"
    assert [d["outcome"] for d in rows(database, P.shop)] == ["success"]
    ledger = Path(team.project) / ".claude" / "governance" / "ledger.jsonl"
    audit = [json.loads(line) for line in ledger.read_text().splitlines()]
    assert [(r.get("project"), r["agent"]) for r in audit if r.get("event") == "CSTP"
            and r["method"] == "cstp.reviewDecision"] == [(P.shop, P.lead.agent)]

    with pytest.raises(RpcError, match="no decision with id"):
        team.run(Call("cstp.reviewDecision", {"id": made["decision_id"], "outcome": "failure"},
                      3), scoped(P.billing, "rev", "reviewer"))
    with pytest.raises(RpcError, match="no decision with id"):
        team.run(Call("cstp.reviewDecision", {"id": f"dec-none-{P.shop[-8:]}",
                                              "outcome": "failure"}, 4), P.lead)

    twice = "dec-" + P.shop[-8:]
    for project in (P.shop, P.billing):
        store = DecisionStore.for_project_id(database, project)
        store.insert_many([(twice, "a", {**P.action, "reasons": [], "context": {}}, {}, 1.0)])
        store.close()
    with pytest.raises(RpcError, match=f"is in projects {P.billing}, {P.shop}; name the one") \
            as raised:
        team.run(Call("cstp.reviewDecision", {"id": twice, "outcome": "failure"}, 5), P.lead)
    assert raised.value.code == -32602
    named = team.run(Call("cstp.reviewDecision", {"id": twice, "outcome": "partial",
                                                  "project": P.billing}, 6), P.lead)
    assert named["project"] == P.billing
    assert {d["id"]: d["outcome"] for d in rows(database, P.billing)} == {twice: "partial"}


def test_the_named_project_is_checked(P: Names, team: Service) -> None:
    for params, code in (({"action": P.action, "project": "../etc"}, -32602),
                         ({"action": P.action, "project": "x" * 101}, -32602),
                         ({"action": P.action, "project": "a'; DROP TABLE decisions; --"}, -32602)):
        with pytest.raises(RpcError) as refused:
            team.run(Call("cstp.preAction", params, 1), P.lead)
        assert refused.value.code == code
    with pytest.raises(RpcError) as both:
        team.run(Call("cstp.preAction", {"action": P.action, "project": "a"}, 2),
                 replace(P.lead, named="b"))
    assert both.value.code == -32602 and "name one project" in both.value.message


def test_a_server_without_a_team_database_serves_its_own_project_only(P: Names,
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOVERNANCE_DATABASE_URL", raising=False)
    (project / ".claude" / "governance").mkdir(parents=True, exist_ok=True)
    service = Service(str(project), RateLimiter(0, 1))
    try:
        own = service.run(Call("cstp.preAction", {"action": P.action,
                                                  "project": project_id(str(project))}, 1),
                          "bearer:t")
        assert own["decision_id"] is not None
        with pytest.raises(RpcError) as refused:
            service.run(Call("cstp.preAction", {"action": P.action, "project": P.billing}, 2),
                        "bearer:t")
        assert refused.value.code == -32602 and "--database" in refused.value.message
    finally:
        service.close()


# -- the real server ---------------------------------------------------------------------------
def governance(project: Path, database: str, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(REPO), "GOVERNANCE_DATABASE_URL": database}
    done = subprocess.run([sys.executable, "-m", "governance.commands", *args], cwd=str(project),
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def post(served: Served, token: str, body: Any, project: str | None = None
         ) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    if project is not None:
        headers["X-Governance-Project"] = project
    request = urllib.request.Request(f"http://127.0.0.1:{served.port}/cstp",
                                     data=json.dumps(body).encode(), headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


def test_one_real_server_serves_many_projects(P: Names, database: str, project: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    install(project)
    set_state(project, "implementation-cycle/DO/WORK-064")
    monkeypatch.setenv("GOVERNANCE_DATABASE_URL", database)
    shop = governance(project, database, "token", "add", "--agent", "shop-bot", "--role",
                      "agent", "--project", P.shop)
    lead = governance(project, database, "token", "add", "--agent", "lead", "--role", "agent")
    served = start_server(project, "--database", database)
    try:
        call = {"jsonrpc": "2.0", "id": 1, "method": "cstp.preAction",
                "params": {"action": P.action}}
        status, answer = post(served, shop, call)
        assert status == 200 and answer["result"]["decision_id"], answer
        status, answer = post(served, lead, call, project=P.billing)
        assert status == 200 and answer["result"]["decision_id"], answer
        status, answer = post(served, shop, call, project=P.billing)
        assert status == 200 and answer["error"]["code"] == -32003, answer
        status, answer = post(served, lead, call, project="../x")
        assert status == 400 and "not a project id" in answer["error"]
        assert len(rows(database, P.shop)) == 1 and len(rows(database, P.billing)) == 1
        audit = (project / ".claude" / "governance" / "ledger.jsonl").read_text()
        assert f'"project": "{P.billing}"' in audit or f'"project":"{P.billing}"' in audit
    finally:
        stop_server(served)


def test_a_minted_token_that_cannot_be_checked_is_a_503(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tokens' database is down: a minted token is answered 503 with the reason and
    Retry-After (not a 500), the URL's password masked."""
    import asyncio

    from governance.server.app import App, Settings

    (project / ".claude" / "governance").mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("GOVERNANCE_DATABASE_URL",
                       "postgresql://team:s3cret@/governance?host=/nonexistent")
    monkeypatch.setenv("GOVERNANCE_DATABASE_POOL_TIMEOUT", "1")
    app = App(Settings(str(project), "the-project-token", workers=0))
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/cstp", "query_string": b"",
             "headers": [(b"host", b"127.0.0.1"), (b"authorization", b"Bearer minted-x"),
                         (b"content-type", b"application/json")], "client": ("127.0.0.1", 1)}
    asyncio.run(app(scope, receive, send))
    start, body = sent
    assert start["status"] == 503 and (b"retry-after", b"5") in start["headers"]
    said = json.loads(body["body"])["error"]
    assert "cannot be checked now" in said and "s3cret" not in said and "team:***@" in said
