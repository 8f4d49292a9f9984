"""What flows through files and pipes inside one command: the text a command writes (echo,
printf, cat of a heredoc or of a file written earlier), what a program reads on standard input,
array elements, and inline code handed to ``shell.inline``.

Imported by ``shell.analysis`` only when such text is needed (a program fed on stdin, a file
written and then run, inline code, an array), so an ordinary command does not pay for reading
this module. May use ``shell.parser`` and, for types, ``shell.walk``.
"""

from __future__ import annotations

from governance.shell.parser import ParseError, parse
from governance.shell.words import quote

TYPE_CHECKING = False
if TYPE_CHECKING:
    from governance.shell.parser import Simple
    from governance.shell.walk import Walk

def output_of(an: Walk, cmd: Simple) -> str | None:
    """What a simple command writes to standard output, when it is known literally: echo,
    printf without conversions, cat of a heredoc, here-string, a file written earlier or one
    on disk (not a secret file)."""
    fields = [an.expand_one(w.parts) for w in cmd.words]
    if not fields or any(f is None for f in fields):
        return None
    words = [str(f) for f in fields]
    name = words[0].rsplit("/", 1)[-1]
    if name in ("echo", "printf"):
        from governance.shell import escapes  # as bash decodes them

        if name == "echo":
            return escapes.echo(words[1:])
        return escapes.printf_command(words[1:])
    if name == "cat":
        files = [w for w in words[1:] if not w.startswith("-") or w == "-"]
        if not files or files == ["-"]:
            for redir in cmd.redirs:
                if redir.op in ("<<", "<<-") and redir.body is not None:
                    return str(redir.body)
                if redir.op == "<<<" and redir.target is not None:
                    value = an.expand_one(redir.target.parts)
                    return None if value is None else value + "\n"
            return None
        texts = [disk_text(an, f) for f in files]     # written earlier, or on disk now
        return None if any(t is None for t in texts) else "".join(str(t) for t in texts)
    return None


def stdin_text(an: Walk, cmd: Simple) -> tuple[str, str | None]:
    """What a command reads on standard input: ("literal", text) for a heredoc, a here-string,
    a pipe from a command whose output is known, or a file written earlier; ("file", path)
    for another file; ("opaque", None) for a pipe or process substitution known only at run
    time; ("none", None) when nothing is fed."""
    for redir in reversed(cmd.redirs):
        if redir.op in ("<<", "<<-") and redir.body is not None:
            return "literal", str(redir.body)
        if redir.op == "<<<" and redir.target is not None:
            value = an.expand_one(redir.target.parts)
            return ("opaque", None) if value is None else ("literal", value + "\n")
        if redir.op == "<" and redir.target is not None:
            value = an.expand_one(redir.target.parts)
            known = an.file_text(value)           # < <(echo SQL): what it writes is known
            if known is None and (value is None or value.startswith(("/dev/fd/", "/proc/"))):
                return "opaque", None
            return ("literal", known) if known is not None else ("file", value)
    if cmd.piped:
        source = cmd.piped_from
        text = an.output_of(source) if source is not None else None
        return ("literal", text) if text is not None else ("opaque", None)
    return "none", None


def disk_text(an: Walk, value: str | None) -> str | None:
    """The text of a file a command reads its input or a value from (``xargs rm < list.txt``,
    ``$(< name.txt)``): written earlier in the command, or on disk now; None when not known (a
    secret file's text is never taken as a value: what carries it is the secret flow's)."""
    known = an.file_text(value)
    if known is not None or value is None:
        return known
    from governance.shell.source import path_of, read

    path = path_of(an, value)
    if path is None:
        return None
    secret = getattr(an.check, "secret_path", None)
    if secret is not None and secret(path):
        return None
    kind, text = read(an, path)
    return text if kind == "text" else None


def inline(an: Walk, language: str, code: str, seg: str, depth: int) -> None:
    """What inline code does beyond computing (``shell.inline``), each finding an act."""
    from governance.shell.inline import findings

    found_all = findings(language, code)
    folders = [f.path for f in found_all if f.primitive == "chdir"]   # os.chdir(".claude")
    for found in found_all:
        if found.primitive == "chdir":
            continue
        if folders and found.primitive in ("file-write", "file-delete", "destructive") and \
                not (found.path or "/").startswith(("/", "~")):
            _moved(an, folders, found.path, found.primitive, found.reason, seg)
        if found.primitive == "shell":
            if found.command is not None:
                an.script(found.command, depth + 1, seg)
            elif found.argv:
                an.script(" ".join(quote(a) for a in found.argv), depth + 1, seg)
        elif found.primitive == "shell-unknown":
            an.unknown(seg, found.reason)
        elif found.primitive in ("file-write", "file-delete", "destructive"):
            path = found.path
            primitive, reason = found.primitive, found.reason
            if primitive == "destructive" and path is not None and not folders:
                from governance.shell.generated import check  # shutil.rmtree("build")

                rebuilt, regenerable = check(an, [(path, path)])
                if rebuilt:
                    primitive, reason = "file-delete", f"{reason}: {regenerable}"
            an.target(path, path or "", seg, primitive, reason,
                      folder=found.primitive != "file-write")   # a moved folder goes whole
            if found.primitive == "file-write":
                an.written(path)
        elif found.primitive == "web-fetch" and found.path and "prox" not in code.lower():
            from governance.shell.endpoint import url_reason

            why = url_reason(found.path, an.shell.get("local_hosts", ()))
            an.add("local-request" if why else "web-fetch", seg,
                   f"{found.reason}: the request goes to {why}, not the web" if why else found.reason)
        else:
            an.add(found.primitive, seg, found.reason)


def _moved(an: Walk, folders: list[str | None], path: str | None, primitive: str, reason: str,
           seg: str) -> None:
    """A relative path of code that changes its folder first (``os.chdir``, ``process.chdir``,
    ``Dir.chdir``): the path in each folder it changes to; a folder known only at run time
    leaves the file unknown."""
    for folder in folders:
        if folder is None or path is None:
            an.unknown(seg, f"{reason} in a folder known only at run time")
            return
        inside = folder.rstrip("/") + "/" + path
        an.target(inside, inside, seg, primitive, f"{reason} (in {folder})",
                  folder=primitive != "file-write")


def array(an: Walk, items: str) -> str | None:
    """An array's elements joined by spaces, when every one is known and holds no space."""
    words: list[str] = []
    for text in items.split("\0") if items else []:
        try:
            parsed = parse(f": {text}", 4, 0, [64])
        except ParseError:
            return None
        values = [an.expand_one(w.parts) for cmd in parsed for w in cmd.words[1:]]
        if not values or any(v is None or " " in v for v in values):
            return None
        words.extend(str(v) for v in values)
    return " ".join(words)
