"""Resolving one expanded command: wrappers, nested shells, evaluators, interpreters, ``find``.

Hot path: imports only our own ``shell.rules``. ``resolve`` peels wrappers (``sudo``, ``env``,
``timeout``, ``xargs`` ...) off an argument vector until it reaches the command that really runs,
recurses into the strings that nested shells and evaluators run (``bash -c``, ``eval``, ``watch``,
``su -c``, heredocs fed to a shell), and finally matches the ``shell.commands`` patterns.
"""

from __future__ import annotations

from governance.shell.rules import lookup_name, match_command, name_forms

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
            _evaluator(an, shell["evaluators"][name], base, fields, raws, seg, depth)
            return
        name = lookup_name(forms, shell.get("interpreters", {}))
        if name is not None:
            mapped = _interpreter(an, shell["interpreters"][name], base, fields, raws, cmd, seg)
            if mapped is None:
                return
            fields, globs, raws = mapped, [False] * len(mapped), [str(f) for f in mapped]
            continue
        if base in shell.get("finders", {}):
            _find(an, shell["finders"][base], fields, globs, raws, cmd, seg, depth)
            return
        _plain(an, base, fields, raws, seg)
        return
    an.unknown(seg, "too many wrappers around the command")


def _plain(an: Walk, base: str, fields: list[str | None], raws: list[str], seg: str) -> None:
    shell = an.shell
    first = str(fields[0])
    if base in ("cd", "pushd"):
        an.change_dir(fields)
    elif base in _DECLARERS:
        for arg in fields[1:]:
            if arg and "=" in arg and not arg.startswith("-"):
                var, _, value = arg.partition("=")
                an.vars[var] = value
                an.ifs = an.ifs or var == "IFS"
    matched = harmless = False
    name = lookup_name(first, shell.get("commands", {}))
    if name is not None:
        safe = shell.get("safe_targets", {})
        for rule, targets in match_command(shell["commands"][name], fields[1:], raws[1:]):
            real = [(t, raw) for t, raw in targets
                    if t is None or not (t in safe or t.startswith("/dev/fd/"))]
            if not real and (targets or rule["targets"]):
                harmless = True               # writes only to /dev/null and the like, or nothing
                continue
            matched = True
            an.add(rule["primitive"], seg, rule["reason"])
            for target, raw in real:
                an.target(target, raw, seg, rule["primitive"], rule["reason"], rule["folders"])
    if "/" in first and an.protected(first, raws[0]):
        an.add("governance-admin", seg, f"{raws[0]} is a governance script: ask the user to run "
               "it from a terminal")
    if matched:
        return
    if harmless or lookup_name(first, shell.get("read_only", {})) is not None:
        an.add("shell-read", seg, f"{base} only reads")
    else:
        an.add("shell-execute", seg, f"{base} runs a program")


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
    if spec.get("primitive"):
        an.add(spec["primitive"], seg, spec["reason"])
    with_value = spec.get("with_value", {})
    string_opts = spec.get("string_options", {})
    query = spec.get("query_flags", {})
    skip = spec.get("skip", 0)
    stop = spec.get("stop", {})
    while i < n:
        arg = fields[i]
        if arg is None:
            head = raws[i].split("=", 1)[0]
            if spec.get("assignments") and "=" in raws[i] and head.isidentifier():
                i += 1
                continue
            break
        if arg == "--":
            i += 1
            break
        if arg in string_opts or (arg[:1] == "-" and arg[1:2] != "-" and len(arg) > 2 and
                                  "-" + arg[-1] in string_opts):   # bundled: script -qc CMD
            text = fields[i + 1] if i + 1 < n else ""
            _string(an, text, raws[i + 1] if i + 1 < n else "", base, seg, depth)
            return None
        if arg.startswith("-") and len(arg) > 1 and not spec.get("no_options"):
            if arg in query:
                an.add("shell-read", seg, f"{base} {arg} only looks a command up")
                return None
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
    if spec.get("string"):
        words = fields[i:end]
        if any(w is None for w in words):
            an.unknown(seg, f"{base} runs a command known only at run time")
        else:
            text = " ".join(str(w) for w in words)
            if spec.get("appends"):
                text += ' "$__input"'            # arguments read at run time
            an.script(text, depth + 1, seg)
        return None
    if end < n:
        del fields[end:]
        del raws[end:]
    if spec.get("appends"):
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
    inline = False
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
            i += 1
            continue
        break
    if inline:
        if i < n:
            _string(an, fields[i], raws[i], f"{base} -c", seg, depth)
        return
    if i < n:
        _script_file(an, base, fields[i], raws[i], seg)
        return
    _stdin(an, base, cmd, seg, depth, as_shell=True)


def _script_file(an: Walk, base: str, value: str | None, raw: str, seg: str) -> None:
    an.add("shell-execute", seg, f"{base} runs the script {raw}")
    if an.protected(value, raw):
        an.add("governance-admin", seg, f"{raw} is a governance script: ask the user to run it "
               "from a terminal")


def _stdin(an: Walk, base: str, cmd: Simple, seg: str, depth: int, as_shell: bool) -> None:
    """A shell or interpreter that reads its program from standard input."""
    for redir in cmd.redirs:
        if redir.op in ("<<", "<<-") and redir.body is not None and as_shell:
            an.script(redir.body, depth + 1, seg)
            return
        if redir.op == "<<<" and redir.target is not None and as_shell:
            _string(an, an.expand_one(redir.target.parts), "here-string", base, seg, depth)
            return
    what = "commands" if as_shell else "code"
    an.add("code-exec", seg, f"{base} runs {what} read from standard input")


def _evaluator(an: Walk, kind: str, base: str, fields: list[str | None], raws: list[str],
               seg: str, depth: int) -> None:
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
    elif args:
        _script_file(an, base, args[0], raws[1], seg)
    else:
        an.add("shell-read", seg, f"{base} without a file does nothing")


def _interpreter(an: Walk, spec: dict[str, Any], base: str, fields: list[str | None],
                 raws: list[str], cmd: Simple, seg: str) -> list[str | None] | None:
    """Handle ``python -c`` & co.; returns the argv a ``-m module`` maps to, else None."""
    inline = spec.get("inline", {})
    modules = spec.get("module", {})
    with_value = spec.get("with_value", {})
    i = 1
    n = len(fields)
    while i < n:
        arg = fields[i]
        if arg is None or arg == "-" or not arg.startswith("-"):
            break
        if arg == "--":
            i += 1
            break
        if arg in with_value:
            i += 2
            continue
        if arg in inline or (not arg.startswith("--") and any(
                len(o) == 2 and o[1] in arg[1:] for o in inline)):
            an.add("code-exec", seg, f"{base} {arg} runs inline code")
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
    if i < n and fields[i] != "-":
        _script_file(an, base, fields[i], raws[i], seg)
        return None
    _stdin(an, base, cmd, seg, 0, as_shell=False)
    return None


def _find(an: Walk, spec: dict[str, Any], fields: list[str | None], globs: list[bool],
          raws: list[str], cmd: Simple, seg: str, depth: int) -> None:
    """``find``: its own tests and actions, plus the commands its ``-exec`` actions run."""
    execs = spec.get("exec", {})
    own: list[str | None] = [fields[0]]
    own_raws = [raws[0]]
    i = 1
    n = len(fields)
    while i < n:
        arg = fields[i]
        if arg in execs:
            j = i + 1
            while j < n and fields[j] not in (";", "+"):
                j += 1
            if j > i + 1:
                resolve(an, fields[i + 1:j], globs[i + 1:j], raws[i + 1:j], cmd, seg, depth)
            i = j + 1
            continue
        own.append(arg)
        own_raws.append(raws[i])
        i += 1
    _plain(an, str(fields[0]).rsplit("/", 1)[-1], own, own_raws, seg)
