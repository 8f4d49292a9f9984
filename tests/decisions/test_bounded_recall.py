"""Recall with a bounded candidate set: the rarest terms first within a budget, the index ranking
alone to a limit, the newest decisions when every term is common. The best hits stay those of an
unbounded query on a fixed corpus."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from governance.decisions import fields, matching
from governance.decisions.store import DecisionStore

COMMON = [f"common{k}" for k in range(12)]


def _action(words: list[str], category: str = "architecture") -> dict[str, object]:
    return fields.action({"description": " ".join(words), "category": category,
                          "stakes": "medium", "confidence": 0.6, "tags": ["t"], "pattern": "p"})


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[DecisionStore, list[list[str]]]:
    rng = random.Random(11)
    store = DecisionStore(str(tmp_path_factory.mktemp("db") / "decisions.db"))
    docs = []
    rows = []
    for k in range(6000):
        words = [*rng.sample(COMMON, 6), f"rare{k}", f"topic{k % 400}", f"theme{k % 90}"]
        docs.append(words)
        rows.append((f"dec-{k:08x}", "agent", _action(words, ("architecture", "tooling")[k % 2]),
                     {}, 1_700_000_000.0 + k))
    store.insert_many(rows)
    return store, docs


@given(st.integers(min_value=0, max_value=5999), st.integers(min_value=1, max_value=6))
@settings(max_examples=40, deadline=None)
def test_the_best_hit_is_the_unbounded_one(corpus: tuple[DecisionStore, list[list[str]]],
                                           k: int, common: int) -> None:
    store, docs = corpus
    text = " ".join([*docs[k][:common], f"rare{k}", f"topic{k % 400}", f"theme{k % 90}"])
    bounded = store.query(text, limit=5)
    budget, window = matching.MATCH_BUDGET, matching.RECENT_WINDOW
    try:
        matching.MATCH_BUDGET, matching.RECENT_WINDOW = 10**9, 10**9
        unbounded = store.query(text, limit=5)
    finally:
        matching.MATCH_BUDGET, matching.RECENT_WINDOW = budget, window
    assert bounded[0]["id"] == unbounded[0]["id"] == f"dec-{k:08x}"
    assert bounded[0]["similarity"] == unbounded[0]["similarity"]


def test_filters_apply_after_the_index_ranks(corpus: tuple[DecisionStore, list[list[str]]]
                                             ) -> None:
    store, _docs = corpus
    found = store.query("theme7 common1", limit=5, category="tooling")
    assert found and all(item["category"] == "tooling" for item in found)
    assert all("theme7" in item["description"] for item in found)


def test_the_match_stays_within_its_budget(corpus: tuple[DecisionStore, list[list[str]]]) -> None:
    store, _docs = corpus
    terms = ["theme3", "topic5", "rare77", *COMMON[:4]]
    total, docs = store.doc_counts(terms)
    chosen, recent = matching.match_terms([t for t in terms if docs[t]], docs, total)
    assert not recent and "rare77" in chosen and not set(COMMON) & set(chosen)
    assert sum(docs[t] for t in chosen) <= matching.MATCH_BUDGET
    chosen, recent = matching.match_terms(COMMON[:3], {t: 3000 for t in COMMON[:3]}, 40_000)
    assert recent and len(chosen) >= 1      # every term common: the newest decisions only


def test_a_common_only_query_matches_among_the_newest(tmp_path: Path) -> None:
    store = DecisionStore(str(tmp_path / "decisions.db"))
    budget, window = matching.MATCH_BUDGET, matching.RECENT_WINDOW
    try:
        matching.MATCH_BUDGET, matching.RECENT_WINDOW = 50, 100
        store.insert_many([(f"dec-{k:08x}", "a", _action(["alpha", "beta", f"w{k}"]), {},
                            1_700_000_000.0 + k) for k in range(400)])
        found = store.query("alpha beta", limit=10)
        assert found and all(int(item["id"][4:], 16) >= 300 for item in found)
    finally:
        matching.MATCH_BUDGET, matching.RECENT_WINDOW = budget, window
        store.close()


def test_a_burst_of_alike_decisions_is_scored_only_to_the_recent_budget(tmp_path: Path) -> None:
    """The newest decisions all hold the query's words (an agent asked the same thing many
    times): the match scores at most RECENT_BUDGET of them, newest first, whatever their
    number."""
    store = DecisionStore(str(tmp_path / "decisions.db"))
    saved = (matching.MATCH_BUDGET, matching.RECENT_WINDOW, matching.RECENT_BUDGET)
    try:
        matching.MATCH_BUDGET, matching.RECENT_WINDOW = 50, 100
        matching.RECENT_BUDGET = 30
        store.insert_many([(f"dec-{k:08x}", "a", _action([f"w{k}", "filler"]), {},
                            1_700_000_000.0 + k) for k in range(300)])
        store.insert_many([(f"dec-{k:08x}", "a", _action(["gamma", "delta", f"w{k}"]), {},
                            1_700_000_000.0 + k) for k in range(300, 700)])
        total, docs = store.doc_counts(["gamma", "delta"])
        chosen, recent = matching.match_terms(["gamma", "delta"], docs, total)
        assert recent and set(chosen) <= {"gamma", "delta"}
        found = store.query("gamma delta", limit=50)
        assert len(found) == 30                       # the budget, not the 400 that match
        assert all(int(item["id"][4:], 16) >= 670 for item in found)
    finally:
        (matching.MATCH_BUDGET, matching.RECENT_WINDOW,
         matching.RECENT_BUDGET) = saved
        store.close()
