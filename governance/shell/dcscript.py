"""dc programs: the shell commands their ``!`` runs.

GNU dc (and the BSD dc) runs the rest of a line after ``!`` as a shell command (``dc -e '!rm -rf
x'``), also from inside a string executed later as a macro (``[!CMD]x``, ``[!CMD]sa lax``), where
the command ends with the line or with the string. What is not a command: ``!<r``, ``!>r``,
``!=r`` (conditions, ``r`` a register), a register's name after ``s l S L : ; < > =`` (``s!``
stores into the register named ``!``), and comments (``#`` to the end of the line). A string
is read as the program it may become, nested strings included. dc builds no longer strings at
run time (``a`` makes one character), so the commands are all in the text.

Imported by ``shell.embedded`` only for the ``"@dc"`` form (dc's ``-e``, ``-f``, its file
arguments and its input); imports nothing.
"""

from __future__ import annotations

_REGISTER = frozenset("slSL:;<>=")   # commands whose next character names a register
_MAX_NESTING = 64


def shell_commands(text: str) -> list[str] | None:
    """The shell command lines ``text`` may run, in order; None when its strings nest deeper
    than can be read."""
    out: list[str] = []
    return out if _scan(text, out, 0) else None


def _scan(text: str, out: list[str], level: int) -> bool:
    if level > _MAX_NESTING:
        return False
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end + 1
        elif c == "[":
            end = _closing(text, i)
            if not _scan(text[i + 1:end], out, level + 1):
                return False
            i = end + 1
        elif c in _REGISTER:
            i += 2
        elif c == "!":
            if text[i + 1:i + 2] in ("<", ">", "="):
                i += 3
                continue
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(text[i + 1:end])
            i = end
        else:
            i += 1
    return True


def _closing(text: str, start: int) -> int:
    """The index of the ``]`` that closes the string opened at ``start`` (the end of the text
    when it is never closed)."""
    depth = 0
    for k in range(start, len(text)):
        if text[k] == "[":
            depth += 1
        elif text[k] == "]":
            depth -= 1
            if depth == 0:
                return k
    return len(text)
