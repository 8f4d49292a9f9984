"""An intent's owned scope: gitignore-style globs over paths relative to the project root.

Hot path: no imports. The rules are gitignore's, for files:

- ``*`` matches any run of characters except ``/``, ``?`` one character except ``/``, ``[abc]`` and
  ``[!abc]`` / ``[^abc]`` a character class (ranges ``a-z``); ``\\`` makes the next character
  literal.
- ``**`` as a whole path component matches any number of components: ``**/x`` anywhere, ``a/**``
  everything under ``a``, ``a/**/b`` with zero or more folders between.
- A pattern without a ``/`` (other than a trailing one) matches the file or any folder above it by
  name, at any depth (``*.py``, ``build``). A pattern with a ``/`` is anchored at the project root
  (a leading ``/`` is dropped). A trailing ``/`` matches folders only: the file must be inside.
- Patterns apply in order; a later ``!pattern`` takes back what earlier ones matched.

A path outside the project (``..`` after normalising) is never in scope.
"""

from __future__ import annotations


def in_scope(path: str, patterns: list[str]) -> bool:
    """Whether ``path`` (relative to the project root, ``/``-separated, normalised) is owned."""
    if not path or path == "." or path.startswith("../") or path == ".." or path.startswith("/"):
        return False
    owned = False
    for raw in patterns:
        negated = raw.startswith("!")
        pattern = raw[1:] if negated else raw
        if pattern.startswith("\\!") or pattern.startswith("\\#"):
            pattern = pattern[1:]
        if not pattern or owned != negated:
            continue      # only a pattern that would change the answer is worth trying
        if matches(path, pattern):
            owned = not negated
    return owned


def matches(path: str, pattern: str) -> bool:
    """Whether one gitignore pattern matches the file ``path`` (or a folder above it)."""
    folder_only = pattern.endswith("/")
    pattern = pattern.rstrip("/")
    if not pattern:
        return False
    parts = path.split("/")
    if "/" not in pattern:
        # by name, at any depth: the file itself, or any folder on its way
        names = parts[:-1] if folder_only else parts
        return any(_component(name, pattern) for name in names)
    wanted = pattern.lstrip("/").split("/")
    # the pattern names the file, or a folder above it (then everything below is inside)
    for end in range(1, len(parts) + 1):
        if folder_only and end == len(parts):
            break
        if _components(parts[:end], wanted):
            return True
    return False


def _components(parts: list[str], wanted: list[str]) -> bool:
    if not wanted:
        return not parts
    head = wanted[0]
    if head == "**":
        rest = wanted[1:]
        if not rest:
            return bool(parts)        # a/** is everything inside a, not a itself
        return any(_components(parts[k:], rest) for k in range(len(parts) + 1))
    return bool(parts) and _component(parts[0], head) and _components(parts[1:], wanted[1:])


def _component(name: str, pattern: str) -> bool:
    """fnmatch within one path component (no ``/`` in either)."""
    return _match(name, 0, pattern, 0)


def _match(name: str, n: int, pattern: str, p: int) -> bool:
    while p < len(pattern):
        c = pattern[p]
        if c == "*":
            while p < len(pattern) and pattern[p] == "*":
                p += 1
            if p == len(pattern):
                return True
            return any(_match(name, k, pattern, p) for k in range(n, len(name) + 1))
        if n >= len(name):
            return False
        if c == "?":
            n += 1
            p += 1
            continue
        if c == "[":
            end, ok = _class(pattern, p, name[n])
            if end is None:           # no closing ]: a literal [
                if name[n] != "[":
                    return False
                n += 1
                p += 1
                continue
            if not ok:
                return False
            n += 1
            p = end
            continue
        if c == "\\" and p + 1 < len(pattern):
            p += 1
            c = pattern[p]
        if name[n] != c:
            return False
        n += 1
        p += 1
    return n == len(name)


def _class(pattern: str, p: int, char: str) -> tuple[int | None, bool]:
    """A ``[...]`` class at ``pattern[p]``: (index after it, whether ``char`` is in it)."""
    i = p + 1
    negate = i < len(pattern) and pattern[i] in "!^"
    if negate:
        i += 1
    start = i
    found = False
    while i < len(pattern) and (pattern[i] != "]" or i == start):
        low = pattern[i]
        if i + 2 < len(pattern) and pattern[i + 1] == "-" and pattern[i + 2] != "]":
            if low <= char <= pattern[i + 2]:
                found = True
            i += 3
        else:
            if char == low:
                found = True
            i += 1
    if i >= len(pattern):
        return None, False
    return i + 1, found != negate
