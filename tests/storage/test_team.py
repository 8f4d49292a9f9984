"""Team-wide reads on PostgreSQL: queries, calibration and patterns across every project's rows,
and per project."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from governance.decisions import fields
from governance.decisions.calibration import report_from_sums
from governance.decisions.pre_action import pre_action
from governance.decisions.store import DecisionStore
from governance.errors import StorageError
from tests.storage.conftest import Cluster


def act(description: str, **overrides: Any) -> dict[str, Any]:
    return fields.action({"description": description, "category": "architecture",
                          "stakes": "medium", "confidence": 0.8, "tags": ["deploy"],
                          "pattern": "blue-green deploy", **overrides})


def test_the_team_reads_every_project_and_writes_none(cluster: Cluster, tmp_path: Path,
                                                      project: Path) -> None:
    from governance.storage import migration

    url = cluster.new_database()
    migration.migrate(url)
    shop, billing = (DecisionStore.for_project(str(tmp_path / name), url)
                     for name in ("shop", "billing"))
    one = shop.record(act("Deploy the shop with blue-green switches"), "agent-1")
    two = billing.record(act("Deploy billing with blue-green switches", confidence=0.4),
                         "agent-1")
    billing.record(act("Send billing reports nightly", category="tooling", tags=["reports"],
                       pattern="nightly batch"), "agent-2")
    shop.review(one["id"], "success")
    billing.review(two["id"], "failure")
    team = DecisionStore.for_team(url)
    assert team.count() == 3 and shop.count() == 1
    assert {d["id"] for d in team.query("blue green deploy")} == {one["id"], two["id"]}
    assert [d["id"] for d in shop.query("blue green deploy")] == [one["id"]]
    assert team.doc_counts(["billing", "deploy"]) == (3, {"billing": 2, "deploy": 2})
    assert len(team.query(None, agent_id="agent-1")) == 2
    together = report_from_sums(team.calibration_sums("agent-1", "architecture"),
                                "architecture")["overall"]
    assert together["sample_size"] == 2 and together["accuracy"] == 0.5
    alone = report_from_sums(shop.calibration_sums("agent-1"))["overall"]
    assert alone["sample_size"] == 1 and alone["accuracy"] == 1.0
    answer = pre_action(str(project), "agent-1", act("Deploy the checkout with blue-green"),
                        {"auto_record": False}, store=team)
    assert answer["patterns"] == [{"pattern": "blue-green deploy", "decisions": 2,
                                   "confirmed": 1, "failed": 1}]
    assert answer["calibration_context"]["sample_size"] == 2
    with pytest.raises(StorageError, match="writes none"):
        team.record(act("anything"), "agent-1")
    with pytest.raises(StorageError, match="writes none"):
        team.review(one["id"], "failure")


def test_a_team_view_needs_a_database(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(StorageError, match="needs the team's PostgreSQL database"):
        DecisionStore.for_team()
