"""Shell patterns: an argument vector -> the compiled ``shell.commands`` rules it matches.

Hot path: no imports. A rule (compiled by ``governance.shell.schema``) is a plain dict::

    {"primitive": "destructive", "reason": "...", "sub": ["push"] | None,
     "args": ["+*"] | None, "flags": ["-f", "--force"] | None, "text": ["drop database"] | None,
     "targets": "all" | "last" | "rest" | "", "targets_all_with": [...], "target_options": [...]}

All the conditions a rule names must hold; a rule without conditions always matches. ``flags`` and
``args`` and ``text`` match when any of their items does; ``unless`` (flags) rules the match out
when any of its flags is given; ``min_args`` asks for that many positional arguments after the
subcommand; ``no_args`` for none at all; ``last`` (globs) that the last argument matches one,
and ``not_last`` none (a destination known only at run time matches ``last`` and not
``not_last``); ``unknown_sub`` matches when the subcommand is known only at run time,
``unknown_args`` when an argument after it is; ``except_sub`` when there is a subcommand (a
word of letters and dashes) and it is none of those listed; ``modes`` when a ``chmod`` mode is
sweeping (``shell.modes``). ``--`` counts as a flag. A short flag ``-r`` also matches inside a
bundle such as ``-rf``; ``--force`` matches ``--force``, ``--force=...`` and the
abbreviations GNU parsers accept (``--forc``, at least three letters); a single-dash long flag
(``-delete``) matches exactly. ``args`` items are globs where ``*`` matches any run of characters.

A command may list the options of each subcommand (``options``: ``{"checkout": {"-b": 1, "-q":
0, "--track": -1}}``: values taken, 0 for none, -1 for a value that only follows ``=`` or the
letter). After such a subcommand, options are read as the program reads them (``_read_option``):
``-qbfeature`` is ``-q``, ``-b feature``; ``--conf merge`` is ``--conflict merge``. A table
marked complete (the key ``!``) lists every option: one it does not know is ``Argv.refused``,
and the program refuses the command (``git checkout --unified 3 main``).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any



class Argv:
    """Options and positional arguments of one command (after its name). ``text``: the options
    whose values are prose (a commit message), which no pattern reads."""

    __slots__ = ("flags", "positionals", "refused", "text", "values")

    def __init__(self) -> None:
        self.refused: str | None = None   # an option a complete table does not know
        self.flags: list[str] = []
        self.positionals: list[tuple[str | None, str]] = []
        self.values: dict[str, list[tuple[str | None, str]]] = {}
        self.text: list[str] = []


def parse_spec(spec: dict[str, Any], fields: list[str | None], raws: list[str]) -> Argv:
    """``parse_argv`` with everything a command's compiled spec says about its options."""
    operands = spec.get("dash_operands")
    if operands:       # chmod -x FILE: the mode, an operand, as the program reads it
        fields = [f"\0{f}" if f is not None and len(f) > 1 and f[0] == "-" and
                  f[1] != "-" and not f[1:].strip(operands) else f for f in fields]
    argv = parse_argv(fields, raws, spec["with_value"], spec.get("options"))
    if operands:
        argv.positionals = [(v[1:] if v is not None and v[:1] == "\0" else v, raw)
                            for v, raw in argv.positionals]
    argv.text = spec.get("messages", [])
    return argv


def parse_argv(fields: list[str | None], raws: list[str], with_value: dict[str, Any],
               tables: dict[str, dict[str, int]] | None = None) -> Argv:
    argv = Argv()
    i = 0
    n = len(fields)
    options_done = False
    table: dict[str, int] | None = None
    while i < n:
        arg = fields[i]
        raw = raws[i] if i < len(raws) else ""
        i += 1
        if arg is None or options_done or arg == "-" or not arg.startswith("-") or \
                (arg[1:2].isdigit() and arg[1:].isdigit()):
            argv.positionals.append((arg, raw))
            if tables and len(argv.positionals) == 1 and arg in tables:
                table = tables[arg]      # `git checkout ...`: the subcommand's own options
            continue
        if arg == "--":
            options_done = True
            argv.flags.append("--")  # patterns may ask for it: `git checkout -- PATH`
            continue
        if table is not None:
            i = _read_option(argv, table, arg, raw, fields, raws, i)
            continue
        name, eq, attached = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        argv.flags.append(name)
        if eq:
            argv.values.setdefault(name, []).append((attached, raw))
        elif name in with_value and i < n and with_value[name]:
            argv.values.setdefault(name, []).append((fields[i], raws[i] if i < len(raws) else ""))
            i += int(with_value[name])  # True (older caches) counts as one
        elif not name.startswith("--") and len(name) > 2 and name[:2] in with_value:
            argv.flags[-1] = name[:2]         # -o=Dpkg::Use-Pty=0: the value's letters are no flags
            argv.values.setdefault(name[:2], []).append((name[2:], raw))
        elif not name.startswith("--") and len(name) > 2:
            # a bundle whose later letter takes a value: curl -sSo FILE, tar -xzfFILE
            for k in range(2, len(name)):
                option = "-" + name[k]
                if option in with_value:
                    argv.flags.append(option)
                    if k + 1 < len(name):
                        argv.flags[-2] = name[:k + 1]    # tar -xzfFILE: FILE's letters are no flags
                        argv.values.setdefault(option, []).append((name[k + 1:], raw))
                    elif i < n:
                        argv.values.setdefault(option, []).append(
                            (fields[i], raws[i] if i < len(raws) else ""))
                        i += 1
                    break
    return argv


def _read_option(argv: Argv, table: dict[str, int], arg: str, raw: str, fields: list[str | None],
                 raws: list[str], i: int) -> int:
    """One option word read against an option table, as git's parse-options reads it; returns
    the index of the next word."""
    def take(option: str, attached: str | None) -> int:
        count = table.get(option, 0)
        if attached is not None and count:
            argv.values.setdefault(option, []).append((attached, raw))
        elif count > 0 and i < len(fields):
            argv.values.setdefault(option, []).append((fields[i], raws[i] if i < len(raws)
                                                       else ""))
            return i + count
        return i

    complete = COMPLETE in table
    if arg.startswith("--"):
        name, eq, attached = arg.partition("=")
        name = long_option(name, table)
        argv.flags.append(name)
        if complete and argv.refused is None and not _known_long(name, table):
            argv.refused = name
        return take(name, attached if eq else None)
    for k in range(1, len(arg)):                  # -qbfeature: -q, then -b with "feature"
        option = "-" + arg[k]
        argv.flags.append(option)
        if complete and argv.refused is None and option not in table:
            argv.refused = option
        if table.get(option, 0):
            return take(option, arg[k + 1:] or None)
    return i


COMPLETE = "!"     # an option table's mark: it lists every option the subcommand takes


def _known_long(name: str, table: dict[str, int]) -> bool:
    """Whether a long option word may be one the program takes: a table option, an abbreviation
    of one (an ambiguous one too), or its ``--no-`` form (which most take)."""
    if name == "--end-of-options":
        return True
    bare = "--" + name[5:] if name.startswith("--no-") else name
    return any(option.startswith(n) for option in table for n in (name, bare)
               if option.startswith("--"))


def long_option(name: str, table: dict[str, int]) -> str:
    """The option a long name means: itself, or the one option it abbreviates (``--conf`` for
    ``--conflict``); an ambiguous or unknown name is kept as given."""
    if name in table or len(name) < 3:
        return name
    found = [option for option in table if option.startswith(name) and option[:2] == "--"]
    return found[0] if len(found) == 1 else name


def glob_match(pattern: str, text: str) -> bool:
    """``*`` matches any run of characters; everything else matches itself."""
    if "*" not in pattern:
        return pattern == text
    pieces = pattern.split("*")
    if not text.startswith(pieces[0]) or not text.endswith(pieces[-1]):
        return False
    pos = len(pieces[0])
    limit = len(text) - len(pieces[-1])
    for piece in pieces[1:-1]:
        found = text.find(piece, pos, limit)
        if found < 0:
            return False
        pos = found + len(piece)
    return pos <= limit


def has_flag(flags: list[str], wanted: str) -> bool:
    """Whether ``wanted`` was given: exactly, inside a bundle of short flags (``-rf``), or as an
    abbreviation GNU-style parsers accept (``--recur`` for ``--recursive``: at least three
    letters, counted as a match however the program would resolve it)."""
    if wanted.startswith("--"):
        return wanted in flags or any(
            len(flag) >= 5 and flag.startswith("--") and wanted.startswith(flag) for flag in flags)
    if len(wanted) != 2:
        return wanted in flags
    letter = wanted[1]
    return any(flag == wanted or (not flag.startswith("--") and letter in flag[1:])
               for flag in flags)


def match_rule(rule: dict[str, Any], argv: Argv) -> list[tuple[str | None, str]] | None:
    """The targets of ``rule`` when it matches ``argv``, else None."""
    positionals = argv.positionals
    start = 0
    if rule.get("no_args") and positionals:
        return None
    if rule.get("unknown_sub"):   # the subcommand is known only at run time
        return [] if positionals and positionals[0][0] is None else None
    sub = rule.get("sub")
    if sub is not None:
        first = positionals[0][0] if positionals else None
        if first is None or (first not in sub and not (
                rule.get("sub_globs") and any(glob_match(g, first) for g in rule["sub_globs"]))):
            return None
        start = 1
    other = rule.get("except_sub")   # a subcommand, and none of these (governance cycle ...)
    if other is not None and (not positionals or positionals[0][0] in other or not str(
            positionals[0][0]).replace("-", "").isalnum()):      # rclone md5sum
        return None
    flags = rule.get("flags")
    if flags is not None and not any(has_flag(argv.flags, f) for f in flags):
        return None
    unless = rule.get("unless")
    if unless is not None and any(has_flag(argv.flags, f) for f in unless):
        return None
    if len(positionals) - start < rule.get("min_args", 0):
        return None
    if rule.get("unknown_args") and all(v is not None for v, _ in positionals[start:]):
        return None
    args = rule.get("args")
    if args is not None and not any(
            value is not None and glob_match(p, value) for value, _ in positionals[start:]
            for p in args):
        return None
    text = rule.get("text")
    if text is not None and not _mentions(argv, text):
        return None
    last = positionals[-1][0] if len(positionals) > start else ""
    wanted = rule.get("last")       # a destination known only at run time may be either
    if wanted is not None and last is not None and not any(glob_match(g, last) for g in wanted):
        return None
    unwanted = rule.get("not_last")
    if unwanted is not None and (last is None or any(glob_match(g, last) for g in unwanted)):
        return None
    if rule.get("modes"):     # chmod -R: only a mode that replaces, removes or opens (shell.modes)
        from governance.shell.modes import sweeping

        if not sweeping(argv.flags, argv.positionals[start:]):
            return None
    return _targets(rule, argv, start)


def _mentions(argv: Argv, needles: list[str]) -> bool:
    values = [v for v, _ in argv.positionals if v]
    for option, items in argv.values.items():
        if option not in argv.text:          # a commit message mentions; it does not act
            values.extend(v for v, _ in items if v)
    for value in values:
        lowered = value.lower()
        if any(n in lowered for n in needles):
            return True
    return False


def _targets(rule: dict[str, Any], argv: Argv, start: int) -> list[tuple[str | None, str]]:
    out: list[tuple[str | None, str]] = []
    mode = rule.get("targets", "")
    positionals = argv.positionals[start:]
    if mode == "all":
        out.extend(positionals)
    elif mode == "first":
        out.extend(positionals[:1])
    elif mode == "last":
        if len(positionals) >= 2:
            folder, raw = positionals[-1]
            out.append((folder, raw))
            if rule.get("into") and folder is not None and _itself(rule, argv):
                # cp -rT SRC DIR: SRC's files over DIR's, as cp -r SRC/. DIR (DIR/.) writes them
                out.append((folder.rstrip("/") + "/.", raw))
            elif rule.get("into") and folder is not None:   # cp a b DIR writes DIR/a and DIR/b
                for source, _ in positionals[:-1]:
                    if source:
                        name = source.rstrip("/").rsplit("/", 1)[-1]
                        out.append((folder.rstrip("/") + "/" + name, raw))
    elif mode == "rest":
        every = any(has_flag(argv.flags, f) for f in rule.get("targets_all_with", ()))
        out.extend(positionals if every else positionals[1:])
    for option in rule.get("target_options", ()):
        if option.endswith("="):
            out.extend((v[len(option):], raw) for v, raw in positionals
                       if v is not None and v.startswith(option))
            out.extend((None, raw[len(option):]) for v, raw in positionals  # of="$f"
                       if v is None and raw.startswith(option))
        else:
            given = argv.values.get(option, ())
            out.extend(given)
            if rule.get("into"):          # cp -t DIR a b writes DIR/a and DIR/b
                out.extend((folder.rstrip("/") + "/" + source.rstrip("/").rsplit("/", 1)[-1], raw)
                           for folder, raw in given if folder is not None
                           for source, _ in positionals if source)
    return out


def _itself(rule: dict[str, Any], argv: Argv) -> bool:
    """Whether a program that copies into a folder (``-t DIR``: GNU cp, install, ln) was told
    that its last name is the destination itself (``-T``, ``--no-target-directory``): ``cp -rT
    SRC DIR`` puts SRC's files over DIR's, as ``cp -r SRC/. DIR`` does."""
    return "-t" in rule.get("target_options", ()) and (
        has_flag(argv.flags, "-T") or has_flag(argv.flags, "--no-target-directory"))


FALSE_VALUES = ("none", "false", "0", "no", "off")


def harmless(argv: Argv, flags: list[str]) -> str | None:
    """The option that makes the command only print (help, version, a dry run), if one was
    given and not switched off (``--dry-run=none`` runs for real)."""
    for flag in flags:
        if flag == "--version" and argv.positionals:
            continue    # `dotnet add package X --version 13`: a value, not a question
        if has_flag(argv.flags, flag):
            values = [v for v, _ in argv.values.get(flag, ())]
            if not any(v is None or v.lower() in FALSE_VALUES for v in values):
                return flag
    return None


def match_command(spec: dict[str, Any], fields: list[str | None], raws: list[str],
                  harmless_flags: list[str] | None = None, argv: Argv | None = None
                  ) -> list[tuple[dict[str, Any], list[tuple[str | None, str]]]]:
    """Every rule of one command's spec that matches, with its file targets; nothing when an
    option makes the command only print (``harmless_flags`` and the spec's ``harmless``)."""
    argv = argv or parse_spec(spec, fields, raws)
    if harmless(argv, [*(harmless_flags or ()), *spec.get("harmless", ())]):
        return []
    out = []
    for rule in spec["patterns"]:
        targets = match_rule(rule, argv)
        if targets is not None:
            out.append((rule, targets))
    return out


def name_forms(name: str) -> tuple[str, ...]:
    """The names a command may be listed under: ``/usr/bin/python3.11`` -> ``python3.11``,
    ``python``; ``mkfs.ext4`` -> ``mkfs.ext4``, ``mkfs.ext``, ``mkfs``."""
    if "/" in name:
        name = name.rsplit("/", 1)[1]
    stripped = name.rstrip("0123456789.-")
    head = name.split(".", 1)[0] if "." in name else name
    if stripped == name and head == name:
        return (name,)
    return (name, stripped, head)


def lookup_name(name: str | tuple[str, ...], table: dict[str, Any]) -> str | None:
    """The key of ``table`` that a command name (or its ``name_forms``) means."""
    for form in (name_forms(name) if isinstance(name, str) else name):
        if form in table:
            return form
    return None


def known_name(shell: dict[str, Any], word: str) -> bool:
    """Whether ``word`` names a command the analysis knows (listed anywhere in ``shell``)."""
    forms = name_forms(word)
    return any(lookup_name(forms, shell.get(table, {})) is not None
               for table in ("commands", "wrappers", "shells", "evaluators", "interpreters",
                             "finders"))
