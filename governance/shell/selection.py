"""Which protected files a ``find`` command acts on.

``find . -name seal.json -delete`` names no protected path, yet it deletes
``.claude/governance/seal.json``; ``find . -name settings.json -exec cp /tmp/x {} \\;`` overwrites
the project's settings. The protected files that exist below the folders find searches
(``PathGuard.protected_files``) are run through find's own expression, as find evaluates it for
each file it visits: tests (``-name``, ``-iname``, ``-path``, ``-ipath``, ``-wholename``,
``-regex``, ``-type``, the times (``-mtime``, ``-mmin`` ...), ``-newer``, ``-size``, ``-true``,
``-false``, each on the file itself), operators (``!``, ``-not``, ``-a``, ``-o``,
parentheses, ``,``), ``-prune`` on the folders above the file (no effect with ``-depth`` or
``-delete``, which implies it), ``-mindepth`` and ``-maxdepth``. A test it cannot decide here (an
owner, permissions, ``-empty``) may hold, and so may an ``-exec`` used as a test. ``-ok`` and
``-okdir`` ask on the terminal, which a tool call does not have: they act only when the command
feeds find's input (``yes | find . -ok rm {} \\;``). Each file an
acting primary (``-delete``, ``-exec``, ``-execdir``, ``-ok``, ``-okdir``) may reach is returned,
as find would name it, for the caller to check as the target of that action.

Cold path: imported by ``shell.wrapper`` for a ``find`` with an acting primary, when the path
check can list protected files; ``fnmatch`` (and ``re`` for ``-regex``) are loaded then.
"""

from __future__ import annotations

import os
import time

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
             protected_files: Any, acting: tuple[str, ...] = ACTING) -> list[str]:
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
        seen: set[str] = set()
        for path in protected_files(top):
            rel = os.path.relpath(path, top)
            if rel.startswith(".."):
                continue
            whole = [] if rel == "." else rel.split(os.sep)
            # the file, and each folder above it below the root: an action on the folder
            # (-exec mv {} ..., rm -rf {}) takes the file with it
            for parts in [whole[:k] for k in range(len(whole), 0, -1)] or [whole]:
                named = root.rstrip("/") + "/" + "/".join(parts) if parts else root
                if root == "/":
                    named = "/" + "/".join(parts)
                if named in seen or not (low <= len(parts) <= high):
                    continue
                seen.add(named)
                real = os.path.join(top, *parts) if parts else top
                if tree is None or _reached(tree, named, parts, root, depth_first, real, top,
                                            acting):
                    out.append(named)
                    if len(out) >= MAX_FILES:
                        return out
    return out


def _reached(tree: Node, named: str, parts: list[str], root: str, depth_first: bool,
             path: str, top: str, acting: tuple[str, ...]) -> bool:
    if not depth_first:                     # a folder above it pruned: never visited
        for k in range(len(parts)):
            above = root.rstrip("/") + "/" + "/".join(parts[:k]) if k else root
            _value, fired = _evaluate(tree, above, os.path.join(top, *parts[:k]))
            if fired.get("-prune"):
                return False
    _value, fired = _evaluate(tree, named, path)
    return any(name in fired for name in acting)


def _evaluate(node: Node, named: str, real: str) -> Verdict:
    kind = node[0]
    if kind in ("and", "or"):
        stop = kind == "or"                 # the left side's value that decides alone
        a, fa = _evaluate(node[1], named, real)
        if a is stop:
            return stop, fa
        b, fb = _evaluate(node[2], named, real)
        sure = a is (not stop)              # the right side ran for certain
        fired = {**fa, **{k: v and sure for k, v in fb.items()}}
        both = a is (not stop) and b is (not stop)
        return (stop if b is stop else (not stop) if both else None), fired
    if kind == "list":                      # A , B: both, the value is B's
        _a, fa = _evaluate(node[1], named, real)
        b, fb = _evaluate(node[2], named, real)
        return b, {**fa, **fb}
    if kind == "not":
        a, fa = _evaluate(node[1], named, real)
        return (None if a is None else not a), fa
    if kind == "action":
        name = node[1]
        value: bool | None = True if name in _TRUE_ACTIONS else None
        return value, {name: True}
    return _test(node[1], node[2], named, real), {}


def _test(name: str, arg: str | None, named: str, real: str) -> bool | None:
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
    try:
        info = os.lstat(real)
    except OSError:
        return None
    if name == "-type":
        kind = {0o040000: "d", 0o120000: "l", 0o100000: "f"}.get(info.st_mode & 0o170000, "?")
        return kind in arg.split(",")
    if name in _TIMES:
        stamp, unit = _TIMES[name]
        return _compare((time.time() - getattr(info, stamp)) / unit, arg, floor=unit > 60)
    if name == "-newer":
        try:
            return info.st_mtime > os.stat(arg).st_mtime
        except OSError:
            return None
    if name == "-size":
        return _size(info.st_size, arg)
    return None


_TIMES = {"-mtime": ("st_mtime", 86400.0), "-atime": ("st_atime", 86400.0),
          "-ctime": ("st_ctime", 86400.0), "-mmin": ("st_mtime", 60.0),
          "-amin": ("st_atime", 60.0), "-cmin": ("st_ctime", 60.0)}
_UNITS = {"c": 1, "w": 2, "b": 512, "k": 1024, "M": 1 << 20, "G": 1 << 30}


def _compare(value: float, arg: str, floor: bool) -> bool | None:
    """find's numeric argument: ``+N`` more than N, ``-N`` less than N, ``N`` exactly N (days
    are counted whole, as find does)."""
    sign = arg[:1] if arg[:1] in "+-" else ""
    try:
        number = float(arg[len(sign):])
    except ValueError:
        return None
    counted = float(int(value)) if floor else value
    if sign == "+":
        return counted > number
    if sign == "-":
        return counted < number
    return int(value) == int(number) if floor else abs(value - number) < 1


def _size(size: int, arg: str) -> bool | None:
    unit = _UNITS.get(arg[-1:])
    text = arg[:-1] if unit is not None else arg
    unit = unit or 512
    sign = text[:1] if text[:1] in "+-" else ""
    if not text[len(sign):].isdigit():
        return None
    blocks = -(-size // unit)                # find rounds a size up to whole units
    number = int(text[len(sign):])
    return blocks > number if sign == "+" else blocks < number if sign == "-" else \
        blocks == number


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
