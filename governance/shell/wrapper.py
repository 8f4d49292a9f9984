"""Commands that run another command: wrappers (``sudo``, ``env``, ``timeout``, ``xargs``, ``ssh``
...) peeled off an argument vector, and ``find`` with the commands its ``-exec`` actions run.

Imported by ``shell.resolver`` when such a command appears. The spec of each wrapper comes from the
``shell.wrappers`` table of the compiled matrix; the wrapped command is resolved again through
``Walk.resolve``.
"""

from __future__ import annotations

from governance import system
from governance.shell.script import string

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from governance.shell.parser import Simple
    from governance.shell.walk import Walk


def _act(an: Walk, spec: dict[str, Any], seg: str, pending: bool) -> None:
    if pending:
        an.add(spec["primitive"], seg, spec["reason"])


def _queries(arg: str, query: dict[str, int], with_value: dict[str, int]) -> bool:
    """Whether the option word asks only a question: a query flag, or one in a short cluster
    before any letter that takes a value (`command -pv`, `ssh -vG`; not `ssh -oVisual=yes`)."""
    if arg in query:
        return True
    if arg[1:2] == "-" or len(arg) < 3:
        return False
    for letter in arg[1:]:
        if "-" + letter in query:
            return True
        if "-" + letter in with_value:
            return False
    return False


def _valid(arg: str, only: dict[str, int]) -> bool:
    """Whether every letter of the option word is one the wrapper takes (bash's `command`
    takes -p, -v, -V; `command -px` is refused)."""
    if arg[1:2] == "-":
        return arg in only
    return all("-" + letter in only for letter in arg[1:])


def unwrap(an: Walk, spec: dict[str, Any], base: str, fields: list[str | None],
            raws: list[str], seg: str, depth: int, cmd: Simple | None = None) -> int | None:
    """Index of the wrapped command in ``fields``; None when handled here; -1: not a wrapper."""
    fanout = spec.get("fanout")
    if fanout:                           # xargs, parallel: the command built from their input
        from governance.shell import fanout as runs

        if fanout == "xargs":
            runs.xargs(an, spec, fields, raws, cmd, seg, depth)
        else:
            runs.parallel(an, spec, fields, cmd, seg, depth)
        return None
    if spec.get("program_options"):      # start-stop-daemon --exec PROG -- ARGS
        _program(an, spec, base, fields, raws, cmd, seg, depth)
        return None
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
    alone = spec.get("alone_flags", {})       # sudo -k: resets alone, runs a command given one
    alone_seen = bool(alone) and any(f in alone for f in fields[1:] if f)
    # the wrapper's own act waits until its options are read: `ssh --help` only prints
    pending = bool(spec.get("primitive")) and not alone_seen
    with_value = spec.get("with_value", {})
    only = spec.get("only_options")
    string_opts = spec.get("string_options", {})
    skip = spec.get("skip", 0)
    stop = spec.get("stop", {})
    seen: list[str] = []
    while i < n:
        arg = fields[i]
        if arg is None:
            head = raws[i].split("=", 1)[0]
            if spec.get("assignments") and "=" in raws[i] and _variable(head):
                _assigned(an, head, None, raws[i], seg, depth)
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
            _act(an, spec, seg, pending)
            raw = raws[i + 1] if i + 1 < n else ""
            text, raw = _with_rest(spec, text, raw, fields, raws, i + 2)
            string(an, text, raw, base, seg, depth)
            return None
        attached = _attached(arg, string_opts)    # env --split-string=CMD, env -SCMD
        if attached is not None:
            _act(an, spec, seg, pending)
            text, raw = _with_rest(spec, attached, raws[i], fields, raws, i + 1)
            string(an, text, raw, base, seg, depth)
            return None
        if arg.startswith("-") and len(arg) > 1 and not spec.get("no_options"):
            if only is not None and not _valid(arg, only):
                an.add("shell-read", seg, f"{base} refuses the option {arg} and runs nothing")
                return None
            if _queries(arg, query, with_value) or arg in an.shell.get("harmless_flags", ()):
                an.add("shell-read", seg, f"{base} {arg} only looks a command up or prints")
                return None
            seen.append(arg)
            commands = spec.get("command_options")
            if commands and (arg in commands or (arg[:2] in commands and arg[1:2] != "-")):
                from governance.shell.embedded import option_value  # ssh -o ProxyCommand=CMD

                option = arg if arg in commands else arg[:2]
                value = (fields[i + 1] if i + 1 < n else "") if arg in commands else arg[2:]
                option_value(an, base, option, commands[option], value, seg, depth)
            width = int(with_value.get(arg, 0))
            if not width and arg[1:2] != "-" and len(arg) > 2 and "-" + arg[-1] in with_value \
                    and not any("-" + c in with_value for c in arg[1:-1]):
                width = int(with_value["-" + arg[-1]])     # env -iC DIR: the last letter's value
                arg = "-" + arg[-1]
            if arg.split("=", 1)[0] in spec.get("fetches", ()):   # nix-shell -p PKG, uv run --with
                an.add("package-install", seg, f"{base} {arg} fetches a package first")
            chdir = spec.get("chdir")
            if chdir:                     # env -C DIR CMD: CMD's paths are read from DIR
                _enter(an, chdir, arg, fields[i + 1] if i + 1 < n else None)
            i += 1 + width
            continue
        if spec.get("assignments") and "=" in arg and _variable(arg.split("=", 1)[0]):
            name, _, value = arg.partition("=")
            if name in an.shell.get("command_env", {}):   # env GIT_EDITOR=CMD git commit
                from governance.shell.embedded import env_value

                env_value(an, name, an.shell["command_env"][name], value, seg, depth)
            _assigned(an, name, value, raws[i], seg, depth)
            i += 1
            continue
        if skip:
            skip -= 1
            i += 1
            continue
        break
    _act(an, spec, seg, pending)
    if spec.get("no_argv"):
        for k in range(i, n):     # su root -c CMD: the string option may follow the user
            if fields[k] in string_opts:
                string(an, fields[k + 1] if k + 1 < n else "", raws[k + 1] if k + 1 < n
                        else "", base, seg, depth)
                break
        return None
    end = n
    for j in range(i, n):
        if fields[j] in stop:
            end = j
            break
    if alone_seen:
        if i >= end:
            an.add("shell-read", seg, f"{base} {' '.join(f for f in alone if f in fields)} "
                   "alone runs no command")
            return None
        if spec.get("primitive"):
            an.add(spec["primitive"], seg, spec["reason"])
    if i >= end:
        default = spec.get("default")
        if default:
            an.plain(default, [default], [default], seg)
        elif not spec.get("primitive"):
            an.add("shell-read", seg, f"{base} runs no command")
            if base in (an.shell.get("secret_flow") or {}).get("dumps", ()) and \
                    getattr(an.check, "secret_path", None) is not None:
                from governance.shell import secrets  # env alone prints the environment

                secrets.command(an, base, fields[:i], raws[:i], seg, cmd, len(an.acts), True)
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


def _attached(arg: str, options: dict[str, Any]) -> str | None:
    """The value given with a string option in the same word: ``--split-string=CMD``, ``-SCMD``
    (after other letters too: ``-iSCMD``)."""
    if arg.startswith("--"):
        name, eq, value = arg.partition("=")
        return value if eq and name in options else None
    if not arg.startswith("-"):
        return None
    for k in range(1, len(arg) - 1):
        if "-" + arg[k] in options:
            return arg[k + 1:]
    return None


_ACTING = ("-delete", "-exec", "-execdir")


def find(an: Walk, spec: dict[str, Any], fields: list[str | None], globs: list[bool],
          raws: list[str], cmd: Simple, seg: str, depth: int) -> None:
    """``find``: its own tests and actions, plus the commands its ``-exec`` actions run."""
    execs = spec.get("exec", {})
    own: list[str | None] = [fields[0]]
    own_raws = [raws[0]]
    i = 1
    n = len(fields)
    from governance.shell.trees import delete, find_everything, find_roots

    roots = find_roots(fields, raws)
    root = roots[0][0]
    named = next((fields[k + 1] for k in range(1, n - 1)      # (-path P -prune: not visited)
                  if fields[k] in ("-name", "-iname", "-path") and fields[k + 1]
                  and not any(c in str(fields[k + 1]) for c in "*?[")
                  and (k + 2 >= n or fields[k + 2] != "-prune")), None)
    found = f"{str(root).rstrip('/')}/{named or '*'}"   # what {} stands for: a file under root
    # no test narrows what it finds (-type f does not): the actions run on every file of the tree
    everything = find_everything(fields)
    # the protected files an action may reach (find . -name seal.json -delete), as find names them
    reached = _protected_found(an, fields, roots, cmd)
    while i < n:
        arg = fields[i]
        if arg in execs:
            j = i + 1
            while j < n and fields[j] not in (";", "+"):
                j += 1
            if j > i + 1:
                # GNU find puts the file in place of every {} of an argument (-F f=@{})
                run = [f.replace("{}", found) if f is not None else None
                       for f in fields[i + 1:j]]
                mark = len(an.acts)
                an.resolve(run, globs[i + 1:j], [r.replace("{}", found) for r in raws[i + 1:j]],
                           cmd, seg, depth)
                for path in reached:          # each protected file it reaches, as {}
                    an.resolve([f.replace("{}", path) if f is not None else None
                                for f in fields[i + 1:j]], globs[i + 1:j],
                               [r.replace("{}", path) for r in raws[i + 1:j]], cmd, seg, depth)
                if everything and arg in ("-exec", "-execdir") and any(   # -ok asks each time
                        a.primitive == "file-delete" for a in an.acts[mark:]):
                    # every file of the tree: decided as the recursive delete it amounts to
                    # (generated output stays a file-delete, tracked work is destructive)
                    delete(an, roots, cmd, seg, depth)
            i = j + 1
            continue
        own.append(arg)
        own_raws.append(raws[i])
        i += 1
    an.plain(str(fields[0]).rsplit("/", 1)[-1], own, own_raws, seg)
    if everything and "-delete" in own:        # find /srv -delete: rm -r /srv
        delete(an, roots, cmd, seg, depth)
    if "-delete" in own:
        for path in reached:
            an.target(path, path, seg, "file-delete", f"find -delete deletes {path}")


def _protected_found(an: Walk, fields: list[str | None], roots: list[tuple[str | None, str]],
                     cmd: Simple | None) -> list[str]:
    """The protected files a find's acting primary may reach (``shell.selection``); none when
    it has no such primary or the path check cannot list files (the analysis alone)."""
    listing = getattr(an.check, "protected_files", None)
    base = getattr(an.check, "base", None)
    fed = cmd is not None and an.stdin_text(cmd)[0] != "none"     # yes | find . -ok rm {} \;
    acting = _ACTING + (("-ok", "-okdir") if fed else ())
    if listing is None or base is None or not any(f in acting for f in fields):
        return []
    from governance.shell.selection import acted_on

    folder = str(base) if not an.cwd else system.join(str(base), system.expanduser(an.cwd))
    return acted_on(fields, roots, folder, listing, acting)


def _enter(an: Walk, chdir: dict[str, int], arg: str, following: str | None) -> None:
    """The folder a wrapper option names (``-C DIR``, ``--chdir=DIR``, ``-CDIR``), entered for
    the wrapped command."""
    name, eq, attached = arg.partition("=")
    if name in chdir:
        an.enter(attached if eq else following)
    elif arg[:2] in chdir and not arg.startswith("--"):
        an.enter(arg[2:])


def _with_rest(spec: dict[str, Any], text: str | None, raw: str, fields: list[str | None],
               raws: list[str], rest: int) -> tuple[str | None, str]:
    """``env -S 'A=1' git reset --hard``: the string's words, then the remaining arguments."""
    if not spec.get("string_argv") or rest >= len(fields) or text is None:
        return text, raw
    if any(f is None for f in fields[rest:]):
        return None, raw             # a remaining argument known only at run time
    return " ".join([text, *raws[rest:]]), " ".join([raw, *raws[rest:]])


def _program(an: Walk, spec: dict[str, Any], base: str, fields: list[str | None],
             raws: list[str], cmd: Simple | None, seg: str, depth: int) -> None:
    """A wrapper that names the program it runs with an option (``program_options``) and
    passes it the arguments after ``--``; a query option or none of them runs nothing."""
    program: tuple[str | None, str] | None = None
    options = spec["program_options"]
    with_value = spec.get("with_value", {})
    k, n = 1, len(fields)
    while k < n and fields[k] != "--":
        arg = fields[k]
        if arg is not None and arg in options:
            program = (fields[k + 1], raws[k + 1]) if k + 1 < n else None
            k += 2
            continue
        name, eq, value = (arg or "").partition("=")
        if eq and name in options:
            program = (value, raws[k])
        elif arg is not None and (arg in spec.get("query_flags", {}) or
                                  arg in an.shell.get("harmless_flags", ())):
            an.add("shell-read", seg, f"{base} {arg} runs nothing")
            return
        k += 2 if arg in with_value else 1
    if program is None:
        an.add("shell-read", seg, f"{base} is given no program to run")
        return
    _act(an, spec, seg, True)
    rest = fields[k + 1:] if k < n else []
    words, texts = [program[0], *rest], [program[1], *raws[k + 1:]]
    an.resolve(words, [False] * len(words), texts, cmd, seg, depth) if cmd is not None else \
        an.unknown(seg, f"{base} runs a program")


def _variable(name: str) -> bool:
    """A name ``env NAME=VALUE`` gives a value: an identifier, or ``BASH_FUNC_f%%`` (a function
    the bash it starts imports)."""
    return name.isidentifier() or (name.startswith("BASH_FUNC_") and name.endswith(("%%", "()")))


def _assigned(an: Walk, name: str, value: str | None, raw: str, seg: str, depth: int) -> None:
    """``env PS1=... bash -i``, ``env 'BASH_FUNC_ls%%=() { ...; }' bash -c ls``: what bash
    will run of the variable (``shell.evaluated``)."""
    from governance.shell import evaluated
    from governance.shell.programs import CLAUDE_ENV

    if name in CLAUDE_ENV:     # env CLAUDE_CODE_SIMPLE=1 claude: as if the shell had set it
        an.vars[name] = value
    if evaluated.hooked(name):
        evaluated.hook(an, name, value, raw.split("=", 1)[-1], seg, depth)
