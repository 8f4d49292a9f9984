"""What a command name refers to, through one command: shell functions (analysed with the
arguments they are called with), aliases, names given to programs with ``hash -p``, copies and
links of programs (``cp``, ``ln``, ``install``, ``mv``, ``dd``), folders put on ``PATH``, and the
look-ups that print a program's path (``$(command -v curl)``, ``$(which git)``).

Imported by ``shell.resolver`` and ``shell.analysis`` only when a command defines, copies or looks
up a name; it keeps its table in ``Walk.names``. A name that refers to something known only at run
time (a copy of ``"$X"``, an alias to ``$CMD``, a folder filled with files of unknown names) is
``shell-unknown``. Where the analysis cannot tell which of two things a name runs (a function or
alias that shadows a known program may be undefined where it is called), it reads both.
"""

from __future__ import annotations

from governance import system
from governance.shell.copies import follow, key, record_copy
from governance.shell.rules import lookup_name, name_forms
from governance.shell.words import quote, word_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from governance.shell.parser import Simple
    from governance.shell.walk import Walk

# $(command -v P), $(which P) ...: what they print
LOOKUPS = frozenset(("command", "which", "type", "whence", "where", "hash", "readlink", "realpath"))
BUILTINS = frozenset((
    ".", ":", "[", "alias", "bg", "bind", "break", "builtin", "caller", "cd", "command", "compgen",
    "complete", "continue", "declare", "dirs", "disown", "echo", "enable", "eval", "exec", "exit",
    "export", "false", "fc", "fg", "getopts", "hash", "help", "history", "jobs", "kill", "let",
    "local", "logout", "mapfile", "popd", "printf", "pushd", "pwd", "read", "readarray",
    "readonly", "return", "set", "shift", "shopt", "source", "test", "times", "trap", "true",
    "type", "typeset", "ulimit", "umask", "unalias", "unset", "wait"))
_MAX_SUFFIXES = 8
_PATH_SETTERS = frozenset(("export", "declare", "typeset", "readonly", "local", "env"))
# what the resolver hands over (its NAMING, plus the commands that may set PATH)
_RECORDED = frozenset(("cp", "ln", "install", "ginstall", "mv", "link", "dd", "rsync", "hash",
                       "alias", "unalias", "unset", "shift")) | _PATH_SETTERS


class Names:
    """The names one command defines, as the analysis walks it."""

    __slots__ = ("aliases", "args", "called", "defined", "expanding", "files", "filled",
                 "functions", "hashed", "links", "path", "shifted", "stack")

    def __init__(self) -> None:
        self.functions: dict[str, list[Simple]] = {}
        self.defined: list[tuple[list[Simple], int]] = []   # every body, for those never called
        self.called: set[int] = set()
        self.aliases: dict[str, str | None] = {}
        self.hashed: dict[str, str | None] = {}
        self.files: dict[str, str | None] = {}   # a copy or link -> what it is (None: unknown)
        self.links: set[str] = set()              # those of ``files`` that are symbolic links
        self.filled: set[str] = set()             # folders given files of names not known
        self.path: list[str] = []                 # folders this command put on PATH
        self.args: list[str | None] | None = None  # positional parameters in a function call
        self.shifted = False
        self.stack: list[str] = []
        self.expanding: set[str] = set()


def table(an: Walk) -> Names:
    if an.names is None:
        an.names = Names()
    names: Names = an.names
    return names


# --- definitions ---------------------------------------------------------------------------------
def define(an: Walk, cmd: Simple, depth: int) -> None:
    """``f() { ...; }``: the body runs when ``f`` is called, with the call's arguments."""
    assert cmd.function is not None
    name, body = cmd.function
    names = table(an)
    names.functions[name] = body
    names.defined.append((body, depth))
    an.add("shell-read", cmd.segment, f"defines the function {name}")


def settle(an: Walk, since: int = 0) -> None:
    """Functions defined (from the ``since``-th definition on) and never called are still read,
    with arguments known only at run time: they may be called in a way the analysis does not
    follow. Done at the end of the text that defined them."""
    names: Names = an.names
    k = since
    while k < len(names.defined):             # a body read here may define more functions
        body, depth = names.defined[k]
        k += 1
        if id(body) not in names.called:
            names.called.add(id(body))
            _spend(an, body)
            saved = _positional(an, None)
            try:
                for cmd in body:
                    an.command(cmd, depth, None)
            finally:
                _restore(an, saved)


def positional(an: Walk, args: list[str | None] | None) -> None:
    """Set the positional parameters (``$1`` .. ``$#``, ``"$@"``, ``$*``): ``set -- ARGS``."""
    _positional(an, args)


def _positional(an: Walk, args: list[str | None] | None) -> tuple[object, dict[str, str | None]]:
    names = table(an)
    saved = {k: an.vars.pop(k) for k in list(an.vars) if k.isdigit() or k in ("@", "*", "#")}
    before, names.args = names.args, args
    if args is None:
        for k in ("@", "*", "#", *(str(n) for n in range(1, 10))):
            an.vars[k] = None
    else:
        for n in range(1, max(10, len(args) + 1)):
            an.vars[str(n)] = args[n - 1] if n <= len(args) else ""
        joined = None if any(a is None for a in args) else " ".join(str(a) for a in args)
        an.vars["@"] = an.vars["*"] = joined
        an.vars["#"] = str(len(args))
    return before, saved


def run_with(an: Walk, args: list[str | None], raws: list[str], run: Callable[[], None]) -> None:
    """Run ``run`` with ``$0`` set to the first of ``args`` and the positional parameters to the
    rest (``sh -c TEXT NAME ARGS``), each holding the secrets its word carries; as before after."""
    saved = _positional(an, args[1:])
    an.vars["0"] = args[0]
    before = an.positional_secrets(raws)
    try:
        run()
    finally:
        _restore(an, saved)
        _untaint(an, before)


def _untaint(an: Walk, before: dict[str, list[str] | None] | None) -> None:
    if before is not None:
        an.restore_secrets(before)


def _restore(an: Walk, saved: tuple[object, dict[str, str | None]]) -> None:
    names = table(an)
    before, values = saved
    for k in [k for k in an.vars if k.isdigit() or k in ("@", "*", "#")]:
        del an.vars[k]
    an.vars.update(values)
    names.args = before  # type: ignore[assignment]


def all_args(an: Walk) -> list[str | None] | None:
    """``"$@"`` word by word, inside a function call or after ``set --``; None: not known."""
    names: Names | None = an.names
    return names.args if names is not None else None


def spread(args: list[str | None], current: list[str] | None, pending: list[str],
           param: str = "@") -> tuple[list[str] | None, list[str]]:
    """``"$@"`` inside a word: the first argument joins what came before, the last what comes
    after, each one a word of its own ("\\x00": a word known only at run time; "\\x01": no
    arguments at all). ``param`` ``@:N[:M]`` is a slice (``$0`` counts as unknown)."""
    if param != "@":
        bounds = [int(b) for b in param[2:].split(":")]
        every: list[str | None] = [None, *args]
        start = bounds[0]
        args = every[start:start + bounds[1]] if len(bounds) > 1 else every[start:]
    if not args:
        if current == []:
            pending.append("\x01")
        return current, pending
    first = args[0]
    if len(args) == 1:
        return (None if current is None or first is None else [*current, first]), pending
    pending.append("\x00" if current is None or first is None else "".join([*current, first]))
    pending.extend("\x00" if a is None else a for a in args[1:-1])
    last = args[-1]
    return (None if last is None else [last]), pending


# --- look-ups ------------------------------------------------------------------------------------
def lookup(an: Walk, words: list[str]) -> str | None:
    """What ``command -v P``, ``which P``, ``type -P P``, ``hash -t P``, ``readlink -f P`` ...
    print: the program's path, as far as the analysis knows it; None when not known."""
    tool, args = words[0], words[1:]
    opts = "".join(a[1:] for a in args if a.startswith("-") and a != "-")
    rest = [a for a in args if not a.startswith("-")]
    if len(rest) != 1:
        return None
    target = rest[0]
    if (tool == "command" and opts != "v") or (tool == "which" and "a" in opts) or \
            (tool == "type" and not ("P" in opts or "p" in opts)) or \
            (tool in ("whence", "where") and "p" not in opts) or (tool == "hash" and opts != "t"):
        return None
    if tool in ("readlink", "realpath"):
        if tool == "readlink" and not any(c in opts for c in "fem"):
            return None
        return follow(an, target) if "/" in target else target
    return program_path(an, target)


def program_path(an: Walk, name: str) -> str | None:
    if "/" in name:
        return follow(an, name)
    names: Names | None = an.names
    if names is not None:
        if name in names.aliases:
            return None
        if name in names.functions or name in BUILTINS:
            return name
        if name in names.hashed:
            return names.hashed[name]
        found = _on_path(an, names, name)
        if found is not None:
            return found[1]
    elif name in BUILTINS:
        return name
    return "/usr/bin/" + name


def on_path(an: Walk, name: str) -> str | None:
    """The file a program named without a path runs from: the first folder of the command's
    ``PATH`` (folders it put there first, then its ``PATH=`` or the environment's) that holds
    one, or None."""
    names: Names | None = getattr(an, "names", None)
    folders = [*(names.path if names is not None else ()),
               *(an.vars.get("PATH") or system.environ_get("PATH") or "").split(":")]
    for folder in folders:
        if folder and system.isfile(system.join(folder, name)):
            return system.join(folder, name)
    return None


def _on_path(an: Walk, names: Names, name: str) -> tuple[str, str | None] | None:
    """A name found in a folder this command put on PATH: (the path, what it refers to)."""
    for folder in names.path:
        path = system.join(folder, name)
        if path in names.files or folder in names.filled or any(
                path.startswith(f + "/") for f in names.files):
            return path, follow(an, path)
        if an.wrote(path):
            return path, path
    return None


# --- what a command does to names ----------------------------------------------------------------
def step(an: Walk, fields: list[str | None], raws: list[str], cmd: Simple | None, seg: str,
         depth: int, first_hop: bool) -> list[str | None] | None:
    """One hop of the resolver: the argument vector with its command name replaced by what the
    name refers to, or None when the command was analysed here (a function call, an alias)."""
    first = str(fields[0])
    if first_hop and cmd is not None:
        for name, word in cmd.assigns:
            if name == "PATH" and word.text is not None:
                add_path(an, str(word.text[word.start:word.end]))
    base = first.rsplit("/", 1)[-1]
    if base in _RECORDED:
        _record(an, base, fields, raws)
    names: Names | None = an.names
    if names is None:
        return fields
    if "/" in first:
        target = follow(an, first)
        if target == first:
            return fields
        if target is None:
            an.unknown(seg, f"{raws[0]} is a copy or link of a program known only at run time")
            return None
        return [target, *fields[1:]]
    if first in names.aliases and first not in names.expanding:
        return _alias(an, names, first, fields, seg, depth, first_hop)
    if first_hop and first in names.functions and first not in names.stack:
        return _call(an, names, first, fields, cmd, seg, depth)
    if first_hop and first in names.stack and cmd is not None and (
            cmd.background or cmd.piped or cmd.piped_from is not None):
        # :(){ :|:& };: a function that starts copies of itself, each starting more
        an.add("destructive", seg, f"the function {first} starts copies of itself in a pipe or "
                                   "the background without end (a fork bomb): the machine runs "
                                   "out of processes")
        return None
    mapped: tuple[str, str | None] | None = None
    if first in names.hashed:
        mapped = (first, names.hashed[first])
    elif names.path:
        mapped = _on_path(an, names, first)
    if mapped is None:
        return fields
    if mapped[1] is None:
        an.unknown(seg, f"{first} names a program known only at run time")
        return None
    if _also_original(an, first):
        an.resolve([mapped[1], *fields[1:]], [False] * len(fields), list(raws), cmd, seg, depth)
        return fields
    return [mapped[1], *fields[1:]]


def _also_original(an: Walk, name: str) -> bool:
    """Whether the program a name shadows is read as well (a builtin or a known command)."""
    if name in BUILTINS:
        return True
    forms = name_forms(name)
    return any(lookup_name(forms, an.shell.get(table, {})) is not None
               for table in ("commands", "wrappers", "shells", "evaluators", "interpreters",
                             "finders"))


def _spend(an: Walk, body: list[Simple]) -> None:
    """Calls that call functions that call functions ... read at most ``limits.max_words``."""
    an.budget[0] -= len(body) + 1
    if an.budget[0] < 0:
        from governance.shell.words import LimitError

        raise LimitError("too many function calls to read")


def _alias(an: Walk, names: Names, name: str, fields: list[str | None], seg: str, depth: int,
           first_hop: bool) -> list[str | None] | None:
    value = names.aliases[name]
    if value is None:
        an.unknown(seg, f"the alias {name} stands for a command known only at run time")
        return None
    rest = " ".join(quote(f) if f is not None else '"$__unknown"' for f in fields[1:])
    names.expanding.add(name)
    try:
        an.script(f"{value} {rest}", depth + 1, seg)
    finally:
        names.expanding.discard(name)
    return fields if not first_hop or _also_original(an, name) else None


def _call(an: Walk, names: Names, name: str, fields: list[str | None], cmd: Simple | None,
          seg: str, depth: int) -> list[str | None] | None:
    """A function call: its body, with the call's arguments as positional parameters. A body that
    shifts its arguments (a loop over them) is read once for each suffix of them."""
    if depth + 1 > an.shell.get("limits", {}).get("max_depth", 6):
        an.unknown(seg, "functions call each other too deep")
        return None
    body = names.functions[name]
    names.called.add(id(body))
    _spend(an, body)
    args = list(fields[1:])
    raws = [word_text(w) for w in cmd.words] if cmd is not None and len(cmd.words) == len(
        fields) else [quote(f) if f is not None else '"$__unknown"' for f in fields]
    runs: list[list[str | None] | None] = [args]
    names.stack.append(name)
    try:
        k = 0
        while k < len(runs):
            if k:
                _spend(an, body)
            saved = _positional(an, runs[k])
            before = an.positional_secrets([raws[0], *raws[1 + len(args) - len(runs[k] or ()):]])
            shifted, names.shifted = names.shifted, False
            try:
                for sub in body:
                    an.command(sub, depth + 1, seg)
            finally:
                _restore(an, saved)
                _untaint(an, before)
                if names.shifted and k == 0:
                    runs.extend(args[n:] for n in range(1, len(args))) \
                        if len(args) <= _MAX_SUFFIXES else runs.append(None)
                names.shifted = shifted
            k += 1
    finally:
        names.stack.pop()
    return fields if _also_original(an, name) else None


def add_path(an: Walk, raw: str) -> None:
    """``PATH=DIR:$PATH``: the literal folders put on PATH."""
    text = raw.replace('"', "").replace("'", "")
    if "=" in text:
        text = text.split("=", 1)[1]
    names = table(an)
    for piece in text.split(":"):
        for here in ("$PWD", "${PWD}", "$(pwd)", "`pwd`"):     # "$PWD/bin": a folder here
            if piece == here or piece.startswith(here + "/"):
                piece = "." + piece[len(here):]
        if "$" in piece or "`" in piece:
            continue
        folder = key(an, piece or ".")
        if folder not in names.path:
            names.path.append(folder)


def _record(an: Walk, base: str, fields: list[str | None], raws: list[str]) -> None:
    args = fields[1:]
    if base in _PATH_SETTERS:
        for raw in raws[1:]:
            if raw.replace('"', "").replace("'", "").startswith("PATH="):
                add_path(an, raw)
        return
    names = table(an)
    if base == "hash":
        if "-r" in args:
            names.hashed.clear()
        elif len(args) >= 3 and args[0] == "-p":
            for name in args[2:]:
                if name is not None:
                    names.hashed[name] = follow(an, args[1])
    elif base == "alias":
        for arg in args:
            if arg is not None and "=" in arg and not arg.startswith("-"):
                name, _, value = arg.partition("=")
                names.aliases[name] = value
    elif base == "unalias":
        for arg in args:
            if arg == "-a":
                names.aliases.clear()
            names.aliases.pop(str(arg), None)
    elif base == "unset" and args and args[0] == "-f":
        for arg in args[1:]:
            names.functions.pop(str(arg), None)
    elif base == "shift":
        if names.args is not None:
            count = args[0] if args else "1"
            n = int(count) if count is not None and count.isdigit() else None
            positional(an, None if n is None else names.args[n:])
            names.shifted = True
    else:
        record_copy(an, "install" if base == "ginstall" else base, args)
