"""Pathname expansion: what a glob or brace word names in the real tree (``rm .cl*/gov*/state.json``,
``cat x > .claude/*/state.json``, ``rm .claude/{settings,other}.json``).

Bash expands braces first (``{a,b}``, ``{1..3}``, nested), then each word's glob segments
(``*``, ``?``, ``[...]``) against the folders on disk, from the command's folder. Here a word is
expanded the same way, bounded (``MAX_WORDS`` brace words, ``MAX_ENTRIES`` folder entries read
by the whole analysis),
and each path it names is checked as a target. A leading ``.`` is matched only by a literal ``.``
unless the command turns on ``dotglob`` or sets ``GLOBIGNORE``, as in bash.

What cannot be expanded (no folder to read: the analysis alone, or after a ``cd`` known only at
run time; a limit reached) is still compared, as text, with the protected places the matrix names
by path (``protected_probes`` with a ``/``): a pattern that could name one of them, or a file
inside one, is protected. Imported by ``shell.analysis`` only for a target holding a pattern.
No ``glob``, ``fnmatch`` or ``re``.
"""

from __future__ import annotations

from governance import system
from governance.shell.braces import MAX_WORDS, braces

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

    from governance.shell.walk import Walk

MAX_ENTRIES = 4000
GLOB = "*?["


def match(pattern: str, name: str, dots: bool = False) -> bool:
    """Whether one path segment ``name`` matches the glob segment ``pattern``."""
    if name[:1] == "." and pattern[:1] != "." and not dots:
        return False
    return _match(pattern, 0, name, 0)


def _match(p: str, i: int, s: str, j: int) -> bool:
    """Glob matching by the usual two-pointer walk: on a mismatch, return to the last ``*`` and
    let it take one more character (time linear in each string's length, not exponential)."""
    star_i, star_j = -1, 0
    while j < len(s):
        step = _step(p, i, s[j]) if i < len(p) and p[i] != "*" else 0
        if step:
            i, j = i + step, j + 1
        elif i < len(p) and p[i] == "*":
            star_i, star_j = i, j
            i += 1
        elif star_i >= 0:
            star_j += 1
            i, j = star_i + 1, star_j
        else:
            return False
    while i < len(p) and p[i] == "*":
        i += 1
    return i == len(p)


def _step(p: str, i: int, char: str) -> int:
    """How many pattern characters at ``p[i]`` match ``char`` (0: none do)."""
    c = p[i]
    if c == "?":
        return 1
    if c == "[":
        end = p.find("]", i + 2)
        if end > 0:
            body = p[i + 1:end]
            negate = body[:1] in ("!", "^")
            return end + 1 - i if _in_class(body[1:] if negate else body, char) != negate else 0
    if c == "\\" and i + 1 < len(p):
        return 2 if p[i + 1] == char else 0
    return 1 if c == char else 0


def _in_class(body: str, char: str) -> bool:
    k = 0
    while k < len(body):
        if k + 2 < len(body) and body[k + 1] == "-":
            if body[k] <= char <= body[k + 2]:
                return True
            k += 3
            continue
        if body[k] == char:
            return True
        k += 1
    return False


def expand(pattern: str, folder: str, dots: bool = False,
           budget: list[int] | None = None) -> list[str] | None:
    """The paths (spelled as the pattern spells them) that a glob names below ``folder``, the
    folder a relative pattern is read from; None when a limit is reached (``budget``: folder
    entries the whole analysis may still read)."""
    absolute = pattern.startswith("/")
    segments = [s for s in pattern.split("/") if s]
    start = "/" if absolute else folder
    if budget is None:
        budget = [MAX_ENTRIES]
    if budget[0] <= 0:
        return None
    found: list[str] = []
    for path in _walk(start, "/" if absolute else "", segments, dots, budget):
        found.append(path)
        if len(found) >= MAX_WORDS:
            return None
    return None if budget[0] <= 0 else found


def _walk(real: str, spelled: str, segments: list[str], dots: bool,
          budget: list[int]) -> Iterator[str]:
    if not segments:
        yield spelled or "."
        return
    head, rest = segments[0], segments[1:]
    joined = spelled + head if not spelled or spelled.endswith("/") else spelled + "/" + head
    if not any(c in head for c in GLOB):
        if rest and not system.isdir(system.join(real, head)):
            return
        if not rest and not system.lexists(system.join(real, head)):
            return
        yield from _walk(system.join(real, head), joined, rest, dots, budget)
        return
    try:
        names = sorted(system.listdir(real))
    except OSError:
        return
    budget[0] -= len(names)
    if budget[0] <= 0:
        return
    for name in names:
        if match(head, name, dots):
            path = spelled + name if not spelled or spelled.endswith("/") else \
                spelled + "/" + name
            yield from _walk(system.join(real, name), path, rest, dots, budget)


def could_name(pattern: str, place: str) -> bool:
    """Whether a glob (a normalised path) could name ``place`` or a path inside it: its first
    segments match all of the place's."""
    segments = [s for s in pattern.split("/") if s and s != "."]
    wanted = [s for s in place.split("/") if s]
    if len(segments) < len(wanted):
        return False
    return all(match(p, w, True) for p, w in zip(segments, wanted, strict=False))


def named(an: Walk, value: str) -> list[str] | None:
    """The paths a word with braces or globs names, read from the tree; None when it cannot be
    read (then ``unreadable`` decides). A glob that matches nothing stays as written, as in bash."""
    words = _words(an, value)
    folder = _folder(an)
    text = getattr(an, "text", "")
    dots = "dotglob" in text or "GLOBIGNORE" in text
    out: list[str] = []
    for word in words:
        if not any(c in word for c in GLOB):
            out.append(word)
            continue
        if folder is None:
            return None
        paths = expand(system.expanduser(word), folder, dots, an.listed)
        if paths is None:
            return None
        out.extend(paths or [word])
    return out


def pattern_protected(an: Walk, value: str) -> bool | None:
    """Whether a word with braces or globs names a protected path (module docstring); None when
    it is no pattern (``a{b``), to be checked as a path."""
    words = _words(an, value)
    if ("," in value or ".." in value) and any(
            _leftover(an, w) for w in words if "{" in w or "}" in w):
        return True
    if words == [value] and not any(c in value for c in GLOB):
        return None
    an.listed[0] -= len(words)             # each word read costs one entry of the budget
    paths = named(an, value) if an.listed[0] > 0 else None
    if paths is None:
        return any(_unreadable(an, word) for word in words)
    return any(an.protected(p, p) for p in paths if _plain(p))


def pattern_holds(an: Walk, value: str, direct: bool) -> bool:
    """Whether a folder pattern (``rm -r .cl*``) names a folder that holds a protected path."""
    words = _words(an, value)
    an.listed[0] -= len(words)
    paths = named(an, value) if an.listed[0] > 0 else None
    if paths is None:
        return any(_unreadable(an, word) for word in words)
    holds = getattr(an, "holds_protected", None)
    return holds is not None and any(holds(p, direct) for p in paths if _plain(p))


def _words(an: Walk, value: str) -> list[str]:
    """``braces(value)``, while the analysis's budget lasts (then the word as written, whose
    text is checked as it stands)."""
    if "{" not in value or an.listed[0] <= 0:
        return [value]
    words = _BRACED.get(value)
    if words is None:
        if len(_BRACED) > 256:
            _BRACED.clear()
        words = _BRACED[value] = braces(value)
    return words


_BRACED: dict[str, list[str]] = {}     # a pure function's results, for a word checked again


def _unreadable(an: Walk, word: str) -> bool:
    """``unreadable``, remembered for the analysis (a command may repeat a pattern)."""
    key = "\0" + word                      # beside the paths the analysis has checked
    known = an.checked.get(key)
    if known is None:
        if an.listed[0] < -MAX_ENTRIES:     # far past the budget: the markers alone
            lowered = word.lower()
            return any(m in lowered for m in an.shell.get("protected_markers", ()))
        an.listed[0] -= 1
        known = an.checked[key] = unreadable(an, word)
    return known


def unreadable(an: Walk, word: str) -> bool:
    """A pattern whose folder cannot be read: protected when its text could name a protected
    place (``protected_markers``, or the ``protected_probes`` spelled as paths)."""
    lowered = word.lower()
    if any(m in lowered for m in an.shell.get("protected_markers", ())):
        return True
    if not any(c in word for c in GLOB):
        return False
    cwd = an.cwd or ""
    path = system.normpath(system.join(cwd, word)) if not system.isabs(word) else word
    return any(could_name(path, probe) for probe in an.shell.get("protected_probes", ())
               if "/" in probe)


def _leftover(an: Walk, word: str) -> bool:
    """A word that still holds braces after ``braces`` (bash reads some odd spellings otherwise:
    ``a{}x.,}`` is ``a}x.`` and ``a``): protected when its text could name a protected path, or
    a path made of it without the braces (whole, or split at its commas) is one."""
    bare = word.replace("{", "").replace("}", "")
    return unreadable(an, word) or any(
        an.protected(c, c) for c in {bare.replace(",", ""), *bare.split(",")} if c and _plain(c))


def _folder(an: Walk) -> str | None:
    if an.root is None or an.cwd is None:
        return None
    return system.normpath(system.join(an.root, system.expanduser(an.cwd)))


def _plain(path: str) -> bool:
    return "{" not in path and not any(c in path for c in GLOB)



# run-time parts whose text holds no "/": they cannot move a path to another folder
_SLASHLESS_VARIABLES = ("$$", "$RANDOM", "$SECONDS", "$EPOCHSECONDS", "$BASHPID", "$PPID", "$UID")
_SLASHED_DATES = ("%D", "%x", "%c", "%r", "%+")


def slashless_glob(raw: str) -> str | None:
    """A word whose run-time parts print no ``/`` (``$(date +%F)``, ``$((n+1))``, ``$$``,
    ``${#x}``) as a glob, each such part a ``*``: ``docs/notes-$(date +%F).md`` ->
    ``docs/notes-*.md``. None when a part could hold anything, or the word is quoted oddly."""
    if "'" in raw or "`" in raw or "\\" in raw or any(c in raw for c in GLOB):
        return None
    text = raw.replace('"', "")
    out: list[str] = []
    k = 0
    while k < len(text):
        if text[k] != "$":
            out.append(text[k])
            k += 1
            continue
        rest = text[k:]
        if rest.startswith("$(("):
            end = rest.find("))")
            if end < 0 or "$(" in rest[3:end]:
                return None
            k += end + 2
        elif rest.startswith("$("):
            end = rest.find(")")
            inner = rest[2:end].split() if end > 0 else []
            if len(inner) != 2 or inner[0] != "date" or not inner[1].startswith("+") or \
                    "/" in inner[1] or any(d in inner[1] for d in _SLASHED_DATES) or \
                    "$" in inner[1]:
                return None           # only date with a format that prints no "/"
            k += end + 1
        elif rest.startswith("${#"):
            end = rest.find("}")
            if end < 0:
                return None
            k += end + 1
        else:
            name = next((v for v in _SLASHLESS_VARIABLES if rest.startswith(v) and not (
                rest[len(v):len(v) + 1].isalnum() or rest[len(v):len(v) + 1] == "_")), None)
            if name is None:
                return None
            k += len(name)
        out.append("*")
    return "".join(out)


def runtime_protected(an: Walk, raw: str) -> bool | None:
    """Whether a word known only at run time, whose run-time parts print no ``/``, could name a
    protected path: its folder is (or is in) a protected place, an existing protected file
    matches it, it could name a protected probe, or its name could be a marker's file
    (``activity_matrix.yaml``). None when its run-time parts could hold anything."""
    glob = slashless_glob(raw)
    if glob is None:
        return None
    folder, _, name = glob.rpartition("/")
    if "*" in folder:
        return None
    markers = an.shell.get("protected_markers", ())
    cwd = an.cwd or ""
    path = system.normpath(system.join(cwd, glob)) if not system.isabs(glob) else glob
    inside = "/" + path.rpartition("/")[0].lower() + "/"
    if any(m in inside or m in (folder + "/").lower() for m in markers if "/" in m):
        return True                             # .claude/$(date +%F).json: a protected folder
    if any(could_name(path, probe) for probe in an.shell.get("protected_probes", ())
           if "/" in probe):
        return True
    from governance.shell.rules import glob_match

    if any(glob_match(name.lower(), m + ext) for m in markers if "/" not in m
           for ext in (".yaml", ".yml", ".json", "")):
        return True
    found = pattern_protected(an, glob)
    return bool(found)
