"""What inline code does, as the readers of ``shell.inline`` report it: ``Finding`` and the helpers
the Python reader (``shell.python_code``) and the scanner (``shell.scanner``) share to turn a call
and its arguments into findings. No imports at load time.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import NamedTuple

    Item = str | None | list[str | None]      # an argument: literal, run-time (None) or a list

    class Finding(NamedTuple):
        primitive: str
        reason: str
        command: str | None = None
        argv: tuple[str, ...] | None = None
        path: str | None = None
else:
    class Finding(tuple):
        """The NamedTuple above, without importing ``typing``."""

        __slots__ = ()
        _fields = ("primitive", "reason", "command", "argv", "path")

        def __new__(cls, primitive, reason, command=None, argv=None, path=None):
            return tuple.__new__(cls, (primitive, reason, command, argv, path))

        def __repr__(self):
            return "Finding(" + ", ".join(f"{k}={v!r}" for k, v in zip(self._fields, self, strict=True)) + ")"

    for _i, _field in enumerate(Finding._fields):
        setattr(Finding, _field, property(lambda self, _i=_i: self[_i]))



def words(text: str) -> frozenset[str]:
    return frozenset(text.split())



RUNTIME = "$__inline"   # stands for a run-time part of a command template
MAX_DEPTH = 6            # code evaluated by code evaluated by code ...
LABEL = {"python": "Python", "node": "Node", "perl": "Perl", "ruby": "Ruby", "php": "PHP", "awk": "awk",
          "lua": "Lua", "r": "R", "julia": "Julia", "tcl": "Tcl",
          "powershell": "PowerShell", "elisp": "Emacs Lisp"}


def run_cmd(out: list[Finding], value: Item, reason: str, template: str | None = None) -> None:
    if isinstance(value, list):
        run_argv(out, value, reason)
    elif value is None:
        out.append(Finding("shell-unknown", reason + " with a command known only at run time"))
        if template:
            out.append(Finding("shell", reason, command=template))
    elif value.strip():
        out.append(Finding("shell", reason, command=value))


def run_argv(out: list[Finding], values: list[str | None], reason: str) -> None:
    if not values or values[0] is None:
        out.append(Finding("shell-unknown", reason + " with a program known only at run time"))
    elif None in values:
        out.append(Finding("shell-unknown", reason + " with arguments known only at run time"))
        out.append(Finding("shell", reason, command=" ".join(
            f'"{RUNTIME}"' if v is None else v if v and all(c.isalnum() or c in "-_./=:,+@%" for c in v)
            else "'" + v.replace("'", "'\\''") + "'" for v in values)))
    else:
        out.append(Finding("shell", reason, argv=tuple(v or "" for v in values)))


def file(out: list[Finding], kind: str, value: Item, reason: str) -> None:
    primitive = {"del": "file-delete", "destroy": "destructive"}.get(kind, "file-write")
    out.append(Finding(primitive, reason, path=value if isinstance(value, str) else None))


def apply(out: list[Finding], kind: str, items: list[Item], reason: str,
          evaluate: Callable[[str], list[Finding]], template: str | None = None) -> None:
    """Report a call of ``kind`` with the arguments ``items`` (Python and the scanners share this);
    ``evaluate`` reads code the call evaluates (``eval``) in the same language."""
    first, more = (items[0] if items else None), (items[1] if len(items) > 1 else None)
    if kind == "cmd" or (kind == "list" and len(items) == 1):
        run_cmd(out, first, reason, template)
    elif kind == "list":                      # system LIST
        run_argv(out, flat(items), reason)
    elif kind == "argv":                      # spawn(program, [args])
        head = first if isinstance(first, list) else [first]
        run_argv(out, strs(head) + (more if isinstance(more, list) else []), reason)
    elif kind == "eval":
        out.extend(evaluate(first) if isinstance(first, str) else
                   [Finding("shell-unknown", reason + " on code known only at run time")])
    elif kind == "pkg":
        out.append(Finding("package-install", reason + ", which installs packages"))
    elif kind in ("net", "unknown"):
        out.append(Finding("web-fetch", reason, path=first if isinstance(first, str) else None)
                   if kind == "net" else
                   Finding("shell-unknown", reason + " (what it runs is known only at run time)"))
    elif kind in ("del", "destroy", "write", "dels"):     # dels: every argument is a path
        for value in flat(items) if kind == "dels" else first if isinstance(first, list) else [first]:
            file(out, kind.rstrip("s"), value, reason)
    elif kind == "chdir":                     # later relative paths are in this folder
        out.append(Finding("chdir", reason, path=first if isinstance(first, str) else None))
    elif kind in ("move", "copy"):
        file(out, "write", more, reason)
        if kind == "move":
            file(out, "del", first, reason)
    elif kind == "open" and len(items) > 1 and not (isinstance(more, str) and all(c not in more for c in
                                                                                  "wax+")):
        file(out, "write", first, reason)      # open(path, mode): a literal mode without w, a, x, + reads


def strs(items: Sequence[Item]) -> list[str | None]:
    return [i if isinstance(i, str) else None for i in items]


def flat(items: list[Item]) -> list[str | None]:
    return [v for i in items for v in (i if isinstance(i, list) else [i])]

