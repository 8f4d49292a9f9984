"""Hybrid ranking: keyword (BM25) candidates and sentence-embedding neighbours, combined.

score = KEYWORD_WEIGHT * keyword similarity + (1 - KEYWORD_WEIGHT) * max(cosine, 0)

Vectors are computed lazily (the engine's ``decision_vectors`` table, float32 bytes) the first time
a hybrid query needs them, and compared here, whatever the engine. Stores with at most
:data:`SCAN_LIMIT` decisions are scanned whole for neighbours, so a paraphrase with no shared word is
still found; larger stores re-rank the keyword candidates only.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any, Protocol

from governance.decisions.embedding import load_embedder
from governance.decisions.search_text import decision_text, query_terms
from governance.storage.engine import Engine

KEYWORD_WEIGHT = 0.5
SCAN_LIMIT = 5000
BATCH = 64


class DecisionStore(Protocol):
    """What ranking needs of the decision store (``decisions.store.DecisionStore``), which calls
    ranking for a hybrid query: a protocol here keeps the two from importing each other."""

    engine: Engine

    def count(self) -> int: ...

    def keyword_query(self, terms: list[str], where: list[str], params: list[Any], limit: int
                      ) -> list[dict[str, Any]]: ...

    def rows_by_seq(self, seqs: Sequence[int], where: list[str], params: list[Any]
                    ) -> list[dict[str, Any]]: ...


def _backfill(store: DecisionStore, seqs: list[int] | None, embedder: Any) -> None:
    """Compute missing vectors (for ``seqs``, or for every decision when None)."""
    if seqs is not None and not seqs:
        return
    import json

    missing = [(seq, {"description": desc, "pattern": pattern, "tags": json.loads(tags),
                      "reasons": json.loads(reasons)})
               for seq, desc, pattern, tags, reasons in store.engine.unembedded(seqs)]
    for start in range(0, len(missing), BATCH):
        chunk = missing[start:start + BATCH]
        vectors = embedder.encode([decision_text(item) for _, item in chunk])
        store.engine.put_vectors([(seq, vector.tobytes()) for (seq, _), vector
                                  in zip(chunk, vectors, strict=True)])


def embed_decision(store: DecisionStore, decision_id: str) -> bool:
    """Store the vector of one new decision now (so large stores need no backfill later);
    False without an embedder."""
    embedder = load_embedder()
    seq = store.engine.seq_of(decision_id)
    if embedder is None or seq is None:
        return False
    _backfill(store, [seq], embedder)
    return True


def hybrid_query(store: DecisionStore, text: str, where: list[str], params: list[Any],
                 limit: int) -> list[dict[str, Any]] | None:
    """Hybrid hits (``similarity`` is the combined score), or None without an embedder."""
    embedder = load_embedder()
    if embedder is None:
        return None
    np = importlib.import_module("numpy")
    pool = max(50, limit * 5)
    terms = query_terms(text)
    keyword = store.keyword_query(terms, where, params, pool) if terms else []
    candidates = {item["seq"]: item for item in keyword}
    query_vector = embedder.encode([text])[0]
    if store.count() <= SCAN_LIMIT:
        _backfill(store, None, embedder)
        rows = store.engine.vectors(None)
    else:
        _backfill(store, list(candidates), embedder)
        rows = store.engine.vectors(list(candidates)) if candidates else []
    cosine: dict[int, float] = {}
    if rows:
        matrix = np.frombuffer(b"".join(vec for _, vec in rows), dtype=np.float32)
        scores = matrix.reshape(len(rows), -1) @ query_vector
        order = np.argsort(-scores)[:pool]
        cosine = {int(rows[i][0]): float(scores[i]) for i in range(len(rows))}
        extra = [int(rows[i][0]) for i in order if int(rows[i][0]) not in candidates]
        for item in store.rows_by_seq(extra, where, params) if extra else []:
            item["similarity"] = 0.0
            candidates[item["seq"]] = item
    ranked = []
    for seq, item in candidates.items():
        score = (KEYWORD_WEIGHT * item["similarity"]
                 + (1 - KEYWORD_WEIGHT) * max(cosine.get(seq, 0.0), 0.0))
        item["keyword_similarity"] = item["similarity"]
        item["similarity"] = round(score, 3)
        ranked.append(item)
    ranked.sort(key=lambda item: -item["similarity"])
    return ranked[:limit]
