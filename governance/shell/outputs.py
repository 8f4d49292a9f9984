"""Output files: the file a program writes because an argument names it (``iconv -o FILE``,
``uniq IN OUT``, ``python -m json.tool IN OUT``, ``yq -i EXPR FILE``, ``openssl enc -out FILE``).

Two sources, both data in the matrix (``shell.outputs``; ``shell.output_options`` and
``shell.output_words``):

- a program listed in ``outputs`` names its output by option (``options``), by position
  (``positional``: the Nth positional argument, or ``-1`` the last of two or more), or writes
  every positional argument when one of its ``in_place`` options is given (``""``: always);
  each such file is a ``file-write`` target, ``governance-admin`` when protected;
- any other program given an option spelled as an output whose value is a protected path, or
  the folder of one, is ``governance-admin``: an ``output_options`` spelling (``--output``,
  ``--out=``; ``-o``, ``-O`` and ``-oFILE`` for a program that is not read-only, since those give
  ``-o`` other meanings: ``grep -o``, ``ls -o``), or, for a program that is not read-only, a
  long option one of whose words starts with one of ``output_words`` (``--log-file``,
  ``--outDir``, ``--target-dir``, ``--junitxml``; not ``--timeout``).

Imported by ``shell.resolver`` only for a listed program or a command with an option.
"""

from __future__ import annotations

from governance.shell.rules import has_flag, lookup_name, parse_argv

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from governance.shell.walk import Walk


def outputs(an: Walk, base: str, first: str, fields: list[str | None], raws: list[str], seg: str,
            kind: str) -> None:
    """The output files of one resolved command (module docstring). ``kind``: ``read`` for a
    program governance lists as read-only, ``listed`` for one with patterns, else ``unlisted``."""
    shell = an.shell
    table: dict[str, Any] = shell.get("outputs", {})
    name = lookup_name(first, table)
    if name is not None:
        for path, spelled in _named(table[name], fields, raws):
            an.target(path, spelled, seg, "file-write", f"{base} writes {spelled}")
        return
    n = len(fields)
    for i in range(1, n):
        arg = fields[i]
        text = raws[i] if arg is None else arg     # --output="$f": the option's name is known
        if text[:1] != "-":
            continue
        if arg == "--":
            break
        option, eq, attached = text.partition("=") if text.startswith("--") else (text, "", "")
        value: str | None
        if (arg is None and not eq) or not _names_output(shell, option, kind):
            if kind == "read" or option.startswith("--") or option[:2] not in ("-o", "-O") or \
                    len(option) < 3:
                continue
            value, raw = option[2:], raws[i]          # -oFILE
        elif eq:
            value, raw = (None if arg is None else attached), raws[i][len(option) + 1:]
        elif i + 1 < n:
            value, raw = fields[i + 1], raws[i + 1]
        else:
            continue
        if an.protected(value, raw) or (value is not None and an.holds_protected(value, True)):
            an.add("governance-admin", seg, f"{base} {option} writes {raw}, a governance-protected "
                   "file or folder: ask the user to make this change from a terminal")


def _names_output(shell: dict[str, Any], option: str, kind: str) -> bool:
    """Whether an option is spelled as an output: one of ``output_options`` (a short one not for
    a listed program), or, for a program that is not read-only, a long option one of whose words
    starts with one of ``output_words`` (``--log-file``, ``--outDir``, ``--junitxml``)."""
    if option in shell.get("output_options", {}):
        return option.startswith("--") or kind == "unlisted" or (
            kind == "listed" and option in ("-o", "-O"))
    if kind == "read" or not option.startswith("--"):
        return False
    words: list[str] = []
    current = ""
    for c in option[2:]:
        if c in "-_." or c.isupper():
            words.append(current)
            current = c.lower() if c.isupper() else ""
        else:
            current += c
    words.append(current)
    starts = tuple(shell.get("output_words", ()))
    return bool(starts) and any(w.startswith(starts) for w in words if w)


def _named(spec: dict[str, Any], fields: list[str | None], raws: list[str]
           ) -> list[tuple[str | None, str]]:
    """The files a listed program writes: option values, the output position, or every
    positional argument in place."""
    argv = parse_argv(fields[1:], raws[1:], spec["with_value"])
    out: list[tuple[str | None, str]] = [
        (None, raw.partition("=")[2]) for field, raw in zip(fields[1:], raws[1:], strict=False)
        if field is None and raw.partition("=")[0] in spec["options"]]   # --output="$f"
    for option in spec["options"]:
        out.extend(argv.values.get(option, ()))
    positionals = argv.positionals
    in_place = spec["in_place"]
    if in_place and ("" in in_place or any(has_flag(argv.flags, f) for f in in_place if f)):
        out.extend(positionals)
        return out
    where = spec["positional"]
    if where > 0 and len(positionals) >= where:
        out.append(positionals[where - 1])
    elif where < 0 and len(positionals) >= 2:
        out.append(positionals[-1])
    return out
