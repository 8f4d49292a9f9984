"""Hybrid ranking with the optional embedding model, and its fallback to keywords."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from governance.bench.ranking import _metrics, compare
from governance.decisions import embedding, fields
from governance.decisions.store import DecisionStore


def act(description: str, **extra: Any) -> dict[str, Any]:
    return fields.action({"description": description, "category": "security",
                                  "stakes": "medium", "confidence": 0.7, "tags": ["t"],
                                  "pattern": "p", **extra})


def test_metrics_by_hand() -> None:
    figures = _metrics(["x", "a", "y", "b", "z"], {"a", "b", "c"})
    assert figures["mrr"] == 0.5
    assert figures["p@3"] == pytest.approx(1 / 3)
    assert figures["recall@5"] == pytest.approx(2 / 3)
    # dcg = 1/log2(3) + 1/log2(5); ideal = 1 + 1/log2(3) + 1/log2(4)
    assert figures["ndcg@5"] == pytest.approx((0.63093 + 0.43068) / (1 + 0.63093 + 0.5),
                                              abs=1e-4)


def test_hybrid_falls_back_to_keywords_without_a_model(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedding, "_CACHED", [None])
    store = DecisionStore(str(tmp_path / "d.db"))
    decision = store.record(act("Store passwords with argon2id"), "a")
    assert [d["id"] for d in store.query("passwords", ranking="hybrid")] == [decision["id"]]
    assert store.query("credential hashing", ranking="hybrid") == []


needs_model = pytest.mark.skipif(embedding.load_embedder() is None,
                                 reason="the optional embedding packages are not installed")


@needs_model
def test_embedder_matches_the_reference_model() -> None:
    embedder = embedding.load_embedder()
    assert embedder is not None
    vectors = embedder.encode(["A man is eating food.", "A man is eating a piece of bread.",
                               "The girl is carrying a baby."])
    assert vectors.shape == (3, 384)
    assert float(vectors[0] @ vectors[0]) == pytest.approx(1.0, abs=1e-5)
    # sentence-transformers gives 0.7553 for this pair with all-MiniLM-L6-v2
    assert float(vectors[0] @ vectors[1]) == pytest.approx(0.755, abs=0.01)
    assert float(vectors[0] @ vectors[2]) < 0.1


@needs_model
def test_hybrid_finds_paraphrases(tmp_path: Path) -> None:
    store = DecisionStore(str(tmp_path / "d.db"))
    target = store.record(act("Store passwords with argon2id instead of sha1"), "a")
    store.record(act("Put a CDN in front of static assets"), "a")
    assert store.query("secure credential hashing", ranking="keyword") == []
    hits = store.query("secure credential hashing", ranking="hybrid", limit=2)
    assert hits[0]["id"] == target["id"]
    assert 0 < hits[0]["similarity"] <= 1 and "seq" not in hits[0]
    assert hits[0]["keyword_similarity"] == 0.0


@needs_model
def test_hybrid_beats_keyword_on_the_labelled_set() -> None:
    figures = compare()
    assert figures["hybrid"]["ndcg@5"] > figures["keyword"]["ndcg@5"]
    assert figures["hybrid"]["mrr"] > figures["keyword"]["mrr"]


@needs_model
def test_pre_action_in_hybrid_mode_embeds_new_decisions(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from governance.decisions.pre_action import pre_action

    monkeypatch.setenv("GOVERNANCE_RANKING", "hybrid")
    first = pre_action(str(project), "a", {
        "description": "Store passwords with argon2id instead of sha1", "category": "security",
        "stakes": "medium", "confidence": 0.8, "tags": ["crypto"], "pattern": "modern hashing"})
    store = DecisionStore.for_project(str(project))
    assert store.db.execute("SELECT count(*) FROM decision_vectors").fetchone()[0] == 1
    store.close()
    second = pre_action(str(project), "a", {
        "description": "How should we keep user credentials safe", "category": "security",
        "stakes": "medium", "confidence": 0.8}, {"auto_record": False})
    assert second["relevant_decisions"][0]["id"] == first["decision_id"]
