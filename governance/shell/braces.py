"""Brace expansion as bash does it: ``{a,b}``, ``{1..3}``, ``{a..e..2}``, nested, in bash's order
(``.claude/{settings,other}.json`` is two words). At most ``MAX_WORDS`` words; a brace without its
closing brace, or one holding neither a comma nor a sequence, stays as written. Used by
``shell.expansion`` for targets and loop words. No imports.
"""

from __future__ import annotations

MAX_WORDS = 64
MAX_LENGTH = 512     # a longer word is not expanded (its text is checked as it stands)


def braces(word: str) -> list[str]:
    """The words a brace expansion yields (bash order), at most ``MAX_WORDS``; the word itself
    when it holds none."""
    if len(word) > MAX_LENGTH or word.count("{") > 32:
        return [word]
    out = _braces(word)
    return out[:MAX_WORDS] if out else [word]


def _braces(word: str) -> list[str]:
    start = word.find("{")
    while start >= 0:
        depth, k, commas = 0, start, []
        while k < len(word):
            c = word[k]
            if c == "\\":
                k += 2
                continue
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    break
            elif c == "," and depth == 1:
                commas.append(k)
            k += 1
        if k >= len(word):                 # no closing brace: this one is a literal
            start = word.find("{", start + 1)
            continue
        head, body, tail = word[:start], word[start + 1:k], word[k + 1:]
        items = _sequence(body) if not commas else [
            word[a + 1:b] for a, b in zip([start, *commas], [*commas, k], strict=True)]
        if items is None and ".." in _top(body) and _braces(body) != [body]:
            items = [body]                 # bash: {..{a,b}} is ..a ..b, the outer pair dropped
        if items is None:
            start = word.find("{", start + 1)
            continue
        out: list[str] = []
        for item in items:
            for rest in _braces(head + item + tail):
                out.append(rest)
                if len(out) >= MAX_WORDS:
                    return out
        return out
    return [word]


def _sequence(body: str) -> list[str] | None:
    """``1..3``, ``a..c`` (with an optional ``..STEP``), or None when it is not a sequence."""
    parts = body.split("..")
    if len(parts) not in (2, 3):
        return None
    first, last = parts[0], parts[1]
    step = abs(int(parts[2])) if len(parts) == 3 and parts[2].lstrip("-").isdigit() else 1
    step = step or 1
    if first.lstrip("-").isdigit() and last.lstrip("-").isdigit():
        a, b = int(first), int(last)
        span = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
        return [str(v) for v in list(span)[:MAX_WORDS]]
    if len(first) == 1 and len(last) == 1 and first.isalpha() and last.isalpha():
        a, b = ord(first), ord(last)
        span = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
        return [chr(v) for v in list(span)[:MAX_WORDS]]
    return None


def _top(body: str) -> str:
    """The text of a brace body outside the brace pairs nested in it."""
    out: list[str] = []
    depth = 0
    for c in body:
        depth += c == "{"
        if depth == 0:
            out.append(c)
        depth -= c == "}" and depth > 0
    return "".join(out)
