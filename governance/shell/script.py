"""Programs a shell runs as text: ``bash -c STRING``, a script file, commands fed on standard
input, ``eval``/``source``/``trap``/``alias``; a program's text, when known, is analysed as shell
commands or, by its ``#!`` line, as code of an interpreter's language.

Imported by ``shell.resolver`` when such a program appears. A text produced at run time (a decoder,
a variable, a download) is ``shell-unknown``, never a harmless ``code-exec``.
"""

from __future__ import annotations

from governance.shell.program import LANGUAGES, language_of, program, shebang_language

TYPE_CHECKING = False
if TYPE_CHECKING:
    from governance.shell.parser import Simple
    from governance.shell.walk import Walk

STDIN_PATHS = ("/dev/stdin", "/dev/fd/0", "/proc/self/fd/0")
__all__ = ["LANGUAGES", "STDIN_PATHS", "language_of", "program", "shebang_language"]


def string(an: Walk, text: str | None, raw: str, base: str, seg: str, depth: int) -> None:
    if text is None:
        an.unknown(seg, f"{base} runs a string known only at run time ({raw})")
    elif text:
        an.script(text, depth + 1, seg)


def shell(an: Walk, base: str, fields: list[str | None], raws: list[str], cmd: Simple,
           seg: str, depth: int) -> None:
    if "BASH_ENV" in an.vars and all(name != "BASH_ENV" for name, _ in cmd.assigns):
        from governance.shell.programs import startup  # export BASH_ENV=FILE; bash -c :

        startup(an, an.vars["BASH_ENV"], "$BASH_ENV", seg, depth)
    i = 1
    n = len(fields)
    inline = stdin = False
    while i < n:
        arg = fields[i]
        if arg is None:
            break
        if arg in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            if arg in ("--rcfile", "--init-file"):   # bash --rcfile FILE -i: FILE runs first
                from governance.shell.programs import startup

                startup(an, fields[i + 1] if i + 1 < n else "", raws[i + 1] if i + 1 < n else "",
                        seg, depth)
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
        if i + 1 < n:          # sh -c TEXT NAME ARGS: $0 is NAME and $1... are the ARGS
            from governance.shell.names import run_with

            run_with(an, fields[i + 1:], raws[i + 1:],
                     lambda: string(an, fields[i], raws[i], f"{base} -c", seg, depth))
        elif i < n:
            string(an, fields[i], raws[i], f"{base} -c", seg, depth)
        return
    if i < n and fields[i] not in STDIN_PATHS and not stdin:
        script_file(an, base, fields[i], raws[i], seg, depth)
        return
    stdin_program(an, base, cmd, seg, depth)


def script_file(an: Walk, base: str, value: str | None, raw: str, seg: str,
                 depth: int = 0, language: str | None = None, keep_cwd: bool = False) -> None:
    """A script run from a file, read as what it is (shell commands, or code of ``language``):
    a file written earlier in the same command, else the file on disk (``shell.source``); one
    that does not exist yet is ``shell-execute``. ``keep_cwd``: a sourced script's ``cd`` stays."""
    if an.names is not None and value is not None:   # a copy of a script is that script
        from governance.shell.copies import follow

        value = follow(an, value)
        if value is None:
            an.unknown(seg, f"{base} runs {raw}, a copy of a file known only at run time")
            return
    text = an.file_text(value)
    if text is not None:
        program(an, text, language, seg, depth)
        return
    if value is not None and (value.startswith("/dev/fd/") or value.startswith("/proc/")):
        an.unknown(seg, f"{base} runs a program from {raw}, whose content is produced at run "
                        "time")
        return
    if an.wrote(value):
        an.unknown(seg, f"{base} runs {raw}, written earlier in this command with content "
                        "known only at run time")
        return
    from governance.shell import source

    if not source.run_file(an, base, value, raw, seg, depth, language, keep_cwd):
        an.add("shell-execute", seg, f"{base} runs the script {raw}")
    if an.protected(value, raw):
        an.add("governance-admin", seg, f"{raw} is a governance script: ask the user to run it "
               "from a terminal")


def stdin_program(an: Walk, base: str, cmd: Simple, seg: str, depth: int,
           language: str | None = None) -> None:
    """A shell (``language`` None) or interpreter that reads its program from standard input:
    a literal program (heredoc, here-string, echo/printf piped in, a file written earlier) is
    analysed as what it is; one produced at run time (a decoder, a variable, a download) is
    ``shell-unknown``."""
    kind, text = an.stdin_text(cmd)
    what = "commands" if language is None else f"{language} code"
    if kind == "literal" and text is not None:
        program(an, text, language, seg, depth)
    elif kind == "opaque":
        an.unknown(seg, f"{base} runs {what} fed to it at run time, which cannot be read "
                        "before it runs")
    elif kind == "file":
        script_file(an, base, text, str(text), seg, depth, language)
    else:
        an.add("code-exec", seg, f"{base} runs {what} read from standard input")


def evaluator(an: Walk, kind: str, base: str, fields: list[str | None], raws: list[str],
               cmd: Simple, seg: str, depth: int) -> None:
    args = fields[1:]
    if kind == "eval":
        if any(a is None for a in args):
            an.unknown(seg, f"{base} runs a string known only at run time")
        else:
            an.script(" ".join(str(a) for a in args), depth + 1, seg)
    elif kind == "trap":
        while args and args[0] is not None and args[0].startswith("-") and args[0] != "-" and \
                args[0] not in ("-l", "-p"):
            ended = args[0] == "--"          # trap -- 'rm -rf src' EXIT: the handler follows
            args = args[1:]
            if ended:
                break
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
        stdin_program(an, base, cmd, seg, depth)
    elif args:
        script_file(an, base, args[0], raws[1], seg, depth, keep_cwd=True)
    else:
        an.add("shell-read", seg, f"{base} without a file does nothing")
