"""Commands run once per input value: ``xargs`` and GNU ``parallel``.

Imported by ``shell.wrapper`` when one appears. The command they run is built as they build it:
``xargs`` appends the words it reads (from ``-a FILE``, a here-string, a pipe from ``echo`` or a
file written earlier in the command) or puts each line in place of ``-I R``; ``parallel`` puts
each value given after ``:::`` (or read from a ``::::`` file or its input) in place of ``{}`` and
the other replacement strings, appends it when the command names none, and runs the values
themselves as commands when it is given no command. A value known only at run time stays
unknown (``"$__input"``), so the command it completes is judged by what it could be.
"""

from __future__ import annotations

from governance.shell.words import quote

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from governance.shell.parser import Simple
    from governance.shell.walk import Walk

_MAX_RUNS = 16          # distinct commands built from the values, at most
_MAX_WORDS = 64
_UNKNOWN = '"$__input"'
_SECRET = "\0secret"                # a value read from a secret file
_SECRET_INPUT = '"$__secret_input"'  # how the command it fills names it (secret flow)
_JOB = ("#", "%")       # {#}, {%}: the job and slot numbers


def _input(an: Walk, source: str | None, from_file: bool, cmd: Simple | None) -> str | None:
    """The text a command reads its values from: a file written earlier in the command, or
    its standard input when that is known (here-string, here-doc, ``echo ... |``, a file on
    disk)."""
    if from_file:
        from governance.shell.streams import disk_text

        return disk_text(an, source)
    if cmd is None:
        return None
    kind, text = an.stdin_text(cmd)
    if kind == "file":                     # xargs rm -rf < list.txt: the file's lines
        from governance.shell.streams import disk_text

        return disk_text(an, text)
    return text if kind == "literal" else None


def _split(text: str, delimiter: str | None, lines: bool) -> list[str]:
    if delimiter:
        return [w for w in text.split(delimiter) if w.strip("\n")]
    if lines:
        return [line.strip() for line in text.splitlines() if line.strip()]
    return [w.strip("'\"") for w in text.split()]


def xargs(an: Walk, spec: dict[str, Any], fields: list[str | None], raws: list[str],
          cmd: Simple | None, seg: str, depth: int) -> None:
    with_value = spec.get("with_value", {})
    i, n = 1, len(fields)
    replace: str | None = None
    source: str | None = None
    from_file = single = False
    delimiter: str | None = None
    while i < n:
        arg = fields[i]
        if arg is None or arg == "-" or not arg.startswith("-"):
            break
        i += 1
        if arg == "--":
            break
        name, eq, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if not eq and not arg.startswith("--") and len(arg) > 2 and arg[:2] in with_value:
            name, eq, value = arg[:2], "=", arg[2:]           # -a FILE as -aFILE
        if not eq and with_value.get(name) and i < n:
            value, eq = fields[i] or "", "=" if fields[i] is not None else ""
            i += 1
        if name in ("-a", "--arg-file"):
            source, from_file = (value if eq else None), True
        elif name in ("-I", "--replace") or name.startswith("-i"):
            replace = value or (name[2:] if name.startswith("-i") and len(name) > 2 else "{}")
        elif name in ("-0", "--null"):
            delimiter = "\0"
        elif name in ("-d", "--delimiter"):
            delimiter = value.replace("\\n", "\n") or None
        elif name in ("-n", "--max-args", "-L", "--max-lines") and value == "1":
            single = True
    template: list[str | None] = list(fields[i:]) or [spec.get("default") or "echo"]
    text = _input(an, source, from_file, cmd)
    words = None if text is None else _split(text, delimiter, replace is not None)
    runs: list[list[str | None]] = []
    if words is None:                       # read at run time: {} stands for any value
        runs.append([w.replace(replace, "{}") if w is not None else None for w in template]
                    if replace else [*template, None])
    elif replace:
        runs.extend([w.replace(replace, v) if w is not None else None for w in template]
                    for v in words[:_MAX_RUNS])
    elif single:
        runs.extend([*template, v] for v in words[:_MAX_RUNS])
    else:
        runs.append([*template, *words[:_MAX_WORDS]])
    tail = raws[i:]
    read = "(read from input)"
    if words is None and source is None and cmd is not None and cmd.piped_from is not None:
        read = "\0" + cmd.piped_from.segment   # find .claude | xargs rm: what the pipe lists
    for argv in runs or [template]:
        spelled = [*tail, *[read] * (len(argv) - len(tail))][:len(argv)]
        if words is None and replace and read[:1] == "\0":   # find /srv | xargs -I{} rm {}
            spelled = [read if w is not None and "{}" in w else r for w, r in zip(argv, spelled,
                                                                                  strict=True)]
        an.resolve(argv, [False] * len(argv), spelled, cmd, seg, depth)


def parallel(an: Walk, spec: dict[str, Any], fields: list[str | None], cmd: Simple | None,
             seg: str, depth: int) -> None:
    with_value = spec.get("with_value", {})
    separators = spec.get("stop", {})
    i, n = 1, len(fields)
    replace = "{}"
    sources: list[list[str | None]] = []
    piped = False
    secret: list[str] = []      # secret files the values are read from (-a .env, :::: .env)
    while i < n:
        arg = fields[i]
        if arg is None or arg == "-" or not arg.startswith("-") or arg in separators:
            break
        i += 1
        if arg == "--":
            break
        value = fields[i] if with_value.get(arg) and i < n else None
        if arg in ("-I", "--replace") and value:
            replace = value
        elif arg in ("-a", "--arg-file"):
            sources.append(_values(an, value, True, secrets=secret))
        elif arg == "--pipe" or arg == "--pipepart":
            piped = True
        elif arg in ("--dry-run", "--dryrun"):         # prints the commands, runs none
            an.add("shell-read", seg, f"parallel {arg} only prints the commands")
            return
        i += int(with_value.get(arg, 0))
    end = next((k for k in range(i, n) if fields[k] in separators), n)
    template = fields[i:end]
    k = end
    while k < n:                               # ::: a b :::: FILE ...
        mark = fields[k]
        j = k + 1
        while j < n and fields[j] not in separators:
            j += 1
        if mark in (":::", ":::+"):
            sources.append(list(fields[k + 1:j]))
        else:
            sources.extend(_values(an, f, True, secrets=secret) for f in fields[k + 1:j])
        k = j
    if not sources and not piped:
        fed: list[str] = []
        if cmd is not None and getattr(an.check, "secret_path", None) is not None:
            from governance.shell.secrets import stdin  # cat .env | parallel curl .../{}

            fed = [label for label, _how in stdin(an, cmd)]
        if fed:
            secret.extend(fed)
            sources.append([_SECRET])
        else:
            sources.append(_values(an, None, False, cmd))
    if any(w is None for w in template):
        an.unknown(seg, "parallel runs a command known only at run time")
        return
    text = " ".join(str(w) for w in template)
    before = len(an.acts)
    if secret:              # the values are the secret's lines: what uses them carries it
        from governance.shell.secrets import flow

        flow(an).vars[_SECRET_INPUT[2:-1]] = list(dict.fromkeys(secret))
    for combination in _combinations(sources):
        line = _fill(text, replace, combination) if text else " ".join(
            v if v is not None else _UNKNOWN for v in combination)
        an.script(line, depth + 1, seg)
    if cmd is not None and cmd.piped_from is not None and sources == [[None]] and any(
            a.primitive == "file-delete" for a in an.acts[before:]):
        from governance.shell import trees  # find /srv -type f | parallel rm

        roots = trees.listed(an, cmd.piped_from)
        if roots:
            trees.delete(an, roots, cmd, seg, depth + 1)


def _values(an: Walk, source: str | None, from_file: bool, cmd: Simple | None = None,
            secrets: list[str] | None = None) -> list[str | None]:
    if from_file and secrets is not None and getattr(an.check, "secret_path", None):
        from governance.shell.secrets import secret_file

        label = secret_file(an, source)
        if label is not None:           # parallel CMD :::: .env: each line a secret
            secrets.append(label)
            return [_SECRET]
    text = _input(an, source, from_file, cmd)
    return [None] if text is None else [v for v in _split(text, None, True)] or [None]


def _combinations(sources: list[list[str | None]]) -> list[list[str | None]]:
    out: list[list[str | None]] = [[]]
    for values in sources:
        out = [[*c, v] for c in out for v in values][:_MAX_RUNS]
    return out


def _fill(template: str, replace: str, values: list[str | None]) -> str:
    """The command ``parallel`` runs for one set of values: each replacement string (``{}``,
    ``{.}``, ``{/}``, ``{2}``, ``{= perl =}`` ...) filled with its value, quoted as parallel
    quotes it; the values appended when the template names none."""
    def value(k: int) -> str:
        v = values[k] if 0 <= k < len(values) else None
        return _SECRET_INPUT if v == _SECRET else quote(v) if v is not None else _UNKNOWN

    everything = " ".join(value(k) for k in range(len(values)))
    if replace != "{}":
        return template.replace(replace, everything) if replace in template else \
            f"{template} {everything}"
    out: list[str] = []
    i, n = 0, len(template)
    filled = False
    while i < n:
        close = template.find("}", i + 1) if template[i] == "{" else -1
        inner = template[i + 1:close] if close > 0 else None
        if inner is not None and (inner.startswith("=") or inner in _JOB or
                                  inner.strip("./") == "" or inner.rstrip("./").isdigit()):
            head = inner.rstrip("./")
            out.append("1" if inner in _JOB else _UNKNOWN if inner.startswith("=") else
                       value(int(head) - 1) if head.isdigit() else everything)
            filled = True
            i = close + 1
            continue
        out.append(template[i])
        i += 1
    return "".join(out) if filled else f"{template} {everything}"
