"""Shell-style wildcard matching with ``fnmatch.fnmatchcase`` semantics, without ``re``.

``fnmatch`` compiles every pattern to a regular expression, and importing ``re`` costs a hook
process more than everything else it does. Patterns here are short (tool names, paths), so a
direct matcher is both cheaper and exact: ``*`` matches any run of characters (``/`` included),
``?`` one character, ``[seq]`` / ``[!seq]`` a character in / not in ``seq`` (with ranges ``a-z``);
a ``[`` without its ``]`` is a literal, as in ``fnmatch``.
"""

from __future__ import annotations

_RANGE = None  # a hyphen that joins two chunks: a range operator where a character stands each side


def _chunks(stuff: str) -> list[str]:
    """Split a class body at its range hyphens and drop empty ranges (``z-a``), as ``fnmatch``
    does before it builds its regular expression."""
    if "-" not in stuff:
        return [stuff]
    chunks: list[str] = []
    start = 0
    k = 2 if stuff.startswith("!") else 1
    while (k := stuff.find("-", k)) >= 0:
        chunks.append(stuff[start:k])
        start = k + 1
        k += 3
    if stuff[start:]:
        chunks.append(stuff[start:])
    else:
        chunks[-1] += "-"
    for k in range(len(chunks) - 1, 0, -1):
        if chunks[k - 1][-1] > chunks[k][0]:
            chunks[k - 1] = chunks[k - 1][:-1] + chunks[k][1:]
            del chunks[k]
    return chunks


def _class_at(pattern: str, i: int) -> tuple[int, list[tuple[str, str]], bool] | None:
    """Parse ``[...]`` at ``pattern[i]``: (index after it, ranges, negated), or None if literal.

    The body is read as ``fnmatch`` reads it: split into chunks at range hyphens, empty ranges
    removed, then a leading ``!`` negates (even one that an empty range left in front) and a
    hyphen with no character on one side is a literal."""
    j = i + 1
    if j < len(pattern) and pattern[j] == "!":
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1  # a leading ] is literal
    while j < len(pattern) and pattern[j] != "]":
        j += 1
    if j >= len(pattern):
        return None
    tokens: list[str | None] = []
    for index, chunk in enumerate(_chunks(pattern[i + 1:j])):
        if index:
            tokens.append(_RANGE)
        tokens.extend(chunk)
    negated = bool(tokens) and tokens[0] == "!"
    if negated:
        del tokens[0]
    ranges: list[tuple[str, str]] = []
    k = 0
    while k < len(tokens):
        token = tokens[k]
        if (token is not None and k + 2 < len(tokens) and tokens[k + 1] is _RANGE
                and tokens[k + 2] is not None):
            ranges.append((token, str(tokens[k + 2])))
            k += 3
            continue
        char = "-" if token is None else token
        ranges.append((char, char))
        k += 1
    return j + 1, ranges, negated


def _one(pattern: str, p: int, ch: str) -> int:
    """Match one non-star pattern item at ``p`` against ``ch``: index after it, or -1."""
    item = pattern[p]
    if item == "?":
        return p + 1
    if item == "[":
        parsed = _class_at(pattern, p)
        if parsed is not None:
            after, ranges, negated = parsed
            inside = any(lo <= ch <= hi for lo, hi in ranges)
            return after if inside != negated else -1
    return p + 1 if item == ch else -1


def match(name: str, pattern: str) -> bool:
    """True when ``name`` matches ``pattern`` as ``fnmatch.fnmatchcase`` would decide."""
    if "*" not in pattern and "?" not in pattern and "[" not in pattern:
        return name == pattern
    n = p = 0
    star_p = -1
    star_n = 0
    while n < len(name):
        if p < len(pattern) and pattern[p] == "*":
            while p < len(pattern) and pattern[p] == "*":
                p += 1
            star_p, star_n = p, n
            continue
        nxt = _one(pattern, p, name[n]) if p < len(pattern) else -1
        if nxt >= 0:
            p, n = nxt, n + 1
        elif star_p >= 0:
            star_n += 1
            p, n = star_p, star_n
        else:
            return False
    while p < len(pattern) and pattern[p] == "*":
        p += 1
    return p == len(pattern)
