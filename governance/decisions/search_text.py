"""Searchable text: the words of a decision and of a query, split as FTS5's unicode61 tokenizer
splits them (letters and digits; underscores and punctuation separate), lower case, without stop
words."""

from __future__ import annotations

from typing import Any

from governance.storage.text import tokens

STOPWORDS = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "could", "do", "does", "for", "from",
    "has", "have", "in", "into", "is", "it", "its", "of", "on", "or", "our", "should", "that",
    "the", "this", "to", "use", "using", "was", "we", "were", "will", "with", "would"))


def words(text: str) -> set[str]:
    """The distinct searchable words of ``text`` (lower case, no stop words)."""
    return {token for token in tokens(text) if token not in STOPWORDS}


def query_terms(text: str) -> list[str]:
    """Lower-case word tokens as FTS5's unicode61 tokenizer splits them, minus stop words."""
    seen: dict[str, None] = {}
    for token in tokens(text):
        if token not in STOPWORDS and len(seen) < 32:
            seen.setdefault(token)
    return list(seen)


def decision_text(item: dict[str, Any]) -> str:
    """The searchable text of a decision: description, pattern, tags and reasons."""
    return " ".join([item["description"], item["pattern"], *item["tags"],
                     *(reason["text"] for reason in item["reasons"])])
