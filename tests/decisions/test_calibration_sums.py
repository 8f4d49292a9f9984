"""Calibration from sums the store keeps per agent, category and confidence bin: the same figures
as from the whole reviewed history, after any sequence of records and (re-)reviews."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from governance.decisions import fields
from governance.decisions.calibration import calibrate, calibrate_sums, calibration_report, report_from_sums
from governance.decisions.store import DecisionStore

AGENTS = ("agent-a", "agent-b")
CATEGORIES = ("architecture", "tooling")
OUTCOMES = ("success", "partial", "failure", "abandoned")


def _action(category: str, confidence: float) -> dict[str, Any]:
    return fields.action({"description": "choose a queue", "category": category,
                          "stakes": "medium", "confidence": confidence, "tags": ["t"],
                          "pattern": "p"})


def _close(left: dict[str, Any], right: dict[str, Any]) -> None:
    for key in ("sample_size", "tendency"):
        assert left[key] == right[key], key
    for key in ("accuracy", "brier", "ece", "gap"):
        if left[key] is None:
            assert right[key] is None
        else:
            assert left[key] == pytest.approx(right[key], abs=2e-4), key
    assert [b["count"] for b in left["bins"]] == [b["count"] for b in right["bins"]]


STEP = st.tuples(st.sampled_from(AGENTS), st.sampled_from(CATEGORIES),
                 st.floats(min_value=0.0, max_value=1.0), st.lists(st.sampled_from(OUTCOMES),
                                                                  max_size=3))


@given(st.lists(STEP, min_size=1, max_size=25))
@settings(max_examples=40, deadline=None)
def test_sums_follow_every_record_and_review(tmp_path_factory: pytest.TempPathFactory,
                                            steps: list[tuple[str, str, float, list[str]]]
                                            ) -> None:
    store = DecisionStore(str(tmp_path_factory.mktemp("db") / "decisions.db"))
    try:
        for agent, category, confidence, reviews in steps:
            decision = store.record(_action(category, confidence), agent)
            for outcome in reviews:          # reviewed again: the old outcome is taken out
                store.review(decision["id"], outcome)
        for agent in (None, *AGENTS):
            for category in (None, *CATEGORIES):
                rows = store.reviewed(agent, category)
                _close(report_from_sums(store.calibration_sums(agent, category),
                                        category)["overall"],
                       calibration_report(rows, category)["overall"])
    finally:
        store.close()


def test_the_sums_are_built_for_a_store_of_the_previous_version(tmp_path: Path) -> None:
    path = tmp_path / "decisions.db"
    store = DecisionStore(str(path))
    for k in range(12):
        decision = store.record(_action(CATEGORIES[k % 2], k / 11), AGENTS[k % 2])
        store.review(decision["id"], OUTCOMES[k % 4])
    expected = calibration_report(store.reviewed())
    store.close()
    db = sqlite3.connect(path)           # as version 1 left it: no sums, no triggers
    db.executescript("DROP TRIGGER calibration_insert; DROP TRIGGER calibration_update; "
                     "DROP TRIGGER calibration_delete; DROP TABLE calibration_sums; "
                     "PRAGMA user_version=1;")
    db.close()
    store = DecisionStore(str(path))
    try:
        found = report_from_sums(store.calibration_sums())
        _close(found["overall"], expected["overall"])
        for category in CATEGORIES:
            _close(found["categories"][category], expected["categories"][category])
    finally:
        store.close()


def test_sums_of_pairs_give_the_direct_figures() -> None:
    pairs = [(0.9, "failure"), (0.8, "success"), (0.95, "partial"), (0.1, "success")]
    direct = calibrate(pairs, "x")
    assert calibrate_sums({}, "x")["tendency"] == "insufficient_data"
    assert direct["brier"] == pytest.approx(
        sum((c - {"success": 1.0, "partial": 0.5, "failure": 0.0}[o]) ** 2 for c, o in pairs) / 4,
        abs=1e-4)
