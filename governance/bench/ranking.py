"""Keyword versus hybrid ranking on a small labelled set of decisions.

The set (``tests/decisions/data/labelled_decisions.json``) groups decisions by topic; a query's
relevant decisions are those of its topic. Reported per ranking: mean reciprocal rank of the first
relevant hit, precision at 3, recall at 5 and nDCG at 5, averaged over the queries.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import time
from typing import Any

from governance.decisions.fields import action as clean_action
from governance.decisions.store import DecisionStore
from governance.project import package_root


def default_set_path() -> str:
    return os.path.join(package_root(), "tests", "decisions", "data",
                        "labelled_decisions.json")


def _metrics(ranked: list[str], relevant: set[str]) -> dict[str, float]:
    first = next((i for i, item in enumerate(ranked) if item in relevant), None)
    gains = sum(1 / math.log2(i + 2) for i, item in enumerate(ranked[:5]) if item in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(5, len(relevant))))
    return {"mrr": 0.0 if first is None else 1 / (first + 1),
            "p@3": sum(item in relevant for item in ranked[:3]) / 3,
            "recall@5": sum(item in relevant for item in ranked[:5]) / len(relevant),
            "ndcg@5": gains / ideal}


def evaluate(store: DecisionStore, queries: list[dict[str, Any]],
             topics: dict[str, str], ranking: str) -> dict[str, float]:
    totals: dict[str, float] = {}
    started = time.perf_counter()
    for query in queries:
        relevant = {key for key, topic in topics.items() if topic == query["topic"]}
        ranked = [item["id"] for item in store.query(query["text"], limit=10, ranking=ranking)]
        for name, value in _metrics(ranked, relevant).items():
            totals[name] = totals.get(name, 0.0) + value
    figures = {name: round(value / len(queries), 3) for name, value in totals.items()}
    figures["ms_per_query"] = round((time.perf_counter() - started) * 1000 / len(queries), 1)
    return figures


def compare(path: str | None = None) -> dict[str, dict[str, float]]:
    """Figures per ranking ("keyword", and "hybrid" when the embedding model is installed)."""
    from governance.decisions.embedding import load_embedder

    with open(path or default_set_path(), encoding="utf-8") as handle:
        data = json.load(handle)
    folder = tempfile.mkdtemp(prefix="governance-ranking-")
    store = DecisionStore(os.path.join(folder, "decisions.db"))
    topics: dict[str, str] = {}
    rows: list[tuple[str, str, dict[str, Any], dict[str, Any], float]] = []
    for index, item in enumerate(data["decisions"]):
        decision_id = f"dec-{index:08x}"
        topics[decision_id] = item["topic"]
        action = clean_action({key: item[key] for key in ("description", "pattern", "tags",
                                                          "reasons")}
                              | {"category": "architecture", "stakes": "medium",
                                 "confidence": 0.7})
        rows.append((decision_id, "agent", action, {}, time.time()))
    store.insert_many(rows)
    result = {"keyword": evaluate(store, data["queries"], topics, "keyword")}
    if load_embedder() is not None:
        evaluate(store, data["queries"][:1], topics, "hybrid")  # computes the vectors once
        result["hybrid"] = evaluate(store, data["queries"], topics, "hybrid")
    store.close()
    return result
