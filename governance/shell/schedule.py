"""Tables of scheduled commands: ``crontab FILE``, ``... | crontab -``. Each entry's command runs
later, unattended, so it is analysed as if it ran now, and installing the table is
``shell-background``; a table known only at run time is ``shell-unknown``.

Imported by ``shell.resolver`` for a program whose entry has ``schedule: true``.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from governance.shell.parser import Simple
    from governance.shell.walk import Walk

_SETTING = re.compile(r"\s*[A-Za-z_][A-Za-z0-9_]*\s*=")    # SHELL=/bin/bash, MAILTO=...
_LISTING = ("-l", "-r", "-e", "-V", "--help", "--version")   # nothing installed from a table
_VALUED = ("-u", "-n")


def entries(text: str) -> list[str]:
    """The commands of a user crontab's entries: five time fields (or one ``@reboot``-style
    nickname), then the command up to its first unescaped ``%`` (what follows is its input)."""
    found: list[str] = []
    for line in text.splitlines():
        entry = line.strip()
        if not entry or entry[0] == "#" or _SETTING.match(entry):
            continue
        parts = entry.split(None, 1 if entry[0] == "@" else 5)
        if len(parts) < (2 if entry[0] == "@" else 6):
            continue                                    # no command: cron refuses the line
        found.append(_before_input(parts[-1]))
    return [command for command in found if command.strip()]


def _before_input(command: str) -> str:
    out: list[str] = []
    k = 0
    while k < len(command):
        c = command[k]
        if c == "\\" and command[k + 1:k + 2] == "%":
            out.append("%")
            k += 2
            continue
        if c == "%":
            break
        out.append(c)
        k += 1
    return "".join(out)


def install(an: Walk, base: str, fields: list[str | None], raws: list[str], cmd: Simple,
            seg: str, depth: int) -> None:
    """``crontab [-u USER] [FILE|-]``: the table it installs, from the file or standard input."""
    named: list[tuple[str | None, str]] = []
    k = 1
    while k < len(fields):
        field = fields[k]
        if field in _LISTING:
            return                                        # crontab -l, -r: no table is read
        if field in _VALUED:
            k += 2
            continue
        if field is None or field == "-" or field[:1] != "-":
            named.append((field, raws[k]))
        k += 1
    text: str | None
    if not named or named[0][0] == "-":
        kind, read = an.stdin_text(cmd)
        if kind == "file":
            text = _file(an, base, read, read or "-", seg)
        elif kind == "literal":
            text = read
        else:
            an.unknown(seg, f"{base} installs scheduled commands fed to it at run time, which "
                            "cannot be read before they run")
            return
    else:
        value, raw = named[0]
        if value is None:
            an.unknown(seg, f"{base} installs scheduled commands from {raw}, a file known only "
                            "at run time")
            return
        text = _file(an, base, value, raw, seg)
    an.add("shell-background", seg, f"{base} installs commands that run later, unattended")
    for command in entries(text or ""):
        an.script(command, depth + 1, seg)


def _file(an: Walk, base: str, value: str | None, raw: str, seg: str) -> str | None:
    from governance.shell import source

    path = source.path_of(an, value)
    if path is None:
        if value is not None and an.file_text(value) is not None:
            return an.file_text(value)
        an.unknown(seg, f"{base} installs scheduled commands from {raw}, which cannot be read "
                        "before they run")
        return None
    return source.text_of(an, base, path, raw, seg)
