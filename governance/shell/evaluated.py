"""Text bash itself evaluates: arithmetic, variable names with subscripts, prompt strings.

Bash reads some values as code. An arithmetic expression (``$((x))``, ``$[x]``, ``((x))``,
``let x``, ``[[ x -eq 1 ]]``, an assignment to a ``declare -i`` variable, an indexed array's
subscript, a ``${s:offset}``) looks up each name it mentions and evaluates that variable's value as
arithmetic in turn, and an array subscript met there is expanded again, so
``x='a[$(rm -rf /srv)]'; echo $((x))`` runs ``rm -rf /srv``. The same holds for a name with a
subscript given to ``test -v``, ``printf -v``, ``read``, ``declare``, ``unset``, ``mapfile``,
``getopts``, a nameref or ``${!x}``, and for a prompt string (``${x@P}``, ``PS1``, ``PS4`` ...).

Here such text is read the way bash reads it: the command substitutions it holds are analysed as
commands, each name it mentions is followed to its value (and that value evaluated likewise), and
text known only at run time that came from data (``read``, ``mapfile``, a command's output) and
reaches such a place is ``shell-unknown``. Ordinary arithmetic (numbers, counters, ``$(wc -l)``)
finds nothing to report.

Imported by ``shell.analysis`` and ``shell.resolver`` only when a word holds arithmetic or a
complex ``${...}``, or a builtin that takes names runs. Hot path rules: no ``re``.
"""

from __future__ import annotations

from governance.shell.parser import LimitError, ParseError, Parser
from governance.shell.words import name_end

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from governance.shell.parser import Simple
    from governance.shell.walk import Walk

_MAX_HOPS = 8
_NAME_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
# programs whose output is a number, so text they print into arithmetic is no code
_COUNTERS = frozenset(("wc", "nproc", "expr", "id", "getconf", "seq", "stat", "du"))
# programs that print nothing but their own messages: no text of a file or the network
_SILENT = frozenset(("rm", "rmdir", "mkdir", "touch", "cp", "mv", "ln", "chmod", "chown", "true",
                     "false", ":", "sleep", "cd", "kill", "wait"))
# builtins whose arguments (or some of them) are variable names, maybe with a subscript
NAMING = frozenset(("let", "test", "[", "[[", "printf", "read", "declare", "typeset", "local",
                    "export", "readonly", "unset", "mapfile", "readarray", "getopts", "wait",
                    "complete", "compgen"))
_ARITH_TESTS = frozenset(("-eq", "-ne", "-lt", "-le", "-gt", "-ge"))
READ_VALUED = frozenset(("-d", "-i", "-n", "-N", "-p", "-t", "-u"))
_MAPFILE_VALUED = frozenset(("-d", "-n", "-O", "-s", "-u", "-c"))
PROMPTS = frozenset(("PS0", "PS1", "PS2", "PS3", "PS4"))


def holds_code(text: str) -> bool:
    """Whether text bash evaluates would run or expand something: ``$(``, a backquote, ``${``."""
    return "$(" in text or "`" in text or "${" in text


# --- arithmetic ------------------------------------------------------------------------------
def arithmetic(an: Walk, text: str, seg: str, depth: int, *, value: bool = False,
               hops: int = 0) -> None:
    """An arithmetic expression's text. ``value``: the text is a variable's value (or an expanded
    word), whose command substitutions were not analysed yet; otherwise it is the command's own
    source text, whose substitutions the analysis reads anyway."""
    if hops > _MAX_HOPS or not text or text.strip().lstrip("+-").isdigit():
        return
    parts = _parts(an, text, seg)
    if parts is None:
        return
    for kind, name, _quoted, subs in parts:
        if kind == "lit":
            for ident in _identifiers(name):
                _evaluated_name(an, ident, seg, depth, hops)
        elif kind == "var":
            _evaluated_name(an, name, seg, depth, hops)
        elif kind == "param":
            if value and subs:
                an.commands(subs, depth + 1, seg)
            param(an, name, seg, depth, hops=hops + 1)
            if not value and runtime_parts(an, [(kind, name, _quoted, None)]):
                an.unknown(seg, f"${{{name}}} holds text read at run time, and bash evaluates "
                                "it as arithmetic, which runs the command substitutions it may "
                                "hold")
        elif kind == "arith":
            if value and subs:
                an.commands(subs, depth + 1, seg)
            arithmetic(an, name, seg, depth, hops=hops + 1)
        elif kind == "sub":
            if value and subs:
                an.commands(subs, depth + 1, seg)
            elif subs and not _numeric(an, subs):
                printed = an.output_of(subs[-1]) if len(subs) == 1 else None
                if printed is not None and not holds_code(printed):   # $(echo literal text)
                    arithmetic(an, printed, seg, depth, value=True, hops=hops + 1)
                else:
                    an.unknown(seg, "the output of a command is evaluated as arithmetic, which "
                                    "runs the command substitutions it may hold")


def _evaluated_name(an: Walk, name: str, seg: str, depth: int, hops: int) -> None:
    """A variable arithmetic reads: its value is evaluated as arithmetic too."""
    base = name[:-3] if name.endswith(("[@]", "[*]")) else name
    known = an.vars.get(base)
    if known is not None:
        arithmetic(an, known, seg, depth, value=True, hops=hops + 1)
        return
    if base in an.loops:
        for item in an.loops[base]:
            if not item.startswith("\0"):
                arithmetic(an, item, seg, depth, value=True, hops=hops + 1)
        if not any(item.startswith("\0") for item in an.loops[base]):
            return     # read from a file whose lines are known (done < data.txt): those lines
    if base in an.runtime:
        an.unknown(seg, f"${base} holds text read at run time, and bash evaluates it as "
                        "arithmetic, which runs the command substitutions it may hold")


def _identifiers(text: str) -> list[str]:
    """The variable names an arithmetic text mentions (not digits of a number like ``16#ff``)."""
    found: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isdigit():
            while i < n and (text[i].isalnum() or text[i] in "#_@"):
                i += 1
        elif c in _NAME_START:
            j = name_end(text, i, n)
            found.append(text[i:j])
            i = j
        else:
            i += 1
    return found


def _parts(an: Walk, text: str, seg: str) -> list[Any] | None:
    """Text read as bash expands it (as inside double quotes); None when it cannot be read."""
    try:
        return list(Parser(text, 1, _nesting(an), 0, an.budget)._dquote_body(
            0, heredoc=True).parts)
    except (ParseError, LimitError):
        an.unknown(seg, "bash evaluates text that cannot be parsed")
        return None


def _nesting(an: Walk) -> int:
    return int(an.shell.get("limits", {}).get("max_nesting", 48))


def _numeric(an: Walk, subs: list[Simple]) -> bool:
    """Whether a command substitution prints a number (``$(wc -l < f)``, ``$(grep -c x f)``)."""
    last = subs[-1]
    if not last.words:
        return False
    fields = an.expand_words(last.words)[0]
    head = (fields[0] or "").rsplit("/", 1)[-1]
    if any(f is not None and holds_code(f) for f in fields):
        return False
    if head in _COUNTERS or head in _SILENT:
        return True
    from governance.shell.rules import known_name, lookup_name, name_forms

    if head and "/" not in (fields[0] or "/") and not known_name(an.shell, head) and \
            lookup_name(name_forms(head), an.shell.get("read_only", {})) is None and \
            head not in ("cat", "echo", "printf"):
        return True          # a program governance does not know is reported as such already
    if head == "grep" and any(f is not None and (f == "--count" or (
            f[:1] == "-" and f[1:2] != "-" and "c" in f)) for f in fields[1:]):
        return True
    if head == "date":
        return all(f is not None for f in fields)
    if head in ("echo", "printf") and len(last.words) == 2:
        return all(p[0] == "arith" or (p[0] == "lit" and p[1].strip().isdigit())
                   for p in last.words[1].parts)
    return head == "git" and "--count" in fields


# --- ${...} ----------------------------------------------------------------------------------
def param(an: Walk, body: str, seg: str, depth: int, hops: int = 0) -> None:
    """The inside of a ``${...}``: ``${!x}`` reads x's value as a name, ``${x@P}`` expands it as a
    prompt, ``${a[T]}`` and ``${s:T:T}`` evaluate T as arithmetic."""
    if hops > _MAX_HOPS:
        return
    n = len(body)
    if body[:1] == "!" and name_end(body, 1, n) == n > 1:     # ${!x}: the name x holds
        known = an.vars.get(body[1:])
        if known is not None:
            name(an, known, seg, depth)
        elif body[1:] in an.runtime:
            an.unknown(seg, f"${{!{body[1:]}}} reads a variable whose name is text read at run "
                            "time")
        return
    start = 1 if body[:1] in "#!" else 0
    end = name_end(body, start, n)
    if end == start:
        return
    rest = body[end:]
    if rest[:1] == "[":
        close = _closing(rest)
        subscript = rest[1:close]
        if subscript not in ("@", "*"):
            arithmetic(an, subscript, seg, depth, hops=hops + 1)
        rest = rest[close + 1:]
    if rest[:1] == ":" and rest[1:2] not in ("-", "=", "?", "+"):
        arithmetic(an, rest[1:], seg, depth, hops=hops + 1)        # ${s:offset:length}
    elif rest == "@P":
        known = an.vars.get(body[start:end])
        if known is not None:
            prompt(an, known, seg, depth)
        elif body[start:end] in an.runtime:
            an.unknown(seg, f"${{{body}}} expands text read at run time as a prompt, which runs "
                            "the command substitutions it holds")


def _closing(text: str) -> int:
    level = 0
    for k, c in enumerate(text):
        if c == "[":
            level += 1
        elif c == "]":
            level -= 1
            if level == 0:
                return k
    return len(text)


# --- names and prompts -----------------------------------------------------------------------
def name(an: Walk, text: str, seg: str, depth: int) -> None:
    """Text bash reads as a variable name: a subscript in it is evaluated as arithmetic."""
    if "[" in text or holds_code(text):
        arithmetic(an, text, seg, depth, value=True)


def name_field(an: Walk, field: str | None, raw: str, seg: str, depth: int) -> None:
    """An expanded word a builtin takes as a variable name."""
    if field is not None:
        name(an, field, seg, depth)
    elif runtime_word(an, raw):
        an.unknown(seg, f"{raw} names a variable with text read at run time; bash evaluates a "
                        "subscript in it, which runs the command substitutions it may hold")


def prompt(an: Walk, text: str, seg: str, depth: int) -> None:
    """A prompt string (``PS1``, ``PS4``, ``${x@P}``): its command substitutions run."""
    if not holds_code(text):
        return
    parts = _parts(an, text, seg)
    for kind, value, _quoted, subs in parts or ():
        if kind == "param":
            param(an, value, seg, depth)
        elif kind == "arith":
            arithmetic(an, value, seg, depth, value=True)
        if subs:
            an.commands(subs, depth + 1, seg)


def hook(an: Walk, var: str, known: str | None, raw: str, seg: str, depth: int) -> None:
    """A variable whose value bash runs: ``PROMPT_COMMAND`` (commands), ``PS0``..``PS4``
    (prompts), ``BASH_FUNC_NAME%%`` (a function a child bash imports)."""
    if known is None:
        if runtime_word(an, raw):
            an.unknown(seg, f"{var} is set to text known only at run time, and bash runs it")
        return
    if var == "PROMPT_COMMAND":
        an.script(known, depth + 1, seg)
    elif var in PROMPTS:
        prompt(an, known, seg, depth)
    elif var.startswith("BASH_FUNC_") and known.lstrip().startswith("()"):
        func = var[10:].removesuffix("%%").removesuffix("()")
        an.script(f"{func} {known}", depth + 1, seg)


def hooked(var: str) -> bool:
    return var == "PROMPT_COMMAND" or var in PROMPTS or var.startswith("BASH_FUNC_")


# --- where run-time text comes from ------------------------------------------------------------
def runtime_word(an: Walk, raw: str) -> bool:
    """Whether a word's value is text read at run time: a variable ``read`` or a command's output
    filled, or a command substitution that does not print a number."""
    if "$" not in raw and "`" not in raw:
        return False
    try:
        parser = Parser(raw, 1, _nesting(an), 0, an.budget)
        parts = parser.word().parts
    except (ParseError, LimitError):
        return True
    return runtime_parts(an, parts)


def runtime_parts(an: Walk, parts: list[Any]) -> bool:
    for kind, value, _quoted, subs in parts:
        if kind == "var":
            base = value[:-3] if value.endswith(("[@]", "[*]")) else value
            if base in an.runtime:
                return True
        elif kind == "param":
            start = 1 if value[:1] in "#!" else 0
            if value[start:name_end(value, start, len(value))] in an.runtime:
                return True
            if subs and not _numeric(an, subs):
                return True
        elif kind == "sub" and subs and not _numeric(an, subs):
            return True
    return False


def filled(an: Walk, var: str, known: str | None, parts: list[Any] | None) -> None:
    """Record whether ``var`` now holds text read at run time."""
    if known is None and (parts is None or runtime_parts(an, parts)):
        an.runtime.add(var)
    else:
        an.runtime.discard(var)


# --- builtins that take names --------------------------------------------------------------------
def builtin(an: Walk, base: str, fields: list[str | None], raws: list[str], seg: str,
            depth: int) -> None:
    """``let EXPR``, ``test -v NAME``, ``[[ A -eq B ]]``, ``printf -v NAME``, ``read NAME``,
    ``declare NAME=V`` (``-i``: V is arithmetic; ``-n``: V is a name), ``unset NAME``,
    ``mapfile NAME`` (``-C CMD`` runs CMD), ``getopts OPTS NAME``, ``wait -p NAME``,
    ``complete -C CMD`` and ``compgen -C CMD`` (run CMD)."""
    args, words = fields[1:], raws[1:]
    if base not in ("let", "test", "[", "printf", "read", "mapfile", "readarray", "getopts",
                    "wait", "complete", "compgen", "unset"):   # [[ and declare do not split words
        args, words = _unsplit(args, words)
    if base == "let":
        for arg, raw in zip(args, words, strict=False):
            _expression(an, arg, raw, seg, depth)
    elif base in ("test", "[", "[["):
        for k, arg in enumerate(args):
            if arg == "-v" and k + 1 < len(args):
                name_field(an, args[k + 1], words[k + 1], seg, depth)
            elif base == "[[" and arg in _ARITH_TESTS and 0 < k < len(args) - 1:
                _expression(an, args[k - 1], words[k - 1], seg, depth)
                _expression(an, args[k + 1], words[k + 1], seg, depth)
    elif base == "printf":
        if len(args) >= 2 and args[0] == "-v":
            name_field(an, args[1], words[1], seg, depth)
    elif base in ("read", "mapfile", "readarray", "getopts", "wait", "complete", "compgen"):
        _options(an, base, args, words, seg, depth)
    elif base == "unset":
        for arg, raw in zip(args, words, strict=False):
            if arg is None or not arg.startswith("-"):
                name_field(an, arg, raw, seg, depth)
    else:                                   # declare, typeset, local, export, readonly
        flags = "".join(a[1:] for a in args if a is not None and a[:1] in "-+" and len(a) > 1)
        for arg, raw in zip(args, words, strict=False):
            if arg is not None and arg[:1] in "-+":
                continue
            var, eq, rest = (arg or "").partition("=")
            if arg is None:
                var, eq, rest = raw.partition("=")
                name_field(an, None if "$" in var or "`" in var else var, var, seg, depth)
                if eq and ("i" in flags or "n" in flags) and runtime_word(an, rest):
                    an.unknown(seg, f"{raw} gives text read at run time to a variable bash "
                                    "evaluates")
                continue
            name(an, var, seg, depth)
            if eq and rest.startswith("(") and rest.endswith(")") and arg != raw:
                # declare 'a=([$(CMD)]=1)': bash parses a quoted compound value as typed
                an.script(f"{var}={rest}", depth + 1, seg)
            if eq and "i" in flags:
                arithmetic(an, rest, seg, depth, value=True)
            elif eq and "n" in flags:
                name(an, rest, seg, depth)
            if eq and hooked(var):
                hook(an, var, rest, raw, seg, depth)
            if "i" in flags:
                an.integers.add(var)


def _unsplit(args: list[str | None], words: list[str]) -> tuple[list[str | None], list[str]]:
    joined: list[str | None] = []
    raws: list[str] = []
    for arg, raw in zip(args, words, strict=False):
        if raws and raws[-1] is raw:
            last = joined[-1]
            joined[-1] = None if last is None or arg is None else f"{last} {arg}"
        else:
            joined.append(arg)
            raws.append(raw)
    return joined, raws


def _expression(an: Walk, field: str | None, raw: str, seg: str, depth: int) -> None:
    if field is not None:
        arithmetic(an, field, seg, depth, value=True)
    elif runtime_word(an, raw):
        an.unknown(seg, f"{raw} is text read at run time that bash evaluates as arithmetic, "
                        "which runs the command substitutions it may hold")


def _options(an: Walk, base: str, args: list[str | None], words: list[str], seg: str,
             depth: int) -> None:
    """The names (and commands) given to read, mapfile, getopts, wait, complete and compgen."""
    valued = READ_VALUED if base == "read" else _MAPFILE_VALUED if base in (
        "mapfile", "readarray") else frozenset()
    names: list[tuple[str | None, str]] = []
    k = 0
    while k < len(args):
        arg = args[k]
        if arg is not None and arg[:1] == "-" and len(arg) > 1 and arg != "--":
            letter = arg[-1]
            value = arg[2:] if len(arg) > 2 and arg[1] != letter else None
            if len(arg) == 2 or arg[1:].isalpha():
                value = None
            given = args[k + 1] if k + 1 < len(args) else ""
            raw = words[k + 1] if k + 1 < len(words) else ""
            if (letter, base) in (("a", "read"), ("p", "wait")) and value is None:
                names.append((given, raw))
                k += 2
                continue
            if letter == "C" and base in ("mapfile", "readarray", "complete", "compgen"):
                if given is None:
                    an.unknown(seg, f"{base} -C runs a command known only at run time")
                elif given:
                    an.script(given, depth + 1, seg)
                k += 2
                continue
            if "-" + letter in valued or (base in ("complete", "compgen") and letter in
                                          "AGWFXPSo"):
                k += 2
                continue
            k += 1
            continue
        if base in ("complete", "compgen", "wait"):
            break
        names.append((arg, words[k]))
        k += 1
    if base == "getopts":
        names = names[1:2]
    if base in ("mapfile", "readarray"):
        names = names[:1] or [("MAPFILE", "MAPFILE")]
    for field, raw in names:
        name_field(an, field, raw, seg, depth)
        if base == "read" and field in an.integers and field in an.runtime:
            an.unknown(seg, f"read gives {field}, declared -i, text read at run time, which bash "
                            "evaluates as arithmetic")
        if base in ("mapfile", "readarray") and field is not None:
            an.vars[field] = None
            an.runtime.add(field)


def table_entry(an: Walk, table: str, head: str, parts: list[Any], seg: str) -> None:
    """``BASH_CMDS[ls]=PATH`` is ``hash -p PATH ls``; ``BASH_ALIASES[ls]=TEXT`` is
    ``alias ls=TEXT`` (``shell.names``); also as ``BASH_CMDS=([ls]=PATH ...)``."""
    from governance.shell.copies import follow
    from governance.shell.names import table as names_table

    entries: list[tuple[str | None, str | None]] = []
    if parts and parts[0][0] == "arr":
        for item in str(parts[0][1]).split("\0"):
            key, _, rest = item.partition("]=")
            entries.append((key[1:] if key[:1] == "[" and "$" not in key else None,
                            an.expand_one(_parts(an, rest.strip("'\""), seg) or [])
                            if "$" not in rest and "`" not in rest else None))
    else:
        subscript = head[head.find("[") + 1:head.rfind("]")]
        entries.append((None if "$" in subscript or "`" in subscript else subscript.strip("'\""),
                        an.expand_one(parts)))
    names = names_table(an)
    for entry, value in entries:
        if entry is None:
            an.unknown(seg, f"{table} gives a command name known only at run time a new meaning")
        elif table == "BASH_CMDS":
            names.hashed[entry] = None if value is None else follow(an, value)
        else:
            names.aliases[entry] = value


def heredoc(an: Walk, body: str, seg: str, depth: int) -> None:
    """An unquoted here-document's arithmetic and ``${...}`` (its command substitutions are
    read with the command)."""
    parts = _parts(an, body, seg)
    for kind, value, _quoted, _subs in parts or ():
        if kind == "arith":
            arithmetic(an, value, seg, depth)
        elif kind == "param":
            param(an, value, seg, depth)
