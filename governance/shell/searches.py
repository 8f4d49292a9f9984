"""Searches: the governance files a search may list, when its output is the list of files a
command writes or deletes.

``grep -rl PreToolUse . | xargs sed -i s/PreToolUse/X/``, ``rm -f $(grep -rl hooks .)`` and
``find . -name settings.json | xargs rm -f`` write or delete files known only at run time: the
ones the search prints. Its folders are known, and so are the governance files below them
(``PathGuard.protected_files``); each is put through what the search selects by, as far as it can
be read now:

- ``grep``/``egrep``/``fgrep``/``rg`` with ``-l``/``--files-with-matches`` (``-L``: those without):
  the file's text against the pattern (``-F`` literal, ``-i`` any case, else a regular expression;
  one that does not compile selects every file);
- ``find`` with ``-name``/``-iname`` tests joined by nothing but ``-a`` and ``-type``: the file's
  name against each pattern; any other expression selects every file;
- ``fd``/``fdfind PATTERN``: the name against the pattern, a regular expression;
- ``rg`` and ``fd`` pass over dot folders (``.claude``) unless told otherwise (``--hidden``,
  ``-uu``), as they do;
- ``rg --files``, ``git ls-files``: every file of their folders; ``ls``: the names in its
  folders (below them with ``-R``), dot names only with ``-a``/``-A``.

A search piped through ``sort``, ``uniq``, ``head``, ``tail``, ``tac``, ``cat`` or ``tr`` lists what
it lists. The first governance file a search may list is returned; the write or delete of it is
``governance-admin``.

Cold path: loaded only for a write or delete whose target is known only at run time.
"""

from __future__ import annotations

import fnmatch
import os
import re

from governance.shell.trees import find_roots

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from governance.shell.parser import Simple
    from governance.shell.walk import Walk

_FILTERS = ("sort", "uniq", "head", "tail", "tac", "cat", "tr")
_GREPS = ("grep", "egrep", "fgrep", "rg")
_GREP_VALUES = ("-e", "-f", "-m", "-A", "-B", "-C", "--include", "--exclude", "--exclude-dir",
                "-g", "--glob", "-t", "--type", "-T", "--type-not", "--max-count", "-d", "-D",
                "--directories", "--devices", "--color", "--colour", "--regexp", "--file")
_FD_VALUES = ("-e", "--extension", "-t", "--type", "-E", "--exclude", "-d", "--max-depth",
              "--min-depth", "--exact-depth", "-S", "--size", "--changed-within",
              "--changed-before", "-c", "--color", "-j", "--threads", "--max-results",
              "--base-directory", "--search-path", "--path-separator", "-o", "--owner",
              "--ignore-file", "--format")
_MAX_HOPS = 8
_MAX_READ = 1 << 20


def listed_governance(an: Walk, text: str) -> str | None:
    """The first governance file the command line ``text`` (its last command's output) may
    list, or None (see the module docstring)."""
    from governance.shell.parser import parse
    from governance.shell.words import LimitError, ParseError

    text = text.strip()
    if text.startswith("$(") and text.endswith(")"):
        text = text[2:-1]
    elif text.startswith("`") and text.endswith("`"):
        text = text[1:-1]
    segments = _segments(an)
    if text in segments:                     # ... | sort | xargs rm: the pipe before sort too
        return _producer(an, segments[text])
    try:
        cmds = parse(text, 8, 0, [256])
    except (ParseError, LimitError, RecursionError):
        return None
    return _producer(an, cmds[-1]) if cmds else None


def _segments(an: Walk) -> dict[str, Simple]:
    """The whole command line's commands by their text, parsed once for the analysis."""
    from governance.shell.parser import parse
    from governance.shell.words import LimitError, ParseError

    found = getattr(an, "segments", None)
    if found is not None:
        return found   # type: ignore[no-any-return]
    found = {}
    whole = getattr(an, "text", None)
    if isinstance(whole, str) and whole:
        try:
            for cmd in parse(whole, 8, 0, [4000]):
                found.setdefault(cmd.segment, cmd)
        except (ParseError, LimitError, RecursionError):
            pass
    try:
        an.segments = found     # type: ignore[attr-defined]
    except AttributeError:
        pass
    return found


def _producer(an: Walk, cmd: Simple | None) -> str | None:
    files = getattr(an.check, "protected_files", None)
    if files is None:
        return None
    for _hop in range(_MAX_HOPS):
        if cmd is None or not cmd.words:
            return None
        fields, _globs, _raws = an.expand_words(cmd.words)
        base = str(fields[0]).rsplit("/", 1)[-1] if fields[0] is not None else ""
        if base in _FILTERS and not (base == "cat" and len(fields) > 1):
            cmd = cmd.piped_from if cmd.piped else None
            continue
        return _listed(an, base, fields, files)
    return None


def listed_by(an: Walk, fields: list[str | None]) -> str | None:
    """The first governance file the search ``fields`` (a program and its words, known now)
    may list, or None (also when it is no search this module reads)."""
    files = getattr(an.check, "protected_files", None)
    if files is None or not fields or fields[0] is None:
        return None
    return _listed(an, str(fields[0]).rsplit("/", 1)[-1], fields, files)


def _listed(an: Walk, base: str, fields: list[str | None],
            files: Callable[[str], list[str]]) -> str | None:
    """The first governance file the search ``base`` ``fields`` lists below its folders."""
    selected = _selection(base, fields)
    if selected is None:
        return None
    roots, select = selected
    hidden = base not in ("rg", "fd", "fdfind") or any(
        f is not None and (f in ("--hidden", "-.", "--no-ignore-dot") or f.startswith("-uu")
                           or (f[:1] == "-" and f[1:2] != "-" and "H" in f and base != "rg"))
        for f in fields[1:])               # rg and fd pass over dot folders by default
    here = an.folder()
    for root in roots:
        if root is None:
            return "a folder known only at run time"
        if here is None and not os.path.isabs(os.path.expanduser(root)):
            return None
        folder = os.path.join(here or "/", os.path.expanduser(root))
        for path in files(folder):
            inside = os.path.relpath(path, folder)
            if not hidden and any(part[:1] == "." and part not in (".", "..")
                                  for part in inside.split(os.sep)):
                continue
            if select(path, inside):
                return str(path)
    return None


class _Select:
    """What a search selects a file by: nothing (every file), its name, or its text."""

    def __init__(self, names: list[str] | None = None, fold: bool = False,
                 pattern: re.Pattern[str] | None = None, without: bool = False,
                 one_level: bool = False, regex_name: re.Pattern[str] | None = None,
                 dots: bool = True) -> None:
        self.names, self.fold, self.pattern, self.without = names, fold, pattern, without
        self.one_level, self.regex_name, self.dots = one_level, regex_name, dots

    def __call__(self, path: str, inside: str = "") -> bool:
        """Whether the search selects ``path``, which is ``inside`` (relative) of its folder."""
        name = os.path.basename(path)
        parts = inside.split(os.sep) if inside else [name]
        if self.one_level and len(parts) > 1:      # ls DIR: the names in DIR, not below
            return False
        if not self.dots and any(p[:1] == "." and p not in (".", "..") for p in parts):
            return False
        if self.names is not None and not any(
                fnmatch.fnmatchcase(name.lower() if self.fold else name,
                                    p.lower() if self.fold else p) for p in self.names):
            return False
        if self.regex_name is not None and not self.regex_name.search(name):
            return False
        if self.pattern is not None:
            try:
                with open(path, "rb") as handle:
                    text = handle.read(_MAX_READ).decode("utf-8", "replace")
            except OSError:
                return True
            return (self.pattern.search(text) is None) == self.without
        return True


def _selection(base: str, fields: list[str | None]) -> tuple[list[str | None], _Select] | None:
    if base == "find":
        raws = ["" if f is None else f for f in fields]
        roots: list[str | None] = [value for value, _raw in find_roots(fields, raws)]
        return roots, _find_names(fields)
    if base in _GREPS:
        return _grep(base, fields)
    if base in ("fd", "fdfind"):
        words = [f for k, f in enumerate(fields[1:], 1) if (f is None or f[:1] != "-")
                 and fields[k - 1] not in _FD_VALUES]
        if not words:
            return ["."], _Select()
        if words[0] is None:
            return [None], _Select()
        try:
            named = re.compile(words[0])
        except re.error:
            named = None
        return (words[1:] or ["."]), _Select(regex_name=named)
    if base == "git" and "ls-files" in fields[1:3]:
        at = fields.index("ls-files")
        paths = [f for f in fields[at + 1:] if f is None or f[:1] != "-"]
        return (paths or ["."]), _Select()
    if base == "ls":
        paths = [f for f in fields[1:] if f is None or f[:1] != "-"]
        short = [f[1:] for f in fields[1:] if f is not None and f[:1] == "-" and f[1:2] != "-"]
        deep = "--recursive" in fields or any("R" in f for f in short)
        dots = "--all" in fields or "--almost-all" in fields or any(
            "a" in f or "A" in f for f in short)
        return (paths or ["."]), _Select(one_level=not deep, dots=dots)
    return None


def _find_names(fields: list[str | None]) -> _Select:
    names: list[str] = []
    fold = False
    k = 1
    while k < len(fields):
        field = fields[k]
        if field in ("-name", "-iname") and k + 1 < len(fields) and fields[k + 1] is not None:
            names.append(str(fields[k + 1]))
            fold = fold or field == "-iname"
            k += 2
            continue
        if field in ("-o", "-or", "!", "-not", "(", ")", ",") or field is None:
            return _Select()                  # an expression not read here: every file
        k += 1
    return _Select(names=names or None, fold=fold)


def _grep(base: str, fields: list[str | None]) -> tuple[list[str | None], _Select] | None:
    listing = without = fold = literal = False
    pattern: str | None = None
    given_pattern = False
    positionals: list[str | None] = []
    files_only = False
    k = 1
    while k < len(fields):
        field = fields[k]
        if field is None:
            positionals.append(None)
        elif field == "--":
            positionals.extend(fields[k + 1:])
            break
        elif field.startswith("--"):
            name, _, value = field.partition("=")
            listing = listing or name in ("--files-with-matches", "--files-without-match")
            without = without or name == "--files-without-match"
            fold = fold or name == "--ignore-case"
            literal = literal or name == "--fixed-strings"
            files_only = files_only or name == "--files"
            if name == "--regexp":
                pattern, given_pattern = value or (fields[k + 1] if k + 1 < len(fields) else
                                                   None), True
            if name in _GREP_VALUES and not value:
                k += 1
        elif field[:1] == "-" and len(field) > 1:
            letters = field[1:]
            for at, letter in enumerate(letters):
                if letter in "lL":
                    listing = True
                    without = without or letter == "L"
                elif letter == "i":
                    fold = True
                elif letter == "F":
                    literal = True
                elif "-" + letter in _GREP_VALUES:
                    given: str | None = letters[at + 1:] or (
                        fields[k + 1] if k + 1 < len(fields) else None)
                    if not letters[at + 1:]:
                        k += 1
                    if letter == "e":
                        pattern, given_pattern = given, True
                    break
        else:
            positionals.append(field)
        k += 1
    if base == "rg" and files_only:
        return (positionals or ["."]), _Select()
    if not listing:
        return None
    if not given_pattern:
        if not positionals:
            return None
        pattern, positionals = positionals[0], positionals[1:]
    roots = positionals or ["."]
    if pattern is None:
        return roots, _Select()
    try:
        compiled = re.compile(re.escape(pattern) if literal or base == "fgrep" else pattern,
                              re.IGNORECASE if fold else 0)
    except re.error:
        return roots, _Select()
    return roots, _Select(pattern=compiled, without=without)
