"""Files a command runs, read from disk when the hook decides: a script (``bash tools/x.sh``,
``./x.sh``, ``source x.sh``, ``python tools/y.py``), a recipe file, a git hook. Its text is analysed
as if it had been typed, so what it does is decided like the command that runs it.

Imported by ``shell.script``, ``shell.recipes`` and ``shell.gitfiles`` only when a command runs a
file. Bounded: a file larger than ``MAX_BYTES``, more than ``MAX_FILES`` files or ``MAX_BYTES_ALL``
bytes in one analysis, or files run ``MAX_LEVEL`` deep (a script running a script running a script)
cannot be read; what cannot be read (a binary, a file too large or too deep) is ``shell-unknown``.
A file that does not exist when the hook decides is left to the caller (the command made it, or
will fail).
"""

from __future__ import annotations

from governance import system

TYPE_CHECKING = False
if TYPE_CHECKING:
    from governance.shell.walk import Walk

MAX_BYTES = 256 * 1024        # one file
MAX_BYTES_ALL = 1024 * 1024   # every file one analysis reads
MAX_FILES = 48
MAX_LEVEL = 3                 # the command -> a file -> a file it runs -> one more
SYSTEM = ("/usr/", "/bin/", "/sbin/", "/lib/", "/lib64/", "/nix/store/", "/snap/",
          "/System/", "/Library/Apple/")
# words that may name a governance-protected path: only these are checked as paths
HINTS = ("claude", "governance", "activity_matrix", "settings", "ledger")


def path_of(an: Walk, value: str | None) -> str | None:
    """``value`` as an absolute path, relative to the folder the command runs in; None when the
    folder or the value is known only at run time (``cd "$X"``), or when the analysis reads no
    files (no folder was given: ``governance explain-command`` outside a project)."""
    if an.root is None or value is None or not value or any(c in value for c in "*?["):
        return None
    path = system.expanduser(value)
    if system.isabs(path):
        return system.normpath(path)
    if an.cwd is None:
        return None
    return system.normpath(system.join(an.root, an.cwd, path))


def read(an: Walk, path: str) -> tuple[str, str]:
    """(kind, text) of the file at ``path``: kind is "text", "binary", "missing", "large",
    "spent" (the analysis read enough already) or "unreadable"."""
    budget = an.reads
    if budget[0] <= 0 or budget[1] <= 0:
        return "spent", ""
    try:
        fd = system.open(path, system.O_RDONLY | system.O_NONBLOCK)
    except FileNotFoundError:
        return "missing", ""
    except NotADirectoryError:
        return "missing", ""
    except OSError:
        return "unreadable", ""
    try:
        size = system.fstat(fd).st_size
        if size > MAX_BYTES:
            return "large", ""
        data = system.read(fd, min(MAX_BYTES, budget[0]) + 1)
    except OSError:   # a folder, a device
        return "unreadable", ""
    finally:
        system.close(fd)
    budget[0] -= len(data)
    budget[1] -= 1
    if len(data) > MAX_BYTES or budget[0] < 0:
        return "large", ""
    if b"\0" in data[:8192] or data[:4] in (b"\x7fELF", b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe"):
        return "binary", ""
    return "text", data.decode("utf-8", "replace")


def written(an: Walk, path: str) -> str | None:
    """The name under which this command wrote ``path`` earlier, if it did."""
    root = an.root
    names = [path]
    if root is not None and path.startswith(root.rstrip("/") + "/"):
        names.append(path[len(root.rstrip("/")) + 1:])
    return next((name for name in names if an.wrote(name)), None)


def text_of(an: Walk, base: str, path: str, raw: str, seg: str) -> str | None:
    """The text of a file the command runs; None (and, when it cannot be read, ``shell-unknown``)
    otherwise. A missing file adds nothing."""
    if an.level >= MAX_LEVEL:
        an.unknown(seg, f"{base} runs {raw}, nested in files too deep to read")
        return None
    name = written(an, path)
    if name is not None:          # the command wrote it before running it: that text, if known
        text = an.file_text(name)
        if text is None:
            an.unknown(seg, f"{base} runs {raw}, written earlier in this command with text "
                            "known only at run time")
        return text
    kind, text = read(an, path)
    if kind == "text":
        return text
    if kind == "binary":
        if not path.startswith(SYSTEM):
            an.unknown(seg, f"{base} runs {raw}, a binary program: what it does cannot be read")
    elif kind == "large":
        an.unknown(seg, f"{base} runs {raw}, larger than the {MAX_BYTES // 1024} KiB governance "
                        "reads")
    elif kind == "spent":
        an.unknown(seg, f"{base} runs {raw}, beyond the files one command may read")
    elif kind == "unreadable":
        an.unknown(seg, f"{base} runs {raw}, which governance cannot read")
    return None


def names_governance(an: Walk, text: str, language: str | None) -> str | None:
    """Why a program's text is a governance act whatever it calls: it imports our package, or
    names a governance-protected path. None when it does neither."""
    if "governance" in text and language in (None, "python") and imports_governance(text):
        return "it imports governance's own package"
    lowered = text.lower()
    for marker in an.shell.get("protected_markers", ()):
        if marker in lowered:
            return f"it names {marker!r}, a governance-protected path"
    if not any(h in lowered for h in HINTS):
        return None
    for word in text.replace('"', " ").replace("'", " ").replace("=", " ").split():
        low = word.lower()
        if any(h in low for h in HINTS) and an.protected(word.rstrip(";,)"), word):
            return f"it names {word}, a governance-protected path"
    return None


def imports_governance(code: str) -> bool:
    """Whether Python code imports our package (``import governance...``, ``from governance``,
    ``__import__``/``import_module`` of it)."""
    for line in code.splitlines():
        for statement in line.split(";"):
            words = statement.replace(",", " , ").replace("(", " ").split()
            if words[:1] == ["from"] and len(words) > 1:
                words = words[:2]
            elif words[:1] != ["import"]:
                continue
            if any(w.split(".", 1)[0] == "governance" for w in words[1:]):
                return True
        if ("import_module(" in line or "__import__(" in line) and (
                "'governance" in line or '"governance' in line):
            return True
    return False


def run_text(an: Walk, text: str, language: str | None, origin: str, seg: str, depth: int,
             cwd: str | None = None, keep_cwd: bool = False) -> None:
    """Analyse a program read from a file (shell commands, or code by ``language`` or its ``#!``
    line) one level deeper, its acts saying where they came from; in ``cwd`` when given (a recipe
    runs in its file's folder). A ``cd`` inside ends with the program unless ``keep_cwd`` (a sourced
    script). Governance's own package or paths make it ``governance-admin``."""
    from governance.shell.program import program, shebang_language

    why = names_governance(an, text, language or shebang_language(text))
    if why is not None:
        an.add("governance-admin", seg, f"{origin} runs code that drives governance ({why}): "
               "ask the user to run it from a terminal")
    saved = (an.origin, an.cwd, an.level)
    an.origin, an.level = origin, an.level + 1
    if cwd is not None:
        an.cwd = cwd
    try:
        program(an, text, language, seg, depth)
    finally:
        an.origin, an.level = saved[0], saved[2]
        if not keep_cwd:
            an.cwd = saved[1]


def run_file(an: Walk, base: str, value: str | None, raw: str, seg: str, depth: int,
             language: str | None = None, keep_cwd: bool = False) -> bool:
    """Read and analyse the file a command runs. False when it does not exist, its name is known
    only at run time or it is a system program, so the caller decides as before."""
    path = path_of(an, value)
    if path is None or path.startswith(SYSTEM):
        return False
    text = text_of(an, base, path, raw, seg)
    if text is None:
        return system.lexists(path)
    run_text(an, text, language, raw, seg, depth, keep_cwd=keep_cwd)
    return True


def find_up(start: str, names: tuple[str, ...]) -> str | None:
    """The first of ``names`` in ``start`` or the nearest folder above it (as ``just`` and ``npm``
    look for their file), at most 40 levels up."""
    folder = start
    for _ in range(40):
        for name in names:
            path = system.join(folder, name)
            if system.isfile(path):
                return path
        parent = system.dirname(folder)
        if parent == folder:
            return None
        folder = parent
    return None
