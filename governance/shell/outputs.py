"""Output files: the file a program writes because an argument names it (``iconv -o FILE``,
``uniq IN OUT``, ``python -m json.tool IN OUT``, ``yq -i EXPR FILE``, ``openssl enc -out FILE``).

Two sources, both data in the matrix (``shell.outputs``, ``shell.output_options``):

- a program listed in ``outputs`` names its output by option (``options``), by position
  (``positional``: the Nth positional argument, or ``-1`` the last of two or more), or writes
  every positional argument when one of its ``in_place`` options is given (``""``: always);
  each such file is a ``file-write`` target, ``governance-admin`` when protected;
- any other program given an option spelled as an output (``output_options``: ``--output``,
  ``--out=``, ``-o`` ...) whose value is a protected path is ``governance-admin``. Long spellings
  count for every program, short ones (``-o``, ``-O``) only for a program governance does not
  list, since listed ones give them other meanings (``grep -o``, ``xxd -o``).

Imported by ``shell.resolver`` only for a listed program or a command with an option.
"""

from __future__ import annotations

from governance.shell.rules import has_flag, lookup_name, parse_argv

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from governance.shell.walk import Walk


def outputs(an: Walk, base: str, first: str, fields: list[str | None], raws: list[str], seg: str,
          listed: bool) -> None:
    """The output files of one resolved command (module docstring). ``listed``: governance
    lists the program (its short options are its own)."""
    shell = an.shell
    table: dict[str, Any] = shell.get("outputs", {})
    name = lookup_name(first, table)
    if name is not None:
        for path, spelled in _named(table[name], fields, raws):
            an.target(path, spelled, seg, "file-write", f"{base} writes {spelled}")
        return
    spellings: dict[str, int] = shell.get("output_options", {})
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
        long = option.startswith("--")
        if (listed and not long) or (arg is None and not eq):
            continue
        if option in spellings:
            if eq:
                value, raw = (None if arg is None else attached), raws[i][len(option) + 1:]
            elif i + 1 < n:
                value, raw = fields[i + 1], raws[i + 1]
            else:
                continue
        elif not long and option[:2] in spellings and len(option) > 2:
            value, raw = option[2:], raws[i]          # -oFILE
        else:
            continue
        if an.protected(value, raw):
            an.add("governance-admin", seg, f"{base} {option} writes {raw}, a governance-protected "
                   "file: ask the user to make this change from a terminal")


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
