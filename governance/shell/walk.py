"""What the resolver needs of the analysis walking a command: the seam between the two.

The analysis (``shell.analysis``) implements it and calls the resolver; the resolver calls back
through this protocol only, so neither imports the other in a circle. Imported for types only.
"""

from __future__ import annotations

from typing import Any, Protocol


class Walk(Protocol):
    """The analysis in progress: its rules, variables and the acts found so far."""

    shell: dict[str, Any]
    vars: dict[str, str | None]
    ifs: bool
    files: dict[str, object]
    cwd: str | None          # the folder after a `cd`, relative to root ("" is root itself)
    root: str | None         # the folder the command runs in; None: files are not read
    origin: str              # the file being analysed, named in each act's reason
    level: int               # how many files deep
    reads: list[int]         # bytes and files the analysis may still read
    prose: list[str]         # message text the command was given (git commit -m TEXT)
    names: Any               # what names refer to (``shell.names``), None until one is defined
    budget: list[int]        # words the analysis may still read (a function call spends its body)

    listed: list[int]        # folder entries globs may still read
    checked: dict[str, bool]  # path -> protected, for a path named again
    loops: dict[str, list[str]]   # for NAME in WORDS: the values NAME takes
    mounts: dict[str, str]        # a container's folder -> this machine's folder mounted there
    text: str                # the whole command
    check: Any               # the path guard: protected paths, secret files and variables
    flow: Any                # what carries a secret so far (``shell.secrets``), None until one
    sockets: dict[str, str]  # exec 3<>/dev/tcp/HOST/PORT: descriptor -> HOST
    opened: dict[str, str]   # exec 3< FILE: descriptor -> FILE (read later with <&3)
    runtime: set[str]        # variables holding text read at run time (``read x``)
    integers: set[str]       # ``declare -i n``: what n is given is evaluated as arithmetic
    seen: dict[tuple[str, str], Any]   # (primitive, segment) -> its act
    acts: list[Any]          # the acts found so far

    def command(self, cmd: Any, depth: int, outer: str | None) -> None: ...

    def commands(self, cmds: list[Any], depth: int, outer: str | None) -> None: ...

    def enter(self, value: str | None) -> None: ...

    def expand_words(self, words: list[Any]) -> tuple[list[str | None], list[bool], list[str]]:
        ...

    def holds_protected(self, value: str | None, direct: bool = False) -> bool: ...

    def add(self, primitive: str, segment: str, reason: str) -> None: ...

    def resolve(self, fields: list[str | None], globs: list[bool], raws: list[str], cmd: Any,
                seg: str, depth: int) -> None: ...

    def plain(self, base: str, fields: list[str | None], raws: list[str], seg: str,
              depth: int = 0, cmd: Any = None) -> None: ...

    def unknown(self, segment: str, why: str) -> None: ...

    def script(self, text: str, depth: int, outer: str | None) -> None: ...

    def expand_one(self, parts: list[Any]) -> str | None: ...

    def target(self, value: str | None, raw: str, seg: str, primitive: str, reason: str,
               folder: bool | str = False, replaces: bool = False) -> None: ...

    def protected(self, value: str | None, raw: str) -> bool: ...

    def where(self, value: str | None) -> str: ...

    def change_dir(self, fields: list[str | None]) -> None: ...

    def folder(self) -> str | None: ...

    def stdin_text(self, cmd: Any) -> tuple[str, str | None]: ...

    def output_of(self, cmd: Any) -> str | None: ...

    def file_text(self, value: str | None) -> str | None: ...

    def wrote(self, value: str | None) -> bool: ...

    def written(self, value: str | None) -> None: ...

    def inline(self, language: str, code: str, seg: str, depth: int) -> None: ...

    def positional_secrets(self, raws: list[str]) -> dict[str, list[str] | None] | None: ...

    def restore_secrets(self, before: dict[str, list[str] | None]) -> None: ...
