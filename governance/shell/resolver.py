"""Resolving one expanded command: wrappers, nested shells, evaluators, interpreters, ``find``.

Hot path: imports only our own ``shell.rules``. ``resolve`` peels wrappers (``sudo``, ``env``,
``timeout``, ``xargs`` ...) off an argument vector until it reaches the command that really runs,
recurses into the strings that nested shells and evaluators run (``bash -c``, ``eval``, ``watch``,
``su -c``, heredocs fed to a shell), and finally matches the ``shell.commands`` patterns.
"""

from __future__ import annotations

from governance.shell.rules import harmless as harmless_flag
from governance.shell.rules import lookup_name, match_command, name_forms, parse_argv
from governance.shell.words import quote

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from governance.shell.parser import Simple
    from governance.shell.walk import Walk

_MAX_HOPS = 32
_DECLARERS = ("export", "declare", "typeset", "local", "readonly")


def resolve(an: Walk, fields: list[str | None], globs: list[bool], raws: list[str],
            cmd: Simple, seg: str, depth: int) -> None:
    shell = an.shell
    for _hop in range(_MAX_HOPS):
        while fields and fields[0] == "":
            fields, globs, raws = fields[1:], globs[1:], raws[1:]
        if not fields:
            an.add("shell-read", seg, "runs no command")
            return
        first = fields[0]
        if first is None:
            an.unknown(seg, f"the command name {raws[0]} is only known at run time")
            return
        if (globs[0] and first not in ("[", "[[")) or first == "{}":
            an.unknown(seg, f"the command name {raws[0]} is a pattern expanded at run time")
            return
        base = first.rsplit("/", 1)[-1]
        forms = name_forms(first)
        name = lookup_name(forms, shell.get("wrappers", {}))
        if name is not None:
            start = _unwrap(an, shell["wrappers"][name], base, fields, raws, seg, depth)
            if start is None:
                return
            if start > 0:
                fields, raws = fields[start:], raws[start:]
                globs = (globs[start:] + [False] * len(fields))[:len(fields)]
                continue
        if lookup_name(forms, shell.get("shells", {})) is not None:
            _shell(an, base, fields, raws, cmd, seg, depth)
            return
        name = lookup_name(forms, shell.get("evaluators", {}))
        if name is not None:
            _evaluator(an, shell["evaluators"][name], base, fields, raws, cmd, seg, depth)
            return
        name = lookup_name(forms, shell.get("interpreters", {}))
        if name is not None:
            mapped = _interpreter(an, shell["interpreters"][name], name, base, fields, raws, cmd,
                                  seg, depth)
            if mapped is None:
                return
            fields, globs, raws = mapped, [False] * len(mapped), [str(f) for f in mapped]
            continue
        if base in shell.get("finders", {}):
            _find(an, shell["finders"][base], fields, globs, raws, cmd, seg, depth)
            return
        if base == "git":
            from governance.shell.programs import git_config

            aliased = git_config(an, fields, seg, depth)
            if aliased is not None:
                fields, raws = aliased, [str(f) for f in aliased]
                globs = [False] * len(fields)
        _plain(an, base, fields, raws, seg, depth, cmd)
        return
    an.unknown(seg, "too many wrappers around the command")


def _plain(an: Walk, base: str, fields: list[str | None], raws: list[str], seg: str,
           depth: int = 0, cmd: Simple | None = None) -> None:
    shell = an.shell
    first = str(fields[0])
    if base in ("cd", "pushd"):
        an.change_dir(fields)
    elif base in _DECLARERS or base in ("set", "printf", "read"):
        from governance.shell.programs import definitions

        definitions(an, base, fields, cmd)
    elif base in AWKS:
        _awk(an, base, fields, raws, seg, depth)
        return
    matched = harmless = False
    name = lookup_name(first, shell.get("commands", {}))
    spec = shell["commands"][name] if name is not None else {}
    if name is not None:
        argv = parse_argv(fields[1:], raws[1:], spec["with_value"])
        quiet = harmless_flag(argv, [*shell.get("harmless_flags", ()), *spec.get("harmless", ())])
        if quiet is not None:
            an.add("shell-read", seg, f"{base} {quiet} only prints")
            return
        for option, prefix in spec.get("command_options", {}).items():
            for value, _raw in argv.values.get(option, ()):   # vim -c '!CMD', gdb -ex 'shell CMD'
                if value is None:
                    an.unknown(seg, f"{base} {option} runs a command known only at run time")
                elif value.startswith(prefix):
                    an.script(value[len(prefix):], depth + 1, seg)
        if spec.get("program") and cmd is not None and not argv.values.get("-f"):
            _stdin(an, base, cmd, seg, depth)             # at now <<< CMD
        for option in spec.get("recipes", ()):              # make -f FILE, just --justfile FILE
            for value, _raw in argv.values.get(option, ()):
                text = an.stdin_text(cmd)[1] if value == "-" and cmd is not None else \
                    an.file_text(value)
                if text is not None:
                    from governance.shell.programs import recipe_lines

                    for line in recipe_lines(text):
                        an.script(line, depth + 1, seg)
                elif value == "-" or an.wrote(value):
                    an.unknown(seg, f"{base} runs recipes known only at run time")
        safe = shell.get("safe_targets", {})
        matches = match_command(spec, fields[1:], raws[1:], argv=argv)
        for rule, targets in matches:
            real = [(t, raw) for t, raw in targets
                    if t is None or not (t in safe or t.startswith("/dev/fd/"))]
            if not real and (targets or rule.get("targets")):
                harmless = True               # writes only to /dev/null and the like, or nothing
                continue
            matched = True
            an.add(rule["primitive"], seg, rule["reason"])
            fetched = any(r["primitive"] == "web-fetch" for r, _t in matches)
            for k, (target, raw) in enumerate(real):
                if fetched and rule["primitive"] == "file-write":
                    an.written(target)        # curl -o i.sh URL && bash i.sh: unknown text
                folder = rule.get("folders", "")
                if rule.get("into") and len(real) > 1 and folder != "direct":
                    folder = "" if k == 0 else "direct"  # cp a DIR: DIR/a is written, not DIR
                an.target(target, raw, seg, rule["primitive"], rule["reason"], folder)
    if "/" in first and an.protected(first, raws[0]):
        an.add("governance-admin", seg, f"{raws[0]} is a governance script: ask the user to run "
               "it from a terminal")
    runs = spec.get("runs")
    if runs:
        sub = next((k for k in range(1, len(fields)) if fields[k] is not None and
                    not str(fields[k]).startswith("-")), None)
        pair = f"{fields[sub]} {fields[sub + 1]}" if sub is not None and sub + 1 < len(
            fields) else None
        if sub is not None and (fields[sub] in runs or pair in runs):
            _carried(an, fields[sub:], raws[sub:], seg, depth, cmd)  # docker run IMAGE CMD
    if matched:
        return
    if harmless or lookup_name(first, shell.get("read_only", {})) is not None:
        an.add("shell-read", seg, f"{base} only reads")
    elif name is not None:
        an.add("shell-execute", seg, f"{base} runs a program")
    elif "/" in first and an.file_text(first) is not None:
        _program(an, str(an.file_text(first)), None, seg, depth)
    elif "/" in first and an.wrote(first):
        an.unknown(seg, f"{raws[0]} was written earlier in this command with content known "
                        "only at run time")
    else:
        an.add("shell-unlisted", seg, f"{base} is not a command governance knows")
        _carried(an, fields, raws, seg, depth, cmd)


# git configuration given on the command line whose value runs a command
AWKS = ("awk", "gawk", "mawk", "nawk", "busybox-awk")


def _awk(an: Walk, base: str, fields: list[str | None], raws: list[str], seg: str,
         depth: int) -> None:
    """An awk program: read like inline code (``system()``, pipes to commands, ``/inet``
    sockets, ``print > FILE``); ``-i inplace`` edits its file arguments."""
    i, n = 1, len(fields)
    program: str | None = ""
    inplace = False
    while i < n:
        arg = fields[i]
        if arg in ("-f", "--file"):
            _script_file(an, base, fields[i + 1] if i + 1 < n else None,
                         raws[i + 1] if i + 1 < n else "", seg, depth, "awk")
            program = None
            i += 2
            continue
        if arg in ("-v", "-F", "--assign", "--field-separator", "-i", "--include", "-l", "--load"):
            inplace = inplace or (arg in ("-i", "--include") and i + 1 < n and
                                  fields[i + 1] == "inplace")
            i += 2
            continue
        if arg is not None and arg.startswith("-") and arg != "-":
            i += 1
            continue
        break
    if program is not None:
        if i >= n:
            an.add("shell-read", seg, f"{base} without a program does nothing")
            return
        code = fields[i]
        i += 1
        if code is None:
            an.unknown(seg, f"{base} runs a program known only at run time")
        else:
            an.inline("awk", code, seg, depth)
    for k in range(i, n):
        if inplace:
            an.target(fields[k], raws[k], seg, "file-write", f"{base} -i inplace edits {raws[k]}")
    if not inplace:
        an.add("shell-read", seg, f"{base} reads its input")


def known_name(shell: dict[str, Any], word: str) -> bool:
    """Whether ``word`` names a command the analysis knows (listed anywhere in ``shell``)."""
    forms = name_forms(word)
    return any(lookup_name(forms, shell.get(table, {})) is not None
               for table in ("commands", "wrappers", "shells", "evaluators", "interpreters",
                             "finders"))


def _carried(an: Walk, fields: list[str | None], raws: list[str], seg: str, depth: int,
             cmd: Simple | None) -> None:
    """An unknown program may run its arguments (``chrt -f 1 CMD``, ``podman run IMG CMD``,
    ``emacs --eval '(shell-command "CMD")'``). Heuristically, each argument that names a known
    command and has arguments after it starts a nested command (``pkill node`` names a process,
    not a command to run; in ``docker run node npm publish`` both ``node ...`` and ``npm ...``
    are read); an argument that reads as a command line, or a double-quoted string inside one
    that does, is analysed as one."""
    shell = an.shell
    for j in range(1, len(fields)):
        arg = fields[j]
        if arg is None or not arg or arg.startswith("-"):
            continue
        fed = cmd is not None and j + 1 == len(fields) and an.stdin_text(cmd)[0] != "none" and \
            any(lookup_name(name_forms(arg), shell.get(t, {})) is not None
                for t in ("shells", "interpreters"))   # chrt -f 1 bash <<< CMD
        if "=" not in arg and " " not in arg and (j + 1 < len(fields) or fed) and \
                known_name(shell, arg):
            if depth + 1 > an.shell.get("limits", {}).get("max_depth", 6):
                an.unknown(seg, "programs nested too deep")
            elif cmd is not None:   # the same command: its redirections and stdin still apply
                resolve(an, list(fields[j:]), [False] * (len(fields) - j), list(raws[j:]), cmd,
                        seg, depth + 1)
            else:
                an.script(" ".join(quote(w) if w is not None else '"$__unknown"'
                                   for w in fields[j:]), depth + 1, seg)
            continue  # a later name may be the real command (`docker run node npm publish`)
        from governance.shell.programs import command_lines

        for text in command_lines(arg):
            words = text.split()
            if any(known_name(shell, w.strip("'\"();")) for w in words):
                an.script(text, depth + 1, seg)



def _unwrap(an: Walk, spec: dict[str, Any], base: str, fields: list[str | None],
            raws: list[str], seg: str, depth: int) -> int | None:
    """Index of the wrapped command in ``fields``; None when handled here; -1: not a wrapper."""
    i = 1
    n = len(fields)
    after = spec.get("after")
    if after is not None:
        while i < n and fields[i] is not None and str(fields[i]).startswith("-"):
            i += 1
        if i >= n or fields[i] not in after:
            return -1
        i += 1
    query = spec.get("query_flags", {})
    if spec.get("primitive") and not (query and any(f in query for f in fields[1:] if f)):
        an.add(spec["primitive"], seg, spec["reason"])
    with_value = spec.get("with_value", {})
    string_opts = spec.get("string_options", {})
    skip = spec.get("skip", 0)
    stop = spec.get("stop", {})
    seen: list[str] = []
    while i < n:
        arg = fields[i]
        if arg is None:
            head = raws[i].split("=", 1)[0]
            if spec.get("assignments") and "=" in raws[i] and head.isidentifier():
                i += 1
                continue
            if skip:                      # ssh "$HOST" CMD: the host may be unknown
                skip -= 1
                i += 1
                continue
            break
        if arg == "--":
            i += 1
            break
        if arg == "-" and spec.get("string_options"):   # su - root -c CMD: a login shell
            i += 1
            continue
        if arg in string_opts or (arg[:1] == "-" and arg[1:2] != "-" and len(arg) > 2 and
                                  "-" + arg[-1] in string_opts):   # bundled: script -qc CMD
            text = fields[i + 1] if i + 1 < n else ""
            _string(an, text, raws[i + 1] if i + 1 < n else "", base, seg, depth)
            return None
        if arg.startswith("-") and len(arg) > 1 and not spec.get("no_options"):
            if arg in query or arg in an.shell.get("harmless_flags", ()):
                an.add("shell-read", seg, f"{base} {arg} only looks a command up or prints")
                return None
            seen.append(arg)
            i += 1 + int(with_value.get(arg, 0))
            continue
        if spec.get("assignments") and "=" in arg and arg.split("=", 1)[0].isidentifier():
            i += 1
            continue
        if skip:
            skip -= 1
            i += 1
            continue
        break
    if spec.get("no_argv"):
        for k in range(i, n):     # su root -c CMD: the string option may follow the user
            if fields[k] in string_opts:
                _string(an, fields[k + 1] if k + 1 < n else "", raws[k + 1] if k + 1 < n
                        else "", base, seg, depth)
                break
        return None
    end = n
    for j in range(i, n):
        if fields[j] in stop:
            end = j
            break
    if i >= end:
        default = spec.get("default")
        if default:
            _plain(an, default, [default], [default], seg)
        elif not spec.get("primitive"):
            an.add("shell-read", seg, f"{base} runs no command")
        return None
    replaces = any(o in ("-I", "-i", "--replace") or o.startswith(("-I", "--replace="))
                   for o in seen)          # xargs -I{}: arguments replace {}, none are added
    if spec.get("string"):
        words = fields[i:end]
        if any(w is None for w in words):
            an.unknown(seg, f"{base} runs a command known only at run time")
        else:
            text = " ".join(str(w) for w in words)
            if spec.get("appends") and not replaces:
                text += ' "$__input"'            # arguments read at run time
            an.script(text, depth + 1, seg)
        return None
    if end < n:
        del fields[end:]
        del raws[end:]
    if spec.get("appends") and not replaces:
        fields.append(None)                   # xargs adds arguments read at run time
        raws.append("(arguments read from standard input)")
    return i


def _string(an: Walk, text: str | None, raw: str, base: str, seg: str, depth: int) -> None:
    if text is None:
        an.unknown(seg, f"{base} runs a string known only at run time ({raw})")
    elif text:
        an.script(text, depth + 1, seg)


def _shell(an: Walk, base: str, fields: list[str | None], raws: list[str], cmd: Simple,
           seg: str, depth: int) -> None:
    i = 1
    n = len(fields)
    inline = stdin = False
    while i < n:
        arg = fields[i]
        if arg is None:
            break
        if arg in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            i += 2
            continue
        if arg == "--" or arg == "-":
            i += 1
            break
        if arg[:1] in "-+" and len(arg) > 1:
            if not arg.startswith("--") and "c" in arg[1:]:
                inline = True
            if not arg.startswith("--") and "s" in arg[1:]:
                stdin = True              # bash -s ARGS: the program comes from stdin
            i += 1
            continue
        break
    if inline:
        if i < n:
            _string(an, fields[i], raws[i], f"{base} -c", seg, depth)
        return
    if i < n and fields[i] not in STDIN_PATHS and not stdin:
        _script_file(an, base, fields[i], raws[i], seg, depth)
        return
    _stdin(an, base, cmd, seg, depth)


STDIN_PATHS = ("/dev/stdin", "/dev/fd/0", "/proc/self/fd/0")
# interpreter name -> the language ``shell.inline`` reads
LANGUAGES = {"python": "python", "pypy": "python", "node": "node", "bun": "node", "deno": "node",
             "perl": "perl", "ruby": "ruby", "php": "php", "lua": "lua", "luajit": "lua"}


def language_of(name: str) -> str | None:
    """The language ``shell.inline`` reads for an interpreter's name (``python3.12`` -> python)."""
    return next((lang for prefix, lang in LANGUAGES.items() if name.startswith(prefix)), None)


def _script_file(an: Walk, base: str, value: str | None, raw: str, seg: str,
                 depth: int = 0, language: str | None = None) -> None:
    """A script run from a file: a file written earlier in the same command is read as what it
    is (shell commands, or code of ``language``); any other file is ``shell-execute``."""
    text = an.file_text(value)
    if text is not None:
        _program(an, text, language, seg, depth)
        return
    if value is not None and (value.startswith("/dev/fd/") or value.startswith("/proc/")):
        an.unknown(seg, f"{base} runs a program from {raw}, whose content is produced at run "
                        "time")
        return
    if an.wrote(value):
        an.unknown(seg, f"{base} runs {raw}, written earlier in this command with content "
                        "known only at run time")
        return
    an.add("shell-execute", seg, f"{base} runs the script {raw}")
    if an.protected(value, raw):
        an.add("governance-admin", seg, f"{raw} is a governance script: ask the user to run it "
               "from a terminal")


def _program(an: Walk, text: str, language: str | None, seg: str, depth: int) -> None:
    """A program whose text is known: shell commands, or code (by ``language`` or its #! line)."""
    if language is None and text.startswith("#!"):
        line = text.split("\n", 1)[0]
        words = line[2:].split()
        name = (words[1] if words and words[0].endswith("/env") and len(words) > 1
                else words[0] if words else "").rsplit("/", 1)[-1]
        language = language_of(name)
    if language is None:
        an.script(text, depth + 1, seg)
    else:
        an.inline(language, text, seg, depth)


def _stdin(an: Walk, base: str, cmd: Simple, seg: str, depth: int,
           language: str | None = None) -> None:
    """A shell (``language`` None) or interpreter that reads its program from standard input:
    a literal program (heredoc, here-string, echo/printf piped in, a file written earlier) is
    analysed as what it is; one produced at run time (a decoder, a variable, a download) is
    ``shell-unknown``."""
    kind, text = an.stdin_text(cmd)
    what = "commands" if language is None else f"{language} code"
    if kind == "literal" and text is not None:
        _program(an, text, language, seg, depth)
    elif kind == "opaque":
        an.unknown(seg, f"{base} runs {what} fed to it at run time, which cannot be read "
                        "before it runs")
    elif kind == "file":
        _script_file(an, base, text, str(text), seg, depth, language)
    else:
        an.add("code-exec", seg, f"{base} runs {what} read from standard input")


def _evaluator(an: Walk, kind: str, base: str, fields: list[str | None], raws: list[str],
               cmd: Simple, seg: str, depth: int) -> None:
    args = fields[1:]
    if kind == "eval":
        if any(a is None for a in args):
            an.unknown(seg, f"{base} runs a string known only at run time")
        else:
            an.script(" ".join(str(a) for a in args), depth + 1, seg)
    elif kind == "trap":
        if args and args[0] is None:
            an.unknown(seg, "trap runs a string known only at run time")
        elif args and args[0] and args[0] != "-" and not args[0].startswith("-"):
            an.script(args[0], depth + 1, seg)
        an.add("shell-read", seg, "trap registers a handler")
    elif kind == "alias":
        for arg in args:
            if arg and "=" in arg:
                an.script(arg.split("=", 1)[1], depth + 1, seg)
        an.add("shell-read", seg, "alias defines a command name")
    elif args and args[0] in STDIN_PATHS:
        _stdin(an, base, cmd, seg, depth)
    elif args:
        _script_file(an, base, args[0], raws[1], seg, depth)
    else:
        an.add("shell-read", seg, f"{base} without a file does nothing")


PRELOAD = ("-M", "-m", "-r", "--require")


def _short_option(arg: str, inline: dict[str, Any], with_value: dict[str, Any]
                  ) -> tuple[str | None, str]:
    """The first letter of a short-option bundle that takes code or a value (``-pe`` -> e,
    ``-MLWP::Simple`` -> M), with what is attached after it."""
    if arg.startswith("--") or len(arg) < 2:
        return None, ""
    for k in range(1, len(arg)):
        option = "-" + arg[k]
        if option in inline or option in with_value:
            return arg[k], arg[k + 1:]
    return None, ""


def _interpreter(an: Walk, spec: dict[str, Any], name: str, base: str,
                 fields: list[str | None], raws: list[str], cmd: Simple, seg: str,
                 depth: int) -> list[str | None] | None:
    """Handle ``python -c`` & co.; returns the argv a ``-m module`` maps to, else None."""
    language = language_of(name)
    inline = spec.get("inline", {})
    modules = spec.get("module", {})
    with_value = spec.get("with_value", {})
    i = 1
    n = len(fields)
    preload: list[str] = []   # perl -MLWP::Simple, ruby -rnet/http, node -r MODULE
    while i < n:
        arg = fields[i]
        if arg is None or arg == "-" or not arg.startswith("-"):
            break
        if arg == "--":
            i += 1
            break
        if arg in with_value:
            if arg in PRELOAD and i + 1 < n and fields[i + 1]:
                preload.append(str(fields[i + 1]))
            i += 2
            continue
        letter, attached = _short_option(arg, inline, with_value)
        if letter is not None and "-" + letter not in inline:     # -MLWP::Simple: a value
            if "-" + letter in PRELOAD and attached:
                preload.append(attached)
            i += 1 if attached else 2
            continue
        if arg in inline or letter is not None:
            attached = "" if arg in inline else attached
            code = attached or (fields[i + 1] if i + 1 < n else "")
            if code is None:
                an.unknown(seg, f"{base} {arg} runs code known only at run time")
            elif language is not None and code:
                if preload:
                    from governance.shell.programs import preloaded

                    code = preloaded(language, preload) + code
                an.inline(language, code, seg, depth)
            else:
                an.add("code-exec", seg, f"{base} {arg} runs inline code")
            if language in ("perl", "ruby") and any(
                    f is not None and f[:1] == "-" and f[1:2] != "-" and "i" in f[1:]
                    for f in fields[1:i + 1]):
                after = i + (1 if attached else 2)
                for k in range(after, n):   # perl -pi -e CODE FILES edits the files in place
                    if fields[k] is None or not str(fields[k]).startswith("-"):
                        an.target(fields[k], raws[k], seg, "file-write",
                                  f"{base} -i edits {raws[k]} in place")
            return None
        if arg in modules or (arg[:2] in modules and len(arg) > 2 and not arg.startswith("--")):
            module = arg[2:] if arg not in modules else (fields[i + 1] if i + 1 < n else None)
            rest = fields[i + 1:] if arg not in modules else fields[i + 2:]
            mapped = an.shell.get("modules", {}).get(module or "")
            if mapped is None and module:
                mapped = an.shell.get("modules", {}).get(module.split(".", 1)[0])
            if mapped is not None:
                return [mapped, *rest]
            an.add("shell-execute", seg, f"{base} runs the module {module}")
            return None
        i += 1
    if i < n and fields[i] != "-" and fields[i] not in STDIN_PATHS:
        word = str(fields[i])
        if "/" not in word and "." not in word and lookup_name(
                name, an.shell.get("commands", {})) is not None:
            _plain(an, base, fields, raws, seg, depth)  # bun add x, deno install y
            return None
        _script_file(an, base, fields[i], raws[i], seg, depth, language or "code")
        return None
    _stdin(an, base, cmd, seg, depth, language or "code")
    return None


def _find(an: Walk, spec: dict[str, Any], fields: list[str | None], globs: list[bool],
          raws: list[str], cmd: Simple, seg: str, depth: int) -> None:
    """``find``: its own tests and actions, plus the commands its ``-exec`` actions run."""
    execs = spec.get("exec", {})
    own: list[str | None] = [fields[0]]
    own_raws = [raws[0]]
    i = 1
    n = len(fields)
    root = fields[1] if n > 1 and fields[1] and fields[1][:1] not in "-(!" else "."
    named = next((fields[k + 1] for k in range(1, n - 1)
                  if fields[k] in ("-name", "-iname", "-path") and fields[k + 1]
                  and not any(c in str(fields[k + 1]) for c in "*?[")), None)
    found = f"{str(root).rstrip('/')}/{named or '*'}"   # what {} stands for: a file under root
    while i < n:
        arg = fields[i]
        if arg in execs:
            j = i + 1
            while j < n and fields[j] not in (";", "+"):
                j += 1
            if j > i + 1:
                run = [found if f == "{}" else f for f in fields[i + 1:j]]
                resolve(an, run, globs[i + 1:j], raws[i + 1:j], cmd, seg, depth)
            i = j + 1
            continue
        own.append(arg)
        own_raws.append(raws[i])
        i += 1
    _plain(an, str(fields[0]).rsplit("/", 1)[-1], own, own_raws, seg)
