"""The values of bash's parameter expansions beyond ``$NAME`` when the variables they read are
known: an array's element (``${a[1]}``), an indirect name (``${!ref}``), case changes
(``${p,,}``, ``${p^^}``), replacement (``${p/_/a}``, ``${p//x/y}``), removed prefixes and
suffixes (``${p#*/}``, ``${p%.bak}``), defaults (``${p:-.claude}``), substrings
(``${p:1:3}``) and lengths (``${#p}``). Anything else, or a variable known only at run time,
is None: the word stays a value known only at run time.

Imported by ``shell.analysis`` for a ``${...}`` it cannot read as a plain variable. No imports at
load time (``fnmatch`` only for a pattern with a glob).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_GLOB = "*?["


def value(text: str, variables: dict[str, str | None],
          environment: Callable[[str], str | None] | None = None) -> str | None:
    """What ``${TEXT}`` expands to, given the known ``variables`` (arrays: elements joined by
    single spaces, as the analysis keeps them) and, for a name the command does not set, the
    ``environment`` the command inherits (None: it is not set there); None when it is not
    known."""
    if text.startswith("#") and len(text) > 1 and _is_name(text[1:]):
        known = variables.get(text[1:])
        return None if known is None else str(len(known))
    if text.startswith("!"):
        name = text[1:]
        if not _is_name(name):
            return None
        target = variables.get(name)
        return variables.get(target) if target is not None and _is_name(target) else None
    k = 0
    while k < len(text) and text[k] in _NAME_CHARS:
        k += 1
    name, rest = text[:k], text[k:]
    if not name:
        return None
    if rest.startswith("["):                   # ${a[1]}: one element
        end = rest.find("]")
        index = rest[1:end] if end > 0 else ""
        if not index.isdigit() or end < 0:
            return None
        whole = variables.get(name)
        if whole is None:
            return None
        items = whole.split(" ")
        picked = items[int(index)] if int(index) < len(items) else ""
        return _operate(picked, rest[end + 1:], variables)
    if name not in variables and environment is not None and (
            rest[:2] in (":-", ":=") or rest[:1] in ("-", "=")):
        inherited = environment(name)
        if inherited is None:                  # ${X:-.claude} where X is set nowhere
            word = rest[2:] if rest[:1] == ":" else rest[1:]
            return word if "$" not in word and "`" not in word else None
        return _operate(inherited, rest, {name: inherited})
    return _operate(variables.get(name), rest, variables, name in variables)


def _operate(known: str | None, op: str, variables: dict[str, str | None],
             defined: bool = True) -> str | None:
    if op == "":
        return known
    if op[:2] in (":-", ":=") or op[:1] in ("-", "="):
        colon = op[:1] == ":"
        word = op[2:] if colon else op[1:]
        if not defined or known is None:       # set in the environment, or at run time
            return None
        if known == "" and colon:
            return word if "$" not in word and "`" not in word else None
        return known
    if op[:2] == ":+" or op[:1] == "+":
        return None
    if known is None:
        return None
    if op in (",,", "^^", ",", "^", "~~", "~") or op in ("@U", "@L", "@u"):
        if op in (",,", "@L"):
            return known.lower()
        if op in ("^^", "@U"):
            return known.upper()
        if op in (",",):
            return known[:1].lower() + known[1:]
        if op in ("^", "@u"):
            return known[:1].upper() + known[1:]
        return known.swapcase() if op == "~~" else known[:1].swapcase() + known[1:]
    if op.startswith("/"):
        return _replace(known, op[1:])
    if op[:2] in ("##", "%%") or op[:1] in ("#", "%"):
        longest = op[:2] in ("##", "%%")
        pattern = op[2:] if longest else op[1:]
        return _strip(known, pattern, op[0] == "#", longest)
    if op.startswith(":") and op[1:2] not in ("-", "=", "+", "?"):
        parts = op[1:].split(":")
        try:
            start = int(parts[0].strip() or "0")
            length = int(parts[1]) if len(parts) > 1 else None
        except ValueError:
            return None
        if start < 0:
            start = max(0, len(known) + start)
        if length is None:
            return known[start:]
        return known[start:start + length] if length >= 0 else known[start:len(known) + length]
    return None


def _replace(known: str, spec: str) -> str | None:
    every = spec.startswith("/")
    anchored = spec[:1] if spec[:1] in "#%" else ""
    if every or anchored:
        spec = spec[1:]
    pattern, _, replacement = spec.partition("/")
    if any(c in replacement or c in pattern for c in "$`") or not pattern:
        return None
    if any(c in pattern for c in _GLOB):
        return None if not anchored else (
            _strip_replace(known, pattern, replacement, anchored == "#"))
    if anchored == "#":
        return replacement + known[len(pattern):] if known.startswith(pattern) else known
    if anchored == "%":
        return known[:-len(pattern)] + replacement if known.endswith(pattern) else known
    return known.replace(pattern, replacement) if every else known.replace(pattern,
                                                                           replacement, 1)


def _strip_replace(known: str, pattern: str, replacement: str, front: bool) -> str | None:
    stripped = _strip(known, pattern, front, True)
    if stripped is None or stripped == known:
        return stripped
    return replacement + stripped if front else stripped + replacement


def _strip(known: str, pattern: str, front: bool, longest: bool) -> str | None:
    """``${p#PAT}``, ``${p##PAT}``, ``${p%PAT}``, ``${p%%PAT}``."""
    if "$" in pattern or "`" in pattern:
        return None
    if not any(c in pattern for c in _GLOB):
        if front:
            return known[len(pattern):] if known.startswith(pattern) else known
        return known[:-len(pattern)] if pattern and known.endswith(pattern) else known
    from fnmatch import fnmatchcase

    cuts = range(len(known), -1, -1) if longest else range(len(known) + 1)
    for cut in cuts:
        if front and fnmatchcase(known[:cut], pattern):
            return known[cut:]
        if not front and fnmatchcase(known[len(known) - cut:], pattern):
            return known[:len(known) - cut]
    return known


def name_of(text: str) -> str:
    """The variable a ``${...}`` reads (``!ref``, ``#p``, ``a[1]``, ``p:-d`` ...)."""
    text = text.lstrip("!#")
    k = 0
    while k < len(text) and text[k] in _NAME_CHARS:
        k += 1
    return text[:k]


def _is_name(text: str) -> bool:
    return bool(text) and not text[0].isdigit() and all(c in _NAME_CHARS for c in text)
