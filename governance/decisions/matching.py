"""What a keyword query of the decision memory matches on, and how alike a hit is to it, on every
engine: the terms a match scores (the rarest, within a budget, so a query's work is bounded
whatever the store's size) and the ``similarity`` of a hit (0..1: the IDF-weighted share of the
query's terms the decision holds, 1 when it holds every term; rare terms weigh more than common
ones). :class:`governance.decisions.store.DecisionStore` asks the engine for the matches.
"""

from __future__ import annotations

import math

from governance.storage.text import tokens

COMMON_SHARE = 0.05  # a term in more than 5% of the decisions ...
COMMON_MIN = 500  # ... and in more than 500 of them is too common to drive a match
MATCH_BUDGET = 1500   # a match scores at most about this many decisions: the rarest terms first
RECENT_WINDOW = 20000  # a store larger than this, whose rarest query term is over the budget,
RECENT_TERMS = 3       # is matched on its rarest few terms, newest first, to
RECENT_BUDGET = 500    # this many matches
FILTERED_WIDTH = 20    # with filters, the index's best limit x this are joined and filtered


def match_terms(present: list[str], docs: dict[str, int], total: int) -> tuple[list[str], bool]:
    """The terms a query matches on, and whether only the newest decisions are matched.

    Rarest first, a term is taken while the decisions the match would score stay within
    :data:`MATCH_BUDGET` (the rarest always); a term in more than :data:`COMMON_SHARE` of a large
    store is never taken (it still counts in ``similarity``). When even the rarest term is held
    by more than the budget in a store over :data:`RECENT_WINDOW`, the match takes the
    :data:`RECENT_TERMS` rarest terms among the newest :data:`RECENT_WINDOW` decisions and scores
    at most its newest :data:`RECENT_BUDGET` matches (the full-text index hands them over newest
    first and stops there: no guess of how a term's decisions spread over time, which a burst of
    alike decisions defeats). So the work of a query (the index scores each matched decision) is
    bounded whatever the store's size."""
    cutoff = max(COMMON_MIN, COMMON_SHARE * total)
    rarest = sorted(present, key=lambda term: (docs[term], term))
    if docs[rarest[0]] > MATCH_BUDGET and total > RECENT_WINDOW:
        taken = [term for term in rarest if docs[term] <= cutoff][:RECENT_TERMS]
        return [t for t in present if t in taken] or rarest[:1], True
    chosen: list[str] = []
    spent = 0
    for term in rarest:
        if docs[term] > cutoff or (chosen and spent + docs[term] > MATCH_BUDGET):
            break
        chosen.append(term)
        spent += docs[term]
    return [t for t in present if t in chosen] or rarest[:1], False


class Similarity:
    """A hit's ``similarity`` to a query whose terms ``docs`` of ``total`` decisions hold."""

    def __init__(self, total: int, docs: dict[str, int]) -> None:
        # an always-positive IDF per query term: log(1 + (N - n + 0.5) / (n + 0.5))
        self.weights = {term: math.log(1 + (total - count + 0.5) / (count + 0.5))
                        for term, count in docs.items()}
        self.ideal = sum(self.weights.values()) or 1.0

    def __call__(self, text: str) -> float:
        """The similarity of a decision whose searchable text is ``text``."""
        held = set(tokens(text))   # no query term is a stop word
        covered = sum(weight for term, weight in self.weights.items() if term in held)
        return round(covered / self.ideal, 3)
