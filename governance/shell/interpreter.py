"""Interpreters run inline: ``python -c CODE``, ``perl -pi -e CODE FILES``, ``node -r MODULE``,
``python -m MODULE`` (mapped to the command it stands for), a script file or code fed on stdin.

Imported by ``shell.resolver`` when an interpreter appears; the code itself is read by
``shell.inline`` (through ``Walk.inline``).
"""

from __future__ import annotations

from governance.shell.rules import lookup_name
from governance.shell.script import STDIN_PATHS, language_of, script_file, stdin_program

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from governance.shell.parser import Simple
    from governance.shell.walk import Walk

PRELOAD = ("-M", "-m", "-r", "--require")



def _arguments(an: Walk, language: str, code: str, fields: list[str | None], raws: list[str],
               seg: str) -> None:
    """Inline code that writes, deletes or moves a file it does not name (``open(sys.argv[1],
    "w")``, ``unlink @ARGV``, ``fs.rmSync(process.argv[1])``): each argument the command line
    gives it may be that file."""
    args = [(f, r) for f, r in zip(fields, raws, strict=False)
            if f is None or not f.startswith("-") or f == "-"]
    if not args:
        return
    from governance.shell.inline import findings

    for found in findings(language, code):
        if found.primitive in ("file-write", "file-delete", "destructive") and found.path is None:
            for value, raw in args:
                an.target(value, raw, seg, found.primitive,
                          f"{found.reason}, and {raw} is an argument it is given",
                          folder=found.primitive != "file-write")
            return

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


def interpret(an: Walk, spec: dict[str, Any], name: str, base: str,
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
        if arg in spec.get("encoded", ()):    # pwsh -EncodedCommand BASE64: opaque
            an.unknown(seg, f"{base} {arg} runs encoded code, known only at run time")
            return None
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
                after = i + (1 if attached else 2)
                _arguments(an, language, code, fields[after:], raws[after:], seg)
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
            if module in ("pip", "venv", "virtualenv"):   # python -m pip uninstall: its env
                from governance.shell import environments

                environments.check(an, module, [fields[0], *rest], seg)
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
        if word in spec.get("eval", ()):     # deno eval CODE
            code = fields[i + 1] if i + 1 < n else ""
            if code is None:
                an.unknown(seg, f"{base} {word} runs code known only at run time")
            elif code:
                an.inline(language or "code", code, seg, depth)
            return None
        if "/" not in word and "." not in word and lookup_name(
                name, an.shell.get("commands", {})) is not None:
            an.plain(base, fields, raws, seg, depth)  # bun add x, deno install y
            return None
        if "node_modules/" in word:     # node .../node_modules/PKG/cli.js ARGS: PKG's command
            command = _package_command(an, word)
            if command is not None:
                return [command, *fields[i + 1:]]
        runner = an.shell.get("commands", {}).get(word.rsplit("/", 1)[-1])
        if runner is not None and runner.get("lexicon"):   # php artisan X, python manage.py X
            an.plain(word.rsplit("/", 1)[-1], fields[i:], raws[i:], seg, depth)
        script_file(an, base, fields[i], raws[i], seg, depth, language or "code")
        return None
    stdin_program(an, base, cmd, seg, depth, language or "code")
    return None


def _package_command(an: Walk, path: str) -> str | None:
    """The command a file of an installed package stands for (``.../node_modules/@anthropic-ai/
    claude-code/cli.js``: ``claude``), when the analysis has an entry for it."""
    parts = path.rsplit("node_modules/", 1)[1].split("/")
    package = "/".join(parts[:2]) if parts[0].startswith("@") else parts[0]
    name = an.shell.get("package_bins", {}).get(package) or package.rsplit("/", 1)[-1]
    return name if lookup_name(name, an.shell.get("commands", {})) is not None else None
