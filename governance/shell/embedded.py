"""Command lines held in another program's option values and environment variables.

A program may run text it is given as a shell command line or as code: ``tar --to-command=CMD``,
``rsync -e CMD``, ``ssh -o ProxyCommand=CMD``, ``vim -c ':!CMD'``, ``gdb -ex 'shell CMD'``,
``GIT_EDITOR=CMD git commit``, ``LESSOPEN='|CMD %s' less f``. The option tables
(``commands.NAME.command_options`` and ``wrappers.NAME.command_options``) and the variable table
(``shell.command_env``) say how the value is read; this module reads it and analyses what runs, at
one more level of depth, as ``bash -c`` strings are. A value known only at run time is unknown.

Forms (one string each, several per option allowed):

- ``""``: the whole value is a shell command line;
- ``"PREFIX"``: a value that starts with PREFIX runs the rest as a shell command line (``"!"``,
  ``"shell "``, ``"exec="``); other values run nothing;
- ``"PREFIX@LANGUAGE"``: a value that starts with PREFIX runs the rest as inline code of LANGUAGE
  (``"@python"``: the whole value is Python; ``"python @python"``: gdb's ``python CODE``);
- ``"@ssh"``: an ssh option (``Key=Value`` or ``Key Value``, the key in any case) whose key is
  one that runs a command (``ProxyCommand``, ``LocalCommand``, ``KnownHostsCommand``,
  ``RemoteCommand``);
- ``"@ex"``: Vim/ex/ed commands (``shell.editor``): ``!CMD``, ``r !CMD``, ``w !CMD``,
  ``call system(...)``, ``py3 CODE`` ...;
- ``"@sshfile"``: an ssh configuration file (``ssh -F CONFIG``): each line as ``"@ssh"`` reads it,
  and the commands of ``Match exec``;
- ``"@exfile"``: the name of a file of such commands (``vim -S FILE``, ``-u VIMRC``), read from
  disk or from what the command wrote into it earlier;
- ``"@codefile@LANGUAGE"``: the name of a file of code of LANGUAGE (``emacs --script FILE``),
  read the same way;
- ``"@program"``: a program (one word) run with each file as its argument (``rg --pre CMD``);
- ``"@dc"``: a dc program, whose ``!`` runs the rest of its line (``shell.dcscript``);
- ``"@file@FORM"``: the name of a file whose text is read by ``"@FORM"`` (``dc -f FILE``, ``dc
  FILE``), read as ``"@exfile"`` reads its file;
- ``"|"`` (variables only): less's input preprocessor, ``|CMD %s`` or ``||CMD %s``.

A program's ``argv_options`` (``fd -x CMD ARGS ;``, ``gdb --args PROG ARGS``) are read by
:func:`argv_runs`: the arguments after one, up to ``;`` or the end, are a command with its own
words; ``{}`` and its kin (``{/}``, ``{//}``, ``{.}``, ``{/.}``) stand for a file the program finds
under the folders it searches. When that command writes or deletes and the search may find a
governance file (``shell.searches``), it is ``governance-admin``.

Imported only when such an option or variable appears (hot path: no imports at load time).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from governance.shell.parser import Simple
    from governance.shell.rules import Argv
    from governance.shell.walk import Walk

_SSH_KEYS = ("proxycommand", "localcommand", "knownhostscommand", "remotecommand")
_FILE = "$__file"    # stands for the file name a program appends to the command it runs


def option_value(an: Walk, base: str, option: str, forms: list[str], value: str | None,
                 seg: str, depth: int) -> None:
    """The value of an option that may hold a command (``forms``: see the module)."""
    if value is None:
        if any(not f or f.startswith("@") or f.endswith("@python") for f in forms) or \
                forms == ["|"]:
            an.unknown(seg, f"{base} {option} runs a command known only at run time")
        else:
            an.unknown(seg, f"{base} {option} may run a command known only at run time")
        return
    for form in forms:
        if _read(an, f"{base} {option}", form, value, seg, depth):
            return


def env_value(an: Walk, name: str, form: str, value: str | None, seg: str, depth: int) -> None:
    """A variable whose value a program runs as a command (``shell.command_env``)."""
    if value is None:
        an.unknown(seg, f"{name} holds a command known only at run time, which a program runs")
        return
    if not value.strip():
        return
    if form == "|":          # LESSOPEN='|CMD %s', '||CMD %s', '|-CMD %s'
        if not value.startswith("|"):
            return
        value = value.lstrip("|").lstrip("-")
    _read(an, name, "", value.replace("%s", _FILE), seg, depth)


def _read(an: Walk, what: str, form: str, value: str, seg: str, depth: int) -> bool:
    """Analyse ``value`` by one form; whether the form applied."""
    if form == "@ssh":
        key, rest = _ssh_option(value)
        if key in _SSH_KEYS and rest and rest.lower() != "none":
            an.script(rest, depth + 1, seg)
            return True
        return False
    if form == "@sshfile":    # ssh -F CONFIG: its ProxyCommand, LocalCommand, Match exec ...
        if value in ("none", "/dev/null"):
            return True
        _ssh_config(an, what, value, seg, depth, 0)
        return True
    if form.startswith("@codefile@"):   # emacs --script FILE: code of a language, from a file
        text = _file_text(an, what, value, seg)
        if text:
            _run(an, what, form[len("@codefile@"):], text, seg, depth)
        return True
    if form == "@exfile":     # vim -S FILE, -u VIMRC: Vim commands read from a file
        if value.upper() in ("NONE", "NORC", "DEFAULTS", "NOPLUGIN"):
            return True
        text = _file_text(an, what, value, seg)
        return _read(an, what, "@ex", text, seg, depth) if text else True
    if form == "@program":    # rg --pre CMD: CMD runs with each file searched as its argument
        from governance.shell.words import quote

        _run(an, what, "sh", f"{quote(value)} ./*", seg, depth)
        return True
    if form.startswith("@file@"):    # dc -f FILE: a file of the form's commands
        text = _file_text(an, what, value, seg)
        return _read(an, what, form[len("@file"):], text, seg, depth) if text else True
    if form == "@dc":
        from governance.shell.dcscript import shell_commands

        commands = shell_commands(value)
        if commands is None:
            an.unknown(seg, f"{what}: the dc program's strings nest too deep to read")
        for command in commands or ():
            _run(an, what, "sh", command, seg, depth)
        return True
    if form == "@ex":
        from governance.shell.editor import ex_commands

        found = False
        for kind, text in ex_commands(value):
            found = True
            _run(an, what, kind, text, seg, depth)
        return found
    prefix, at, language = form.rpartition("@") if "@" in form else (form, "", "")
    if not value.startswith(prefix):
        return False
    _run(an, what, language if at else "sh", value[len(prefix):], seg, depth)
    return True


_MAX_INCLUDES = 16   # ssh's own limit of nested Include files


def _ssh_config(an: Walk, what: str, value: str, seg: str, depth: int, level: int) -> None:
    """The commands of an ssh configuration file and of the files it includes: ``Include
    FILE...`` names files relative to ``~/.ssh`` (a configuration given with ``-F`` is a user
    configuration), with ``~`` and globs expanded as ssh expands them."""
    text = _file_text(an, what, value, seg)
    for line in (text or "").splitlines():
        line = line.strip()
        key, rest = _ssh_option(line)
        if key == "match":   # Match [!]exec "CMD" ...: CMD runs to test the condition
            for command in _match_exec(rest):
                an.script(command, depth + 1, seg)
        elif key == "include":
            if level + 1 >= _MAX_INCLUDES:
                an.unknown(seg, f"{what} {value} includes files nested too deep to read")
                continue
            for name in _ssh_words(rest) or [rest]:
                for path in _included(an, what, name, seg):
                    _ssh_config(an, what, path, seg, depth, level + 1)
        elif key and not key.startswith("#"):
            _read(an, what, "@ssh", line, seg, depth)


def _ssh_words(text: str) -> list[str] | None:
    """The arguments of an ssh configuration line as ssh splits them (quoted strings, a
    comment ended); None when a quote is not closed."""
    import shlex

    try:
        return shlex.split(text, comments=True)
    except ValueError:
        return None


def _included(an: Walk, what: str, name: str, seg: str) -> list[str]:
    """The files an ``Include`` word names: relative to ``~/.ssh``; a glob is the files that
    match it now (``config.d/*``, ``shell.expansion``), or ``shell-unknown`` when they cannot
    be listed."""
    if not name.startswith(("/", "~")):
        name = "~/.ssh/" + name
    if not any(c in name for c in "*?["):
        return [name]
    from governance import system
    from governance.shell.expansion import expand

    found = expand(system.expanduser(name), "/")
    if found is None:
        an.unknown(seg, f"{what} includes {name}, files that cannot be listed before they run")
        return []
    return found


def _file_text(an: Walk, what: str, value: str, seg: str) -> str | None:
    """The text of a file a program reads commands from: written earlier in this command, or
    on disk (a missing file runs nothing); None, and ``shell-unknown`` when it cannot be read."""
    from governance.shell import source

    path = source.path_of(an, value)
    if path is None:
        text = an.file_text(value)
        if text is None:
            an.unknown(seg, f"{what} {value} runs commands from a file that cannot be read "
                            "before they run")
        return text
    return source.text_of(an, what, path, value, seg)


def _run(an: Walk, what: str, kind: str, text: str, seg: str, depth: int) -> None:
    if kind == "sh":
        if text.strip():
            an.script(text, depth + 1, seg)
    elif kind == "unknown":
        an.unknown(seg, f"{what}: {text}")
    else:
        an.inline(kind, text, seg, depth)


def _match_exec(criteria: str) -> list[str]:
    """The commands of a ``Match`` line's ``exec`` criteria (``exec "CMD"``, ``!exec CMD``),
    as ssh splits its arguments: a double-quoted string, or one word."""
    words = _ssh_words(criteria)
    if words is None:
        return [criteria]     # an unclosed quote: the rest of the line
    return [words[k + 1] for k in range(len(words) - 1) if words[k].lower().lstrip("!") == "exec"]


def _ssh_option(value: str) -> tuple[str, str]:
    """``ProxyCommand=CMD``, ``ProxyCommand CMD``, ``proxycommand = CMD``: the key (lower case)
    and the value, as ssh reads a ``-o`` option."""
    text = value.strip()
    end = 0
    while end < len(text) and text[end] not in " \t=":
        end += 1
    rest = text[end:].lstrip(" \t")
    if rest.startswith("="):
        rest = rest[1:].lstrip(" \t")
    return text[:end].lower(), rest


def options(an: Walk, base: str, table: dict[str, list[str]], argv: Argv, seg: str,
            depth: int) -> None:
    """The options of one command that may hold a command (``commands.NAME.command_options``):
    ``OPTION``, ``SUB OPTION`` (only after that subcommand), ``+`` (``vim +CMD``: arguments
    that start with ``+``) or ``*`` (every argument). A long option may be abbreviated as GNU
    programs allow."""
    sub = argv.positionals[0][0] if argv.positionals else None
    given = [name for name in argv.values if name.startswith("--") and len(name) >= 5]
    opaque = [raw.replace('"', "").replace("'", "").split("=", 1)[0]   # --to-command="$X"
              for value, raw in argv.positionals if value is None and "=" in raw]
    code: dict[str, list[str]] = {}      # timeit -s SETUP STATEMENT: one program
    for key, forms in table.items():
        head, _, option = key.rpartition(" ")
        if head and head != sub:
            continue
        values: list[tuple[str | None, str]]
        if option == "+":
            values = [(v if v is None else v[1:], r) for v, r in argv.positionals
                      if (v or r.lstrip("'\"")).startswith("+")]
        elif option == "*":                      # python -m timeit STATEMENT ...
            values = list(argv.positionals)
        else:
            values = list(argv.values.get(option, ()))
            if option.startswith("--"):          # tar --to-com=CMD: an abbreviation
                for name in given:
                    if name != option and option.startswith(name) and name not in table:
                        values.extend(argv.values[name])
            if option.startswith("-") and any(option.startswith(o) and len(o) >= 2 + (
                    o[:2] == "--") * 3 for o in opaque):
                values.append((None, option))
        for value, _raw in values:
            language = forms[0][1:] if len(forms) == 1 and forms[0][:1] == "@" and \
                forms[0] not in ("@ssh", "@sshfile", "@ex", "@exfile", "@program", "@dc") and \
                "@" not in forms[0][1:] else ""
            if language and value is not None:
                code.setdefault(language, []).append(value)
            else:
                option_value(an, base, option, forms, value, seg, depth)
    for language, pieces in code.items():
        an.inline(language, "\n".join(pieces), seg, depth)


def input_text(an: Walk, base: str, forms: list[str], cmd: Simple, seg: str,
               depth: int) -> None:
    """What a program reads on standard input as commands (``ed FILE <<< '!CMD'``): a literal
    text is read by the forms, one produced at run time is unknown."""
    kind, text = an.stdin_text(cmd)
    if kind == "literal" and text is not None:
        for form in forms:
            _read(an, base, form, text, seg, depth)
    elif kind == "opaque":
        an.unknown(seg, f"{base} reads commands from its input, known only at run time")
    elif kind == "file" and text is not None:
        from governance.shell.source import path_of, text_of

        path = path_of(an, text)
        read = text_of(an, base, path, text, seg) if path is not None else None
        if read is None:
            an.unknown(seg, f"{base} reads commands from {text}, which cannot be read")
        else:
            for form in forms:
                _read(an, base, form, read, seg, depth)


_PLACEHOLDERS = ("{//}", "{/.}", "{/}", "{.}", "{}")
_WRITES = ("file-write", "file-delete", "destructive")


def argv_runs(an: Walk, base: str, options: list[str], fields: list[str | None],
              raws: list[str], cmd: Simple | None, seg: str, depth: int) -> None:
    """The commands a program runs from its ``argv_options`` (module docstring)."""
    n = len(fields)
    own, own_raws = [fields[0]], [raws[0]]
    i = 1
    while i < n:
        arg = fields[i]
        option = next((o for o in options if arg is not None and (
            arg == o or (o.startswith("--") and arg.startswith(o + "=")))), None)
        if option is None:
            own.append(arg)
            own_raws.append(raws[i])
            i += 1
            continue
        start = i + 1
        if arg != option:                  # fd --exec=rm: the program in the same word
            fields = [*fields[:i], option, str(arg)[len(option) + 1:], *fields[i + 1:]]
            raws = [*raws[:i], option, raws[i][len(option) + 1:], *raws[i + 1:]]
            n = len(fields)
        end = start
        while end < n and fields[end] not in (";", "+"):
            end += 1
        if end > start:
            if fields[start] is None:
                an.unknown(seg, f"{base} {option} runs a command known only at run time")
            else:
                found = _found_stand_in(base, own)
                run = [f if f is None else _placed(f, found) for f in fields[start:end]]
                run_raws = [_placed(r, found) for r in raws[start:end]]
                if option != "--args" and option != "--" and not any(
                        h in r for r in raws[start:end] for h in _PLACEHOLDERS):
                    run, run_raws = [*run, found], [*run_raws, found]   # fd -x rm: rm FILE
                mark = len(an.acts)
                an.resolve(run, [False] * len(run), run_raws, cmd, seg, depth + 1)
                if any(a.primitive in _WRITES for a in an.acts[mark:]):
                    from governance.shell.searches import listed_by

                    listed = listed_by(an, own)
                    if listed is not None:
                        an.add("governance-admin", seg,
                               f"{base} {option} runs {fields[start]} on the files it finds, "
                               f"which may include {listed}, a governance-protected file")
        i = end + 1
    del own_raws


def _found_stand_in(base: str, own: list[str | None]) -> str:
    """What a found file stands in as: ``ROOT/*`` (``ROOT/*.EXT`` with ``-e EXT``) under the
    first folder searched (``fd PATTERN ROOT``), else ``./*``."""
    words = [w for k, w in enumerate(own[1:], 1)
             if w is not None and w[:1] != "-" and not (own[k - 1] or "").startswith("-")]
    root = words[1] if base in ("fd", "fdfind") and len(words) > 1 else "."
    ext = next((own[k + 1] for k in range(1, len(own) - 1)
                if own[k] in ("-e", "--extension") and own[k + 1]), None)
    return f"{str(root).rstrip('/')}/*{'.' + str(ext).lstrip('.') if ext else ''}"


def _placed(word: str, found: str) -> str:
    for holder in _PLACEHOLDERS:
        word = word.replace(holder, found)
    return word
