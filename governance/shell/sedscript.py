"""The commands a sed script runs: GNU sed's ``e COMMAND``, ``e`` alone (the line read is run as
a command) and the ``e`` flag of ``s///e`` (the line after the substitution is run); and the files
its ``w``, ``W`` and ``s///w`` commands write, which are targets like any other.

Imported by ``shell.resolver`` only for sed, and only when its script holds an ``e`` or a ``w``. A command
given in the script is analysed; one made of the lines sed reads is analysed when those lines are
known (a here-string, ``echo ... |``) and is shell-unknown otherwise, as is a substitution whose
result depends on the line it rewrites. ``--sandbox`` turns ``e`` off.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from governance.shell.parser import Simple
    from governance.shell.walk import Walk

_WHOLE_LINE = (".*", "^.*", "^.*$", ".*$", "^.\\+$", ".\\+", "^.+$", ".+")
_OPAQUE = "\x01"                # an expansion, in a script known only in part
_TO_END_OF_LINE = "aicrRwW:#"     # commands whose argument runs to the end of the line


def run(an: Walk, base: str, fields: list[str | None], raws: list[str], cmd: Simple | None,
        seg: str, depth: int) -> None:
    scripts: list[str | None] = []
    i, n = 1, len(fields)
    given = False
    while i < n:
        arg = fields[i]
        i += 1
        if arg in ("-e", "--expression", "-f", "--file"):
            value = fields[i] if i < n else ""
            i += 1
            given = True
            scripts.append(_given(value, raws, i - 1) if arg in ("-e", "--expression") else
                           _script_file(an, value, cmd))
        elif arg is not None and arg.startswith(("--expression=", "--file=")):
            given = True
            name, _, value = arg.partition("=")
            scripts.append(value if name == "--expression" else _script_file(an, value, cmd))
        elif arg == "--sandbox":
            return
        elif arg is not None and arg.startswith("-") and arg != "-":
            if not arg.startswith("--") and arg[-1] in "ef" and "i" not in arg[1:-1]:
                value = fields[i] if i < n else ""          # -ne SCRIPT
                i += 1
                given = True
                scripts.append(_given(value, raws, i - 1) if arg[-1] == "e" else
                               _script_file(an, value, cmd))
            elif arg in ("-l", "--line-length"):
                i += 1
        elif not given:
            scripts.append(arg if arg is not None else _shape(raws[i - 1]))
            given = True
    for script in scripts:
        if script is None or script.startswith("\0"):
            if script is None or commands(script[1:]):
                an.unknown(seg, f"{base} runs a script known only at run time")
            continue
        written: list[str] = []
        found = commands(script, written)
        for path in written:
            if path and _OPAQUE not in path:
                an.target(path, path, seg, "file-write", f"{base} writes {path} (its w command)")
            elif path:
                an.unknown(seg, f"{base} writes a file named only at run time (its w command)")
        for command in found:
            if command is None:
                _lines_read(an, base, cmd, seg, depth)
            else:
                an.script(command, depth + 1, seg)


def _script_file(an: Walk, value: str | None, cmd: Simple | None) -> str | None:
    """The text of ``sed -f FILE``: its input for ``-`` or ``/dev/stdin`` (None when that is
    produced at run time), a file the command wrote, else nothing known ("")."""
    if value in ("-", "/dev/stdin", "/dev/fd/0") and cmd is not None:
        kind, text = an.stdin_text(cmd)
        return text if kind == "literal" else None if kind == "opaque" else ""
    return (an.file_text(value) or "") if an.wrote(value) else ""


def _given(value: str | None, raws: list[str], k: int) -> str | None:
    return value if value is not None else _shape(raws[k]) if k < len(raws) else None


def _shape(raw: str) -> str:
    """A script with expansions in it (``"s/$OLD/$NEW/g"``), each expansion an opaque letter that
    is a command where a command goes; marked with a leading NUL."""
    out: list[str] = []
    i, n = 0, len(raw)
    while i < n:
        c = raw[i]
        if c == "$" and i + 1 < n and raw[i + 1] in "{(":
            close = "}" if raw[i + 1] == "{" else ")"
            end = raw.find(close, i)
            i = n if end < 0 else end + 1
            out.append(_OPAQUE)
        elif c == "$":
            i += 1
            while i < n and (raw[i].isalnum() or raw[i] in "_@*#?"):
                i += 1
            out.append(_OPAQUE)
        elif c in "'\"":
            i += 1
        else:
            out.append(c)
            i += 1
    return "\0" + "".join(out)


def _lines_read(an: Walk, base: str, cmd: Simple | None, seg: str, depth: int) -> None:
    kind, text = an.stdin_text(cmd) if cmd is not None else ("none", None)
    if kind == "literal" and text is not None:
        an.script(text, depth + 1, seg)
    else:
        an.unknown(seg, f"{base} runs the lines it reads as commands")


def commands(script: str, writes: list[str] | None = None) -> list[str | None]:
    """The commands ``e`` runs in one sed script; None for one made of the line read. The files
    its ``w FILE``, ``W FILE`` and ``s///w FILE`` write are added to ``writes``."""
    out: list[str | None] = []
    i, n = 0, len(script)
    while i < n:
        c = script[i]
        if c in " \t\n;{}!":
            i += 1
            continue
        if c.isdigit() or c in "$,~+":
            i += 1
            continue
        if c in "/\\":                               # an address: /RE/ or \cREc
            delim = script[i + 1] if c == "\\" and i + 1 < n else "/"
            i = _past(script, i + (2 if c == "\\" else 1), delim)
            continue
        if c == _OPAQUE:          # "s/a/b/;$MORE": any command; "${N}p": an address
            if i + 1 >= n or script[i + 1] in " \t\n;}" + _OPAQUE:
                out.append(None)
            i += 1
        elif c == "e":
            end = script.find("\n", i)
            end = n if end < 0 else end
            text = script[i + 1:end].strip()
            out.append(text or None)
            i = end
        elif c in "sy" and i + 1 < n:
            delim = script[i + 1]
            middle = _past(script, i + 2, delim)
            end = _past(script, middle, delim)
            flags_end = end
            while flags_end < n and script[flags_end] not in ";\n}w":
                flags_end += 1
            if c == "s" and _OPAQUE in script[end:flags_end]:
                out.append(None)
            elif c == "s" and "e" in script[end:flags_end]:
                pattern, replacement = script[i + 2:middle - 1], script[middle:end - 1]
                literal = "&" not in replacement and not any(
                    replacement[k] == "\\" and replacement[k + 1:k + 2].isdigit()
                    for k in range(len(replacement)))
                out.append(replacement.replace("\\n", "\n") if literal and
                           pattern in _WHOLE_LINE else None)
            i = flags_end
            if i < n and script[i] == "w":
                end = _line_end(script, i)
                if writes is not None and c == "s":
                    writes.append(script[i + 1:end].strip())
                i = end
        elif c in _TO_END_OF_LINE:
            end = _line_end(script, i)
            if writes is not None and c in "wW":
                writes.append(script[i + 1:end].strip())
            i = end
        elif c in "btTqQlLv":                        # a label or number, up to ; or the line end
            while i < n and script[i] not in ";\n}":
                i += 1
        else:
            i += 1
    return out


def _past(script: str, i: int, delim: str) -> int:
    """The index just after the next unescaped ``delim`` from ``i``."""
    n = len(script)
    while i < n and script[i] != delim:
        i += 2 if script[i] == "\\" else 1
    return i + 1


def _line_end(script: str, i: int) -> int:
    end = script.find("\n", i)
    return len(script) if end < 0 else end
