"""A program whose text is known, by language: shell commands (analysed as a script one level
deeper) or code of an interpreter's language (``python``, ``node``, ...), told by the interpreter's
name or the text's ``#!`` line. Used by ``shell.script`` and ``shell.source``; imports nothing.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from governance.shell.walk import Walk

# interpreter name -> the language ``shell.inline`` reads
LANGUAGES = {"python": "python", "pypy": "python", "node": "node", "bun": "node", "deno": "node",
             "perl": "perl", "ruby": "ruby", "php": "php", "lua": "lua", "luajit": "lua",
             "Rscript": "r", "R": "r", "julia": "julia", "tclsh": "tcl", "wish": "tcl",
             "pwsh": "powershell", "powershell": "powershell"}


def language_of(name: str) -> str | None:
    """The language ``shell.inline`` reads for an interpreter's name (``python3.12`` -> python)."""
    return next((lang for prefix, lang in LANGUAGES.items() if name.startswith(prefix)), None)


def shebang_language(text: str) -> str | None:
    """The language of a program by its ``#!`` line (``#!/usr/bin/env -S python3 -u``), None for
    shell commands or no such line."""
    if not text.startswith("#!"):
        return None
    words = [w for w in text.split("\n", 1)[0][2:].split() if not w.startswith("-")]
    name = (words[1] if words and words[0].endswith("/env") and len(words) > 1
            else words[0] if words else "").rsplit("/", 1)[-1]
    return language_of(name)


def interpreter_argv(text: str, shells: dict[str, object]) -> list[str] | None:
    """The words a ``#!`` line puts before a program run by its path when the interpreter is
    neither a shell nor a language ``shell.inline`` reads (``#!/bin/rm -rf``: the kernel runs
    ``/bin/rm -rf PATH ARGS``); None otherwise. The kernel passes the rest of the line after the
    interpreter as one argument."""
    if not text.startswith("#!"):
        return None
    line = text.split("\n", 1)[0][2:].strip()
    interpreter, _, rest = line.partition(" ")
    name = interpreter.rsplit("/", 1)[-1]
    if not name:
        return None
    if name == "env":
        words = [w for w in rest.split() if not w.startswith("-")]
        name = words[0].rsplit("/", 1)[-1] if words else ""
    if name in shells or language_of(name) is not None or name == "env":
        return None
    rest = rest.strip()
    return [interpreter, rest] if rest else [interpreter]


def program(an: Walk, text: str, language: str | None, seg: str, depth: int) -> None:
    """A program whose text is known: shell commands, or code (by ``language`` or its #! line)."""
    if language is None:
        language = shebang_language(text)
    if language is None:
        an.script(text, depth + 1, seg)
    else:
        an.inline(language, text, seg, depth)


__all__ = ["LANGUAGES", "interpreter_argv", "language_of", "program", "shebang_language"]
