"""Which protected files a ``find`` command acts on.

``find . -name seal.json -delete`` names no protected path, yet it deletes
``.claude/governance/seal.json``; ``find . -name settings.json -exec cp /tmp/x {} \\;`` overwrites
the project's settings. The protected files that exist below the folders find searches
(``PathGuard.protected_files``) are run through find's own expression, as find evaluates it for
each file it visits: tests (``-name``, ``-iname``, ``-path``, ``-ipath``, ``-wholename``,
``-regex``, ``-type``, ``-true``, ``-false``), operators (``!``, ``-not``, ``-a``, ``-o``,
parentheses, ``,``), ``-prune`` on the folders above the file (no effect with ``-depth`` or
``-delete``, which implies it), ``-mindepth`` and ``-maxdepth``. A test it cannot decide here (a
time, a size, an owner, ``-newer``) may hold, and so may an ``-exec`` used as a test. Each file an
acting primary (``-delete``, ``-exec``, ``-execdir``, ``-ok``, ``-okdir``) may reach is returned,
as find would name it, for the caller to check as the target of that action.

Cold path: imported by ``shell.wrapper`` for a ``find`` with an acting primary, when the path
check can list protected files; ``fnmatch`` (and ``re`` for ``-regex``) are loaded then.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    Node = tuple[Any, ...]
    Verdict = tuple[bool | None, dict[str, bool]]   # the value, and the actions it fires (sure?)

MAX_FILES = 8                    # files returned: enough to name one in every act's reason
ACTING = ("-delete", "-exec", "-execdir", "-ok", "-okdir")
_EXECS = ("-exec", "-execdir", "-ok", "-okdir")
_GLOBAL = ("-depth", "-d", "-xdev", "-mount", "-follow", "-noleaf", "-ignore_readdir_race",
           "-noignore_readdir_race", "-daystart", "-nowarn", "-warn", "-regextype")
_VALUED = ("-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex",
           "-iregex", "-lname", "-ilname", "-type", "-xtype", "-newer", "-anewer", "-cnewer",
           "-mtime", "-mmin", "-atime", "-amin", "-ctime", "-cmin", "-size", "-perm", "-user",
           "-group", "-uid", "-gid", "-links", "-inum", "-samefile", "-used", "-context",
           "-fstype", "-printf", "-fprint", "-fprint0", "-fls", "-maxdepth", "-mindepth",
           "-regextype", "-newermt", "-newerct", "-newerat", "-newermm")
_TRUE_ACTIONS = ("-print", "-print0", "-ls", "-printf", "-fprint", "-fprint0", "-fprintf",
                 "-fls", "-prune", "-quit", "-true", "-delete")

class Unreadable(Exception):
    """The expression is not one find would accept as written here."""


def acted_on(fields: list[str | None], roots: list[tuple[str | None, str]], folder: str,
             protected_files: Any) -> list[str]:
    """The protected files below ``roots`` (relative to ``folder``) that an acting primary of
    ``find`` may reach, named as find names them; every one when the expression cannot be
    read."""
    start = _expression_start(fields)
    words = fields[start:]
    depth_first = "-depth" in words or "-d" in words or "-delete" in words
    low, high = _depths(words)
    try:
        tree = _Parser([w for w in words if w not in _GLOBAL]).parse()
    except Unreadable:
        tree = None
    out: list[str] = []
    for root, _raw in roots:
        if root is None:
            continue
        top = os.path.realpath(os.path.join(folder, os.path.expanduser(root)))
        for path in protected_files(top):
            rel = os.path.relpath(path, top)
            if rel.startswith(".."):
                continue
            parts = [] if rel == "." else rel.split(os.sep)
            if not (low <= len(parts) <= high):
                continue
            named = root.rstrip("/") + "/" + "/".join(parts) if parts else root
            if root == "/":
                named = "/" + "/".join(parts)
            if tree is None or _reached(tree, named, parts, root, depth_first,
                                        os.path.islink(path)):
                out.append(named)
                if len(out) >= MAX_FILES:
                    return out
    return out


def _reached(tree: Node, named: str, parts: list[str], root: str, depth_first: bool,
             is_link: bool) -> bool:
    if not depth_first:                     # a folder above it pruned: never visited
        for k in range(len(parts)):
            above = root.rstrip("/") + "/" + "/".join(parts[:k]) if k else root
            _value, fired = _evaluate(tree, above, True, False)
            if fired.get("-prune"):
                return False
    _value, fired = _evaluate(tree, named, False, is_link)
    return any(name in fired for name in ACTING)


def _evaluate(node: Node, named: str, folder: bool, link: bool) -> Verdict:
    kind = node[0]
    if kind == "and":
        a, fa = _evaluate(node[1], named, folder, link)
        if a is False:
            return False, fa
        b, fb = _evaluate(node[2], named, folder, link)
        sure = a is True
        fired = {**fa, **{k: v and sure for k, v in fb.items()}}
        return (False if b is False else True if (a and b) else None), fired
    if kind == "or":
        a, fa = _evaluate(node[1], named, folder, link)
        if a is True:
            return True, fa
        b, fb = _evaluate(node[2], named, folder, link)
        sure = a is False
        fired = {**fa, **{k: v and sure for k, v in fb.items()}}
        return (True if b is True else False if (a is False and b is False) else None), fired
    if kind == "list":                      # A , B: both, the value is B's
        _a, fa = _evaluate(node[1], named, folder, link)
        b, fb = _evaluate(node[2], named, folder, link)
        return b, {**fa, **fb}
    if kind == "not":
        a, fa = _evaluate(node[1], named, folder, link)
        return (None if a is None else not a), fa
    if kind == "action":
        name = node[1]
        value: bool | None = True if name in _TRUE_ACTIONS else None
        return value, {name: True}
    return _test(node[1], node[2], named, folder, link), {}


def _test(name: str, arg: str | None, named: str, folder: bool, link: bool) -> bool | None:
    from fnmatch import fnmatchcase

    if name == "-true":
        return True
    if name == "-false":
        return False
    if arg is None:
        return None
    base = named.rstrip("/").rsplit("/", 1)[-1] or named
    if name in ("-name", "-iname"):
        fold = name == "-iname"
        return fnmatchcase(base.lower() if fold else base, arg.lower() if fold else arg)
    if name in ("-path", "-ipath", "-wholename", "-iwholename"):
        fold = name.startswith("-i")
        return fnmatchcase(named.lower() if fold else named, arg.lower() if fold else arg)
    if name in ("-regex", "-iregex"):
        import re

        try:
            return re.fullmatch(arg, named, re.IGNORECASE if name == "-iregex" else 0) is not None
        except re.error:
            return None
    if name == "-type":
        kinds = set(arg.split(","))
        return ("d" in kinds) if folder else ("l" in kinds) if link else ("f" in kinds)
    return None


class _Parser:
    def __init__(self, words: list[str | None]) -> None:
        self.words = words
        self.k = 0

    def parse(self) -> Node:
        if not self.words:
            return ("action", "-print")
        node = self._list()
        if self.k < len(self.words):
            raise Unreadable(str(self.words[self.k]))
        return node

    def _peek(self) -> str | None:
        return self.words[self.k] if self.k < len(self.words) else ""

    def _list(self) -> Node:
        node = self._or()
        while self._peek() == ",":
            self.k += 1
            node = ("list", node, self._or())
        return node

    def _or(self) -> Node:
        node = self._and()
        while self._peek() in ("-o", "-or"):
            self.k += 1
            node = ("or", node, self._and())
        return node

    def _and(self) -> Node:
        node = self._unary()
        while self._peek() not in ("", ")", "-o", "-or", ","):
            if self._peek() in ("-a", "-and"):
                self.k += 1
            node = ("and", node, self._unary())
        return node

    def _unary(self) -> Node:
        word = self._peek()
        if word in ("!", "-not"):
            self.k += 1
            return ("not", self._unary())
        if word == "(":
            self.k += 1
            node = self._list()
            if self._peek() != ")":
                raise Unreadable("(")
            self.k += 1
            return node
        return self._primary()

    def _primary(self) -> Node:
        word = self._peek()
        if word is None or word == "":
            raise Unreadable("a word known only at run time")
        self.k += 1
        if word in _EXECS:
            while self._peek() not in (";", "+", ""):
                self.k += 1
            if self._peek() == "":
                raise Unreadable(word)
            self.k += 1
            return ("action", word)
        if word in _TRUE_ACTIONS or word in ("-quit",):
            if word in ("-printf", "-fprint", "-fprint0", "-fls"):
                self.k += 1
            if word == "-fprintf":
                self.k += 2
            return ("action", word)
        if word in _VALUED:
            arg = self._peek()
            self.k += 1
            if word in ("-maxdepth", "-mindepth", "-regextype"):
                return ("test", "-true", "")
            return ("test", word, arg if arg != "" else None)
        return ("test", word, None)            # -empty, -readable, -nouser ...: may hold


def _expression_start(fields: list[str | None]) -> int:
    i, n = 1, len(fields)
    while i < n and (fields[i] in ("-H", "-L", "-P") or str(fields[i]).startswith(("-O", "-D"))):
        i += 2 if fields[i] == "-D" else 1
    while i < n and (fields[i] is None or (str(fields[i])[:1] not in "-(!),"
                                           and fields[i] != "")):
        i += 1
    return i


def _depths(words: list[str | None]) -> tuple[int, int]:
    low, high = 0, 1 << 30
    for k, word in enumerate(words[:-1]):
        value = words[k + 1]
        if word in ("-mindepth", "-maxdepth") and value is not None and value.isdigit():
            if word == "-mindepth":
                low = int(value)
            else:
                high = int(value)
    return low, high
