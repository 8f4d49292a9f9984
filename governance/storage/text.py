"""The words a search index holds: letters and digits, lower case, split as SQLite FTS5's unicode61
tokenizer splits them (underscores and punctuation separate). Both engines index these words, and
the decision store counts them, so a query means the same on either."""

from __future__ import annotations

import re

TOKEN = re.compile(r"[^\W_]+")


def tokens(text: str) -> list[str]:
    """Every word of ``text`` in order, lower case (stop words included)."""
    return TOKEN.findall(text.lower())
