"""BM25 on PostgreSQL, exactly as SQLite's FTS5 computes it, so both engines rank alike.

A decision is indexed as its ``search`` tsvector (the words :mod:`governance.storage.text` splits,
each position labelled with its field: A description, D reasons, B tags, C pattern), which a GIN
index matches, its ``words`` (how many it holds: FTS5's document length) and its ``frequencies``
(each searchable word's count, weighted by the fields it is in as FTS5's column weights
:data:`FIELD_WEIGHTS` weigh it). A match is ranked with FTS5's formula: the sum over the query's
terms of idf * f * (k1 + 1) / (f + k1 * (1 - b + b * D / avgdl)), idf = ln((N - n + 0.5) / (n + 0.5))
(at least 1e-6). ``ts_rank`` has no IDF: its best hit differed from SQLite's on one query in thirty
(docs/team.md).

A project's match reads ``decision_postings`` (migration 0006): one row per decision and word with
the word's weighted frequency and the decision's length, kept by a trigger, under a btree on
(project, word). :func:`postings_rank` and :func:`postings_score` add a decision's parts from its
rows alone; the same formula, term by term, so the same decisions in the same order.
"""

from __future__ import annotations

import math
from typing import Any

from governance.storage.engine import FIELD_WEIGHTS, Record
from governance.storage.text import tokens

FIELDS = ("A", "D", "B", "C")   # the labels of description, reasons, tags and pattern
K1 = 1.2                   # FTS5's BM25 parameters
B = 0.75
MAX_LEXEME = 2046          # bytes: PostgreSQL refuses a longer word in a tsvector
MAX_POSITION = 16383       # larger positions are stored as this one
MAX_POSITIONS = 255        # per word (PostgreSQL keeps at most 256)
MAX_POSTED = 2000          # bytes: a longer word has no postings (migration 0006)


def posted(word: str) -> bool:
    """Whether ``decision_postings`` holds ``word``'s rows (a btree entry is at most 2,704 bytes
    with the project's id)."""
    return len(word.encode()) <= MAX_POSTED


def lexeme(word: str) -> str:
    """``word`` quoted for a tsvector or tsquery literal."""
    return "'" + word.replace("\\", "\\\\").replace("'", "''") + "'"


def fits(word: str) -> bool:
    return len(word.encode()) <= MAX_LEXEME


def indexed(record: Record) -> tuple[int, dict[str, float], str]:
    """A decision's number of words, the weighted frequency of each of its searchable words, and
    its tsvector literal."""
    positions: dict[str, list[str]] = {}
    frequencies: dict[str, float] = {}
    searchable = record.terms
    at = 0
    for label, weight, text in zip(FIELDS, FIELD_WEIGHTS, (
            record.description, record.reasons_text, " ".join(record.tag_list), record.pattern),
            strict=True):
        for word in tokens(text):
            at += 1
            if word in searchable:
                frequencies[word] = frequencies.get(word, 0.0) + weight
            if not fits(word):
                continue
            slot = positions.setdefault(word, [])
            if len(slot) < MAX_POSITIONS:
                slot.append(f"{min(at, MAX_POSITION)}{label}")
    vector = " ".join(f"{lexeme(word)}:{','.join(spots)}" for word, spots in positions.items())
    return at, frequencies, vector


def tsquery(terms: list[str]) -> str:
    """The tsquery literal matching any of ``terms``."""
    return " | ".join(lexeme(term) for term in terms)


def idf(total: int, held: int) -> float:
    """FTS5's IDF of a word ``held`` by that many of ``total`` decisions (at least 1e-6)."""
    ratio = (total - held + 0.5) / (held + 0.5)
    return math.log(ratio) if ratio > 1 else 1e-6


def rank(terms: list[str], total: int, docs: dict[str, int], alias: str, avgdl: str
         ) -> tuple[str, list[Any], str, list[Any]]:
    """The SQL of a decision's BM25 score (on ``alias``, with the mean length ``avgdl``) for
    ``terms`` held by ``docs`` of ``total`` decisions: the score's expression and its parameters,
    and the ``LATERAL`` subquery (aliased ``f``, joined after ``alias`` and ``avgdl``'s source)
    and its parameters, which read each term's frequency and the length's norm once per row."""
    columns = [f"coalesce(({alias}.frequencies ->> %s)::float8, 0) AS f{k}"
               for k in range(len(terms))]
    lateral = (f"SELECT {', '.join(columns)}, %s * (%s + %s * {alias}.words::float8 / {avgdl}) "
               f"AS norm OFFSET 0")    # OFFSET 0: kept a subquery, not inlined into each use
    lateral_params: list[Any] = [*terms, K1, 1 - B, B]
    parts: list[str] = []
    params: list[Any] = []
    for k, term in enumerate(terms):
        parts.append(f"%s * ((f.f{k} * %s) / (f.f{k} + f.norm))")
        params += [idf(total, docs[term]), K1 + 1.0]
    return " + ".join(parts), params, lateral, lateral_params


def postings_rank(terms: list[str], total: int, docs: dict[str, int], avgdl: str
                  ) -> tuple[str, list[Any], str, list[Any]]:
    """The SQL of the ``decision_postings`` rows (alias ``p``) of ``terms``, joined to their IDF
    (alias ``q``, ``q.k`` their order from 1), and a BM25 part per row (``part``) with the mean
    length ``avgdl``; :func:`postings_score` adds a decision's parts into its score. Returns the
    FROM clause's SQL and its parameters, then the part's SQL and its parameters."""
    weights = [idf(total, docs[term]) for term in terms]
    source = ("decision_postings p JOIN unnest(%s::text[], %s::float8[]) WITH ORDINALITY "
              "AS q (term, idf, k) ON p.term = q.term")
    part = f"q.idf * ((p.f * %s) / (p.f + %s * (%s + %s * p.words::float8 / {avgdl})))"
    return source, [list(terms), weights], part, [K1 + 1.0, K1, 1 - B, B]


def postings_score(count: int, part: str = "part", k: str = "k") -> str:
    """A decision's score from its rows' ``part`` (grouped by decision; ``k``: the term's order,
    1 to ``count``): each term's part on its own (a decision has one row per word), added in the
    terms' order, as the index's match adds them, so equal scores stay equal to the last bit.
    A hash aggregate needs no sort (an ordered ``sum(... ORDER BY k)`` sorted every decision's
    rows: 1.0 against 0.67 ms at 500 matches). The terms are counted up to a power of two (a
    missing term adds 0, exactly), so a few statements serve every query and each is prepared
    once on a connection."""
    width = 4
    while width < count:
        width *= 2
    return " + ".join(f"coalesce(sum({part}) FILTER (WHERE {k} = {n}), 0)"
                      for n in range(1, width + 1))
