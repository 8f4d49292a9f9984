"""The commands an ``expect`` script starts: ``spawn CMD ...`` and Tcl's ``exec CMD ...``.

Imported by ``shell.resolver`` only for ``expect``. The script comes from ``-c CODE``, a file
(``-f FILE`` or the first argument: one the command wrote, or one on disk) or standard input (a
here-doc, a here-string). Each statement that starts with ``spawn`` or ``exec`` is analysed as the
command it names; a statement built at run time (``spawn $cmd``, ``eval spawn ...``) is unknown.
A script that cannot be read is unknown.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from governance.shell.parser import Simple
    from governance.shell.walk import Walk

_STARTS = ("spawn", "exec")


def run(an: Walk, fields: list[str | None], cmd: Simple | None, seg: str, depth: int) -> None:
    codes: list[str | None] = []
    i, n = 1, len(fields)
    while i < n:
        arg = fields[i]
        i += 1
        if arg == "-c":
            codes.append(fields[i] if i < n else "")
            i += 1
        elif arg in ("-f", "-") or (arg is not None and not arg.startswith("-")):
            name = fields[i] if arg == "-f" and i < n else arg
            codes.append(_file(an, name, cmd, seg))
            break
        elif arg is None:
            codes.append(None)
            break
    if not codes and cmd is not None:
        kind, text = an.stdin_text(cmd)
        codes.append(text if kind == "literal" else None if kind != "none" else "")
    for code in codes:
        if code is None:
            an.unknown(seg, "expect runs a script known only at run time")
            continue
        for line in statements(code):
            an.script(line, depth + 1, seg)


def _file(an: Walk, name: str | None, cmd: Simple | None, seg: str) -> str | None:
    if name == "-" and cmd is not None:
        kind, text = an.stdin_text(cmd)
        return text if kind == "literal" else None
    if name is None or an.wrote(name):
        return an.file_text(name)
    from governance import system
    from governance.shell.source import path_of, text_of

    path = path_of(an, name)
    if path is not None and not system.lexists(path):
        return ""                                     # expect stops: no such file
    return text_of(an, "expect", path, name, seg) if path is not None else None


def statements(code: str) -> list[str]:
    """The command lines of the ``spawn``/``exec`` statements in Tcl code: the words after the
    keyword up to the end of the statement (``;``, a newline or a closing bracket); a statement
    whose command is a variable stays a variable, which the analysis reads as unknown."""
    out: list[str] = []
    for piece in code.replace("[", "\n").replace("]", "\n").replace(";", "\n").splitlines():
        words = piece.strip().split(None, 1)
        if len(words) == 2 and words[0] in _STARTS:
            rest = words[1]
            while rest.startswith("-") and " " in rest:     # spawn -noecho CMD
                rest = rest.split(None, 1)[1]
            out.append(rest.replace("{", "'").replace("}", "'"))
    return out
