"""What a folder listing prints: filtered by ``grep`` (``$(ls -a | grep '^.env$')``), or the
names ``ls -d`` is given (``$(ls -d .c*)``).

Imported by ``shell.analysis`` when a command substitution is ``ls [DIR] | grep PATTERN``: the
folder is listed (within the analysis's listing budget, only where the analysis may read files)
and the names the pattern keeps are the substitution's value, so the command that uses them is
decided by the files it will really get (``cat $(ls -a | grep '^.env$')`` reads ``.env``).
Anything else (a long listing, a pattern grep would read differently, no folder to read) is
known only at run time.
"""

from __future__ import annotations

from governance import system

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from governance.shell.parser import Simple
    from governance.shell.walk import Walk

_LS_FLAGS = frozenset("aA1ptrSUXv")      # options that keep one name per line (as piped)
_GREP_FLAGS = frozenset("EFGivxwP")


def names(an: Walk, ls: Simple, grep: Simple) -> str | None:
    """The names ``ls`` lists that ``grep`` keeps, one per line; None when not known here."""
    folder = an.folder()
    if folder is None or ls.redirs or grep.redirs:
        return None
    listing, _g, _r = an.expand_words(ls.words)
    filtering, _g2, _r2 = an.expand_words(grep.words)
    if None in listing or None in filtering or listing[0] != "ls" or \
            filtering[0] not in ("grep", "egrep", "fgrep"):
        return None
    options = "".join(str(w)[1:] for w in listing[1:] if str(w).startswith("-"))
    places = [str(w) for w in listing[1:] if not str(w).startswith("-")]
    flags = "".join(str(w)[1:] for w in filtering[1:] if str(w).startswith("-"))
    patterns = [str(w) for w in filtering[1:] if not str(w).startswith("-")]
    if not set(options) <= _LS_FLAGS or not set(flags) <= _GREP_FLAGS or len(places) > 1 \
            or len(patterns) != 1:
        return None
    where = system.join(folder, system.expanduser(places[0])) if places else folder
    try:
        entries = sorted(system.listdir(where))
    except OSError:
        return None
    if len(entries) > an.listed[0]:
        return None
    an.listed[0] -= len(entries)
    if "a" in options:
        entries = [".", "..", *entries]
    elif "A" not in options:
        entries = [e for e in entries if not e.startswith(".")]
    keep = _matcher(patterns[0], flags + ("E" if filtering[0] == "egrep" else "F"
                                          if filtering[0] == "fgrep" else ""))
    if keep is None:
        return None
    kept = [e for e in entries if keep(e) != ("v" in flags)]
    return "\n".join(kept)


def _matcher(pattern: str, flags: str) -> Callable[[str], bool] | None:
    """``grep``'s test of one line, as a function; None for a pattern read differently here."""
    import re

    if "F" in flags:
        needle = pattern.lower() if "i" in flags else pattern

        def fixed(line: str) -> bool:
            text = line.lower() if "i" in flags else line
            return text == needle if "x" in flags else needle in text
        return fixed
    if "P" not in flags and "E" not in flags and (     # a basic expression: ( ) | + ? are plain
            any(c in pattern for c in "+?|(){}") or "\\" in pattern.replace("\\.", "")):
        return None
    source = f"^(?:{pattern})$" if "x" in flags else (rf"\b(?:{pattern})\b" if "w" in flags
                                                     else pattern)
    try:
        compiled = re.compile(source, re.IGNORECASE if "i" in flags else 0)
    except re.error:
        return None
    return lambda line: compiled.search(line) is not None


def given(an: Walk, ls: Simple) -> str | None:
    """What ``ls -d PATTERN...`` prints: the names its patterns match now (``cd "$(ls -d
    .c*)"`` enters ``.claude``), one per line; None when not known here (no ``-d``: a folder's
    contents, which this does not read)."""
    folder = an.folder()
    if folder is None or ls.redirs:
        return None
    listing, _g, _r = an.expand_words(ls.words)
    if None in listing or listing[0] != "ls":
        return None
    options = "".join(str(w)[1:] for w in listing[1:] if str(w).startswith("-"))
    places = [str(w) for w in listing[1:] if not str(w).startswith("-")]
    if "d" not in options or not set(options) <= _LS_FLAGS | {"d"} or not places:
        return None
    from governance.shell.expansion import expand

    out: list[str] = []
    for place in places:
        if any(c in place for c in "*?["):
            found = expand(system.expanduser(place), folder, dots=place.startswith(".") or
                           "/." in place, budget=an.listed)
            if found is None:
                return None
            out += found
        elif system.lexists(system.join(folder, system.expanduser(place))):
            out.append(place)
    return "\n".join(sorted(out))
