"""Listings of a whole tree: what deletes every file below a folder, one file at a time.

``find /srv -delete``, ``find /srv -type f | xargs rm -f`` and ``fd . /srv | xargs rm`` delete
what ``rm -r /srv`` deletes, so they are decided as that recursive delete (``shell.generated``:
output git ignores is a ``file-delete``, anything else ``destructive``). A listing is of a whole
tree when it descends into folders and nothing narrows what it names:

- ``find ROOT...`` (also ``-H``/``-L``/``-P`` first) with no test that narrows what it finds (by
  name, path, time, size, owner ...; ``-type f`` and ``-mindepth`` do not, and neither does a
  negated test, a name pattern of only ``*``, or an ``-o`` branch without such a test);
  ``-maxdepth 0`` or ``1`` stays in the folder, as ``rm DIR/*`` does;
- ``fd``/``fdfind`` with no pattern, or one that matches everything (``.``, ``^``, ``''``), and
  no ``-e``/``-g``;
- ``ls -R`` of a folder (``ls DIR`` and ``ls DIR/*`` name one level, as ``rm DIR/*`` does: a
  ``file-delete``, like any delete that does not descend);
- ``git ls-files`` (the tracked work itself);
- any of these piped through ``sort``, ``uniq``, ``tac``, ``cat``, ``tr`` or ``grep -v``.

Cold path: imported by ``shell.wrapper`` for ``find`` and by ``shell.resolver`` when a delete
takes its arguments from a pipe.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from governance.shell.parser import Simple
    from governance.shell.walk import Walk

Root = tuple[str | None, str]      # a folder: its value (None at run time) and its text

# find's tests that narrow what it finds (by name, path, time, size, owner, content ...)
FIND_TESTS = ("name", "iname", "path", "ipath", "wholename", "iwholename", "regex", "iregex",
              "lname", "ilname", "newer", "mtime", "mmin", "atime", "amin", "ctime", "cmin",
              "size", "perm", "user", "group", "uid", "gid", "nouser", "nogroup", "empty",
              "links", "inum", "samefile", "used", "context", "fstype", "readable",
              "writable", "executable")
_PATTERNS = ("-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex",
             "-iregex")
_EVERYTHING = ("", ".", "^", ".*", "^.*", ".*$", "^.*$", ".+")
_FIND_GLOBAL = ("-H", "-L", "-P")
_FILTERS = ("sort", "uniq", "tac", "cat", "tr")
_GREPS = ("grep", "egrep", "fgrep", "rg")
_MAX_PIPE = 8


def find_roots(fields: list[str | None], raws: list[str]) -> list[Root]:
    """The folders a ``find`` command searches (``.`` when it names none)."""
    i, n = 1, len(fields)
    while i < n and (fields[i] in _FIND_GLOBAL or str(fields[i]).startswith(("-O", "-D"))):
        i += 2 if fields[i] == "-D" else 1
    roots: list[Root] = []
    while i < n and (fields[i] is None or (str(fields[i])[:1] not in "-(!),"
                                           and fields[i] != "")):
        roots.append((fields[i], raws[i]))
        i += 1
    return roots or [(".", ".")]


def find_everything(fields: list[str | None]) -> bool:
    """Whether ``find``'s expression finds every file of its roots (module docstring)."""
    branches: list[bool] = [False]
    for k in range(1, len(fields)):
        word = fields[k]
        if word in ("-o", "-or", ","):
            branches.append(False)
            continue
        if word in ("-maxdepth", "-depth") and k + 1 < len(fields) and fields[k + 1] in ("0", "1"):
            return False                     # find DIR -maxdepth 1: one level, as rm DIR/*
        if word is None or word[:1] != "-" or not word[1:].startswith(FIND_TESTS):
            continue
        previous = fields[k - 1]
        if previous in ("!", "-not"):
            continue                         # ! -name keep: everything else
        value = fields[k + 1] if k + 1 < len(fields) else None
        if word in _PATTERNS and value is not None and (
                not value.replace("*", "") or value in _EVERYTHING):
            continue                         # -name '*': every name
        branches[-1] = True
    return not all(branches)


def listed(an: Walk, producer: Simple | None) -> list[Root] | None:
    """The folders whose every file ``producer`` lists on its output, or None when what it lists
    is narrowed (or is no listing at all)."""
    for _hop in range(_MAX_PIPE):
        if producer is None or not producer.words:
            return None
        fields, _globs, raws = an.expand_words(producer.words)
        base = str(fields[0]).rsplit("/", 1)[-1] if fields[0] is not None else ""
        if base in _FILTERS or (base in _GREPS and any(
                (f is not None and f[:1] == "-" and f[1:2] != "-" and "v" in f)
                or f == "--invert-match" for f in fields[1:])):
            if base == "cat" and len(fields) > 1:
                return None
            producer = producer.piped_from if producer.piped else None
            continue
        if base == "find":
            return find_roots(fields, raws) if find_everything(fields) else None
        if base in ("fd", "fdfind"):
            return _fd(fields, raws)
        if base == "ls":
            return _ls(fields, raws)
        if base == "git" and "ls-files" in fields[1:3]:
            at = fields.index("ls-files")
            paths = [(f, r) for f, r in zip(fields[at + 1:], raws[at + 1:], strict=False)
                     if f is None or f[:1] != "-"]
            return paths or [(".", ".")]
        return None
    return None


def delete(an: Walk, roots: list[Root], cmd: Simple, seg: str, depth: int) -> None:
    """Every file below ``roots`` deleted: decided as the recursive delete it amounts to
    (``rm -r ROOTS``: generated output stays a file-delete, anything else is destructive)."""
    an.resolve(["rm", "-r", *(v for v, _r in roots)], [False] * (2 + len(roots)),
               ["rm", "-r", *(r for _v, r in roots)], cmd, seg, depth)


def computed(an: Walk, text: str) -> list[Root] | None:
    """``listed`` for the text of a command whose output gives a value: what ``xargs`` reads
    from a pipe, a loop word such as ``$(find /srv -type f)``."""
    text = text.strip()
    if text.startswith("$(") and text.endswith(")"):
        text = text[2:-1]
    elif text.startswith("`") and text.endswith("`"):
        text = text[1:-1]
    from governance.shell.parser import parse
    from governance.shell.words import LimitError, ParseError

    try:
        cmds = parse(text, 8, 0, [256])
    except (ParseError, LimitError, RecursionError):
        return None
    return listed(an, cmds[-1]) if cmds else None


def sources(an: Walk, raw: str) -> list[str]:
    """The texts of the commands that compute a target known only at run time: what ``xargs``
    reads from a pipe (``raw`` starts with a NUL), or the loop words a ``"$f"`` stands for."""
    if raw[:1] == "\0":
        return [raw[1:]]
    text = raw.replace('"', "").replace("'", "")
    return [value[1:] for name, values in an.loops.items()
            if "$" + name in text or "${" + name + "}" in text
            for value in values if value[:1] == "\0"]


def _fd(fields: list[str | None], raws: list[str]) -> list[Root] | None:
    words = [(f, r) for f, r in zip(fields[1:], raws[1:], strict=False)
             if f is None or f[:1] != "-"]
    if any(f is not None and f.startswith(("-e", "--extension", "-g", "--glob"))
           for f in fields[1:]):
        return None
    if words and words[0][0] not in _EVERYTHING:
        return None
    return words[1:] or [(".", ".")]


def _ls(fields: list[str | None], raws: list[str]) -> list[Root] | None:
    if not any(f is not None and (f == "--recursive" or (f[:1] == "-" and f[1:2] != "-"
                                                          and "R" in f)) for f in fields[1:]):
        return None                         # one level: as rm DIR/* (a file-delete)
    roots: list[Root] = []
    for value, raw in zip(fields[1:], raws[1:], strict=False):
        if value is not None and value[:1] == "-":
            continue
        if value is None:
            roots.append((None, raw))
            continue
        head, _, last = value.rstrip("/").rpartition("/")
        if any(c in last for c in "*?["):
            if last.replace("*", ""):
                return None                 # ls src/*.pyc: narrowed by name
            roots.append((head or ("/" if value.startswith("/") else "."), head or "."))
        elif any(c in head for c in "*?["):
            return None
        else:
            roots.append((value, raw))
    return roots or [(".", ".")]
