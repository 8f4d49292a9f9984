"""Editor command lines: what Vim, ex and ed commands run (``vim -c CMD``, ``vim +CMD``,
``nvim --cmd CMD``, an ed or ex script on standard input).

``ex_commands(text)`` returns what the commands run, as ``(kind, text)`` pairs: ``("sh", CMD)``
for a shell command (``!CMD``, ``r !CMD``, ``w !CMD``, ``e !CMD``, ``terminal CMD``,
``system('CMD')`` and the other functions that run one, with a literal argument), ``(LANGUAGE,
CODE)`` for the interfaces to other languages (``py3 CODE``, ``lua CODE``, ``perl CODE``,
``ruby CODE``), and ``("unknown", WHY)`` for what is known only when it runs (a function's
argument built at run time, a script file sourced, keys typed by ``normal`` that hold a ``!``).
Ranges (``%``, ``1,$``), modifiers (``silent!``) and ``|`` between commands are read as Vim reads
them; ``g/RE/CMD`` and ``bufdo CMD`` run CMD. Everything else edits text and runs nothing.

No imports (hot path of the modules that need it: ``shell.embedded``).
"""

from __future__ import annotations

_READS = frozenset(("r", "re", "rea", "read", "e", "E", "ed", "edi", "edit"))
_WRITES = frozenset(("w", "wr", "wri", "writ", "write", "W", "up", "update"))
_LANGUAGES = {"py": "python", "python": "python", "py3": "python", "python3": "python",
              "pyx": "python", "pythonx": "python", "pydo": "python", "py3do": "python",
              "pyxdo": "python", "lua": "lua", "luado": "lua", "perl": "perl",
              "perldo": "perl", "ruby": "ruby", "rubydo": "ruby", "rub": "ruby"}
_FILES = frozenset(("so", "sou", "sour", "sourc", "source", "ru", "runtime", "pyf", "pyfile",
                    "py3f", "py3file", "pyxfile", "luafile", "rubyf", "rubyfile", "perlfile",
                    "mz", "mzscheme", "mzf", "mzfile", "tcl", "tcldo", "tclfile"))
_TERMINAL = frozenset(("ter", "term", "termi", "termin", "termina", "terminal"))
_REPEATS = frozenset(("windo", "bufdo", "argdo", "tabdo", "cdo", "ldo", "cfdo", "lfdo"))
_GLOBALS = frozenset(("g", "gl", "glo", "glob", "globa", "global", "v", "vg", "vgl", "vglo",
                      "vglob", "vgloba", "vglobal"))
_EXECUTES = frozenset(("exe", "exec", "execu", "execut", "execute"))
_NORMAL = frozenset(("norm", "norma", "normal"))
_MODIFIERS = ("silent!", "silent", "sil!", "sil", "unsilent", "keepalt", "keepjumps",
              "keepmarks", "keeppatterns", "lockmarks", "noautocmd", "noswapfile", "sandbox",
              "vertical", "botright", "topleft", "aboveleft", "belowright", "tab", "confirm",
              "hide", "verbose")
# functions that run a shell command (execute() runs ex commands)
_RUNNERS = ("systemlist", "system", "jobstart", "job_start", "termopen", "term_start")
_OPAQUE = ("libcallnr", "libcall", "luaeval", "py3eval", "pyeval", "pyxeval", "rubyeval",
           "perleval", "vim.fn", "vim.cmd", "nvim_exec", "nvim_command", "nvim_call")
_RANGE = frozenset("0123456789.,;$%+-'<> \t")
_MAX = 64


def ex_commands(text: str, depth: int = 0) -> list[tuple[str, str]]:
    """What the ex commands in ``text`` run (see the module's docstring)."""
    out: list[tuple[str, str]] = []
    if depth > 4:
        return [("unknown", "the editor commands nest too deep")]
    for line in text.splitlines():
        rest = line
        count = 0
        while rest and count < _MAX:
            count += 1
            rest = _one(rest, out, depth)
    return out


def _one(text: str, out: list[tuple[str, str]], depth: int) -> str:
    """Read one command; return the text after it (the next command after ``|``)."""
    cmd = _strip(text)
    if not cmd:
        return ""
    if cmd[0] == "!":
        out.append(("sh", cmd[1:]))
        return ""                          # :!CMD takes the rest of the line, bars and all
    k = 0
    while k < len(cmd) and (cmd[k].isalnum() or cmd[k] == "_"):
        k += 1
    word, after = cmd[:k], cmd[k:]
    if word in _READS and after.lstrip().startswith("!"):
        out.append(("sh", after.lstrip()[1:]))
        return ""
    if word in _WRITES and after[:1] in (" ", "\t") and after.lstrip().startswith("!"):
        out.append(("sh", after.lstrip()[1:]))
        return ""
    if word in _LANGUAGES:
        out.append((_LANGUAGES[word], after.lstrip(" \t")))
        return ""
    if word in _FILES:
        out.append(("unknown", f"the editor runs the script {after.strip() or word}"))
        return ""
    if word in _TERMINAL:
        command = after.lstrip(" \t")
        while command.startswith("++"):                  # :terminal ++close CMD
            command = command.split(None, 1)[1] if " " in command else ""
        out.append(("sh", command) if command else ("unknown", "the editor opens a shell"))
        return ""
    if word in _GLOBALS or (word in ("g", "global") and after[:1] == "!"):
        body = after.lstrip("!").lstrip(" \t")
        if body:
            end = body.find(body[0], 1)
            out.extend(ex_commands(body[end + 1:] if end > 0 else "", depth + 1))
        return ""
    if word in _REPEATS:
        out.extend(ex_commands(after, depth + 1))
        return ""
    if word in _EXECUTES:
        literal = _literal(after.strip())
        if literal is not None:
            out.extend(ex_commands(literal, depth + 1))
        elif "!" in after or _calls(after, out):
            out.append(("unknown", "the editor executes commands built at run time"))
        return ""
    if word in _NORMAL:
        keys = after[1:] if after[:1] == "!" else after
        if "!" in keys or (":" in keys and ("system" in keys or "py" in keys or "lua" in keys)):
            out.append(("unknown", "the editor types keys that may run a command"))
        return ""
    _calls(cmd, out)
    bar = _bar(after)
    return after[bar + 1:] if bar >= 0 else ""


def _strip(text: str) -> str:
    """A command without its leading colons, range and modifiers."""
    cmd = text.lstrip(" \t:")
    while True:
        before = cmd
        while cmd and cmd[0] in _RANGE:
            cmd = cmd[1:]
        cmd = cmd.lstrip(" \t:")
        for modifier in _MODIFIERS:
            if cmd.startswith(modifier) and (cmd[len(modifier):len(modifier) + 1] in
                                             (" ", "\t", "") or modifier.endswith("!")):
                cmd = cmd[len(modifier):].lstrip(" \t")
                break
        if cmd == before:
            return cmd


def _calls(text: str, out: list[tuple[str, str]]) -> bool:
    """Functions in an expression that run a command: a literal argument is the command, any
    other is unknown. Whether any was found."""
    found = False
    for name in (*_RUNNERS, "execute"):
        at = text.find(name + "(")
        while at >= 0:
            if at == 0 or not (text[at - 1].isalnum() or text[at - 1] in "_#"):
                found = True
                literal = _literal(text[at + len(name) + 1:], closing=True)
                if literal is None:
                    out.append(("unknown", f"the editor calls {name}() with a value known only "
                                           "at run time"))
                elif name == "execute":
                    out.extend(ex_commands(literal, 1))
                else:
                    out.append(("sh", literal))
            at = text.find(name + "(", at + 1)
    for name in _OPAQUE:
        if name in text:
            found = True
            out.append(("unknown", f"the editor runs code through {name}"))
    if any(name + "(" in text for name in _FILE_FUNCTIONS):
        found = _file_calls(text, out) or found
    return found


# Vim's functions that change files, as the shell commands that do the same: delete(P, "rf"),
# writefile(LINES, P), rename(A, B), mkdir(P), filecopy(A, B)
_FILE_FUNCTIONS = ("delete", "writefile", "rename", "mkdir", "filecopy")


def _file_calls(text: str, out: list[tuple[str, str]]) -> bool:
    import re

    found = False
    for match in re.finditer(r"(?<![\w#.:])(delete|writefile|rename|mkdir|filecopy)\s*\(", text):
        name = match.group(1)
        args = _arguments(text[match.end():])
        found = True
        if args is None:
            out.append(("unknown", f"the editor calls {name}() with values known only at run "
                                   "time"))
            continue
        quoted = [_shell_quote(a) if a is not None else '"$__unknown"' for a in args]
        if name == "delete" and quoted:
            flags = args[1] if len(args) > 1 else ""
            out.append(("sh", f"rm {'-rf ' if flags and 'r' in flags else ''}-- {quoted[0]}"
                        if flags != "d" else f"rmdir -- {quoted[0]}"))
        elif name == "writefile" and len(quoted) > 1:
            out.append(("sh", f": > {quoted[1]}"))
        elif name in ("rename", "filecopy") and len(quoted) > 1:
            out.append(("sh", f"{'mv' if name == 'rename' else 'cp'} -- {quoted[0]} "
                              f"{quoted[1]}"))
        elif name == "mkdir" and quoted:
            out.append(("sh", f"mkdir -p -- {quoted[0]}"))
    return found


def _arguments(text: str) -> list[str | None] | None:
    """A call's arguments up to its closing parenthesis: each a string literal's value, or None
    for any other expression (a list such as ``["x"]`` stands as it is, unread); None when the
    call does not close."""
    args: list[str | None] = []
    depth, start, i = 0, 0, 0
    while i < len(text):
        c = text[i]
        if c in "'\"":
            quote, i = c, i + 1
            while i < len(text) and text[i] != quote:
                i += 2 if quote == '"' and text[i] == "\\" else 1
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0 and c == ")":
                args.append(_literal(text[start:i]))
                return args if text[:i].strip() else []
            depth -= 1
        elif c == "," and depth == 0:
            args.append(_literal(text[start:i]))
            start = i + 1
        i += 1
    return None


def _shell_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _literal(text: str, closing: bool = False) -> str | None:
    """The value of a Vim string literal that is the whole of ``text`` (with ``closing``: that
    is followed by ``)``); None for any other expression."""
    text = text.lstrip(" \t")
    if not text or text[0] not in "'\"":
        return None
    quote, out, i = text[0], [], 1
    while i < len(text):
        c = text[i]
        if quote == "'" and c == "'":
            if text[i + 1:i + 2] == "'":
                out.append("'")
                i += 2
                continue
            break
        if quote == '"' and c == "\\" and i + 1 < len(text):
            out.append({"n": "\n", "t": "\t"}.get(text[i + 1], text[i + 1]))
            i += 2
            continue
        if quote == '"' and c == '"':
            break
        out.append(c)
        i += 1
    else:
        return None
    tail = text[i + 1:].strip()
    if closing:
        return "".join(out) if tail.startswith(")") else None
    return "".join(out) if not tail or tail[0] == "|" else None


def _bar(text: str) -> int:
    """Where the next command starts: a ``|`` outside quotes, or -1."""
    quote = ""
    for i, c in enumerate(text):
        if quote:
            if c == quote:
                quote = ""
        elif c == "'" or (c == '"' and i > 0 and text[i - 1] in " \t(,"):
            quote = c
        elif c == "|":
            return i
    return -1
