"""Inline Tcl (``tclsh <<< CODE``, ``wish`` scripts): Tcl is words and commands, so it is read as
Tcl reads it rather than with patterns: commands end at a newline or ``;``, ``#`` starts a comment
where a command starts, ``{...}`` is a literal word, ``"..."`` and bare words substitute ``$var``
and ``[command]``, ``{*}`` splices a list. See ``shell.inline`` for what findings mean.

Read: ``exec`` (its words are the command, ``|`` and redirections kept), ``open "|CMD"`` and
``open FILE w``, ``file delete`` (``-force`` deletes folders: destructive), ``file rename|copy|
mkdir|link``, ``socket``, ``http::geturl``; ``eval``/``uplevel``/``interp eval`` of a literal and
every braced word (a body of ``if``, ``proc``, ``foreach``, ``catch`` ...) and bracketed command are
read as Tcl too. A command named at run time, ``eval $x``, ``load`` and ``exec`` of a run-time
program are ``shell-unknown``. No imports at load time.
"""

from __future__ import annotations

from governance.shell.finding import MAX_DEPTH, Finding, file, run_argv, run_cmd

_SWITCHES = ("-ignorestderr", "-keepnewline", "--")
_EVAL = ("eval", "uplevel", "subst", "apply")
_DATA = ("exec", "open", "file", "puts", "set", "list", "lappend", "regexp", "regsub", "string",
         "dict", "format", "expr", "return", "lindex", "lsort", "join", "split")
_UNKNOWN = ("load", "interp", "rename", "trace", "namespace")   # only some of their forms


def findings(code: str, depth: int = 0) -> list[Finding]:
    out: list[Finding] = []
    if depth > MAX_DEPTH:
        return [Finding("shell-unknown", "the Tcl code nests evaluated code too deeply")]
    for words in _commands(code, out, depth):
        _command(words, out, depth)
    return out


Word = tuple[str | None, bool]     # (value or None when substituted at run time, braced)


def _commands(code: str, out: list[Finding], depth: int) -> list[list[Word]]:
    """The commands of a script: each a list of words; bracketed commands inside words are read
    on the way (their findings go to ``out``)."""
    cmds: list[list[Word]] = []
    words: list[Word] = []
    i, n = 0, len(code)
    while i < n:
        c = code[i]
        if c in "\n;":
            if words:
                cmds.append(words)
            words = []
            i += 1
        elif c in " \t\r" or (c == "\\" and code[i + 1:i + 2] == "\n"):
            i += 2 if c == "\\" else 1
        elif c == "#" and not words:
            while i < n and code[i] != "\n":
                i += 2 if code[i] == "\\" else 1
        else:
            word, i = _word(code, i, out, depth)
            words.append(word)
    if words:
        cmds.append(words)
    return cmds


def _word(code: str, i: int, out: list[Finding], depth: int) -> tuple[Word, int]:
    n = len(code)
    spliced = code.startswith("{*}", i) and i + 3 < n and not code[i + 3].isspace()
    if spliced:
        i += 3
    if code[i] == "{":
        level, j = 0, i
        while j < n:
            if code[j] == "\\":
                j += 2
                continue
            level += (code[j] == "{") - (code[j] == "}")
            j += 1
            if level == 0:
                break
        return ((None if spliced else code[i + 1:j - 1]), True), j
    quoted = code[i] == '"'
    j = i + quoted
    value: list[str] = []
    live = spliced
    while j < n:
        c = code[j]
        if quoted and c == '"':
            j += 1
            break
        if not quoted and (c.isspace() or c == ";"):
            break
        if c == "\\" and j + 1 < n:
            value.append({"n": "\n", "t": "\t"}.get(code[j + 1], code[j + 1]))
            j += 2
            continue
        if c == "[":
            level, k = 0, j
            while k < n:
                if code[k] == "\\":
                    k += 2
                    continue
                level += (code[k] == "[") - (code[k] == "]")
                k += 1
                if level == 0:
                    break
            out.extend(findings(code[j + 1:k - 1], depth + 1))
            live, j = True, k
            continue
        if c == "$" and j + 1 < n and (code[j + 1].isalnum() or code[j + 1] in "_{:"):
            live = True
        value.append(c)
        j += 1
    return (None if live else "".join(value), False), j


def _command(words: list[Word], out: list[Finding], depth: int) -> None:
    name, args = words[0][0], [w for w, _braced in words[1:]]
    for k, (value, braced) in enumerate(words[1:], 1):   # bodies of if, proc, foreach, catch ...
        if braced and value and name not in _DATA and not _expression(words, k):
            out.extend(findings(value, depth + 1))
    if name is None:
        out.append(Finding("shell-unknown", "the Tcl code runs a command named at run time"))
        return
    name = name.removeprefix("::")
    reason = f"the Tcl code calls {name}"
    if name == "exec":
        while args and args[0] in _SWITCHES:
            args = args[1:]
        _exec(out, args, reason)
    elif name == "open" and args:
        target = args[0]
        if target is None:
            out.append(Finding("shell-unknown", reason + " on a file or pipe named at run time"))
        elif target.startswith("|"):
            _exec(out, _split(target[1:]), reason)
        elif len(args) > 1 and (args[1] is None or any(m in args[1] for m in "wa+")
                                or "WRONLY" in args[1] or "RDWR" in args[1]):
            file(out, "write", target, reason)
    elif name == "file" and args:
        sub, paths = args[0], [a for a in args[1:] if a is None or not a.startswith("-")]
        forced = "-force" in args[1:]
        if sub == "delete":
            for path in paths or [None]:
                file(out, "destroy" if forced else "del", path, reason + " delete")
        elif sub in ("rename", "copy", "link", "mkdir"):
            if sub == "rename" and paths:
                file(out, "del", paths[0], reason + " rename")
            for path in paths[-1:] if sub != "mkdir" else paths:
                file(out, "write", path, f"{reason} {sub}")
    elif name in ("socket", "http::geturl", "::http::geturl"):
        url = args[0] if name != "socket" else next((a for a in args if a is None or
                                                     not a.startswith("-")), None)
        out.append(Finding("web-fetch", reason, path=url if name != "socket" else None))
    elif name in _EVAL:
        body = [a for a in args if a is None or not (name == "uplevel" and (a.isdigit() or
                                                                            a.startswith("#")))]
        if any(a is None for a in body):
            out.append(Finding("shell-unknown", reason + " on code known only at run time"))
        elif name != "subst" and body and not any(b for _v, b in words[1:]):
            out.extend(findings(" ".join(str(a) for a in body), depth + 1))
    elif name in _UNKNOWN and (name == "load" or args[:1] in (["eval"], ["invokehidden"])):
        out.append(Finding("shell-unknown", reason + ": what it runs is known only at run time"))


def _expression(words: list[Word], k: int) -> bool:
    """Whether word ``k`` is an expression or an argument list, not a script: ``expr {..}``,
    the condition of ``if``/``elseif``/``while``/``for``, ``proc``'s parameters."""
    name, before = words[0][0], words[k - 1][0]
    return name == "expr" or (name in ("if", "while") and k == 1) or before == "elseif" or \
        (name == "for" and k == 2) or (name == "proc" and k == 2)


def _exec(out: list[Finding], args: list[str | None], reason: str) -> None:
    if not args or args[0] is None:
        run_argv(out, [None], reason)
        return
    if any(a is not None and (a in ("|", "|&") or a[:1] in "<>" or a[:2] in ("2>", "&>"))
           for a in args):                   # a pipeline or redirections: a shell line
        line = " ".join('"$__inline"' if a is None else a if a in ("|", "|&", "&") or a[:1] in "<>"
                        or a[:2] in ("2>", "&>") else "'" + a.replace("'", "'\\''") + "'"
                        for a in args if a is None or "@" not in a[:3])
        if any(a is None for a in args):
            out.append(Finding("shell-unknown", reason + " with arguments known only at run time"))
        run_cmd(out, line, reason)
        return
    run_argv(out, [a for a in args if a != "&"], reason)


def _split(text: str) -> list[str | None]:
    """A Tcl list's elements (``open "|git push"``)."""
    return [w for w, _braced in (_commands(text, [], MAX_DEPTH)[:1] or [[]])[0]]
