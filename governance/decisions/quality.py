"""Quality of recorded decisions: every decision is recorded with tags and a pattern.

What the caller leaves out is derived, by default: tags from the category and the description's
salient terms, the pattern from the most similar confirmed decision (outcome ``success``) that
has one and is about the same thing. The answer's ``quality`` object says what was
derived and gives a hint. A deployment that wants the strict rule sets ``require_tags`` /
``require_pattern`` in guardrails.yaml; the call is then refused, naming the missing field.
"""

from __future__ import annotations

from typing import Any

from governance.decisions.fields import DecisionInputError
from governance.decisions.search_text import decision_text, query_terms, words
from governance.decisions.store import DecisionStore

MAX_DERIVED_TERMS = 3
# A term held by more than this share of a store of at least COMMON_MIN decisions says too little
# to be a tag.
COMMON_SHARE = 0.2
COMMON_MIN = 50
# A confirmed decision lends its pattern when it holds at least this share of the action's salient
# terms (and at least two of them, or the only one), or when ranking scored it this similar.
PATTERN_SHARE = 0.4
PATTERN_SIMILARITY = 0.5
# Words that say what kind of change, not what it is about: never a tag on their own.
GENERIC = frozenset((
    "add", "adopt", "all", "also", "change", "choose", "chose", "create", "decide", "implement",
    "instead", "introduce", "make", "move", "new", "old", "per", "refactor", "remove", "replace",
    "switch", "update", "via", "when", "which", "while"))


def salient_terms(description: str) -> list[str]:
    """The terms of ``description`` that say what it is about, in the order written: no stop
    words, no generic verbs, no numbers, at least three characters."""
    return [t for t in query_terms(description)
            if len(t) >= 3 and not t.isdigit() and t not in GENERIC]


def derived_tags(category: str, description: str, store: DecisionStore | None,
                 limit: int = MAX_DERIVED_TERMS) -> list[str]:
    """The category and up to ``limit`` salient terms of the description (leaving out terms most
    of a large store holds)."""
    terms = salient_terms(description)
    if store is not None and terms:
        total, docs = store.doc_counts(terms)
        if total >= COMMON_MIN:
            terms = [t for t in terms if docs[t] <= COMMON_SHARE * total]
    return sorted(dict.fromkeys([category, *terms[:limit]]))


def pattern_source(description: str, candidates: list[dict[str, Any]]
                   ) -> dict[str, Any] | None:
    """The most similar confirmed decision (outcome ``success``) with a pattern among
    ``candidates`` (best first), when it is about the same thing as ``description``."""
    terms = set(salient_terms(description))
    for item in candidates:
        if item.get("outcome") != "success" or not item.get("pattern"):
            continue
        common = len(terms & words(decision_text(item))) if terms else 0
        if (terms and common >= min(2, len(terms)) and common / len(terms) >= PATTERN_SHARE) \
                or float(item.get("similarity") or 0.0) >= PATTERN_SIMILARITY:
            return item
    return None


def _refuse(key: str, what: str, example: str, setting: str) -> DecisionInputError:
    return DecisionInputError(
        f"{what} is required to record a decision (quality rule: {setting} is true).", key=key,
        fix=f"send {key}, e.g. {example}, or set {setting}: false in guardrails.yaml settings "
            f"to have it derived.")


def complete(action: dict[str, Any], settings: dict[str, Any], store: DecisionStore | None,
             candidates: list[dict[str, Any]] | None = None, key: str | None = "action"
             ) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the action with its tags and pattern filled, the ``quality`` report). Raises
    :class:`DecisionInputError` naming the missing field when the strict rule is on.
    ``candidates`` are the decisions most similar to the action (best first), when known."""
    where = f"{key}." if key else ""
    strict_tags = bool(settings.get("require_tags"))
    strict_pattern = bool(settings.get("require_pattern"))
    if strict_tags and not action["tags"]:
        raise _refuse(f"{where}tags", "at least one tag", "[\"database\", \"migration\"]",
                      "require_tags")
    if strict_pattern and not action["pattern"]:
        raise _refuse(f"{where}pattern", "a pattern", "\"expand-contract migration\"",
                      "require_pattern")
    filled = dict(action)
    derived: dict[str, Any] = {}
    source_id: str | None = None
    if not filled["tags"]:
        filled["tags"] = derived_tags(filled["category"], filled["description"], store)
        derived["tags"] = filled["tags"]
    if not filled["pattern"]:
        if candidates is None and store is not None:
            candidates = store.query(filled["description"], limit=10)
        source = pattern_source(filled["description"], candidates or [])
        if source is not None:
            filled["pattern"] = source["pattern"]
            derived["pattern"] = source["pattern"]
            source_id = str(source["id"])
    hints = []
    if "tags" in derived:
        hints.append("tags were derived from the category and the description; send `tags` to "
                     "choose them")
    if "pattern" in derived:
        hints.append(f"the pattern was taken from the similar confirmed decision {source_id}; "
                     f"send `pattern` if this decision follows another approach")
    elif not filled["pattern"]:
        hints.append("no pattern was given and no similar confirmed decision has one; send "
                     "`pattern` (the reusable approach, e.g. 'expand-contract migration') so later "
                     "decisions can learn from this one")
    report = {"rule": "strict" if strict_tags or strict_pattern else "derive",
              "derived": derived, "pattern_from": source_id,
              "missing": [] if filled["pattern"] else ["pattern"],
              "hint": ("; ".join(hints) + ".") if hints else None}
    return filled, report
