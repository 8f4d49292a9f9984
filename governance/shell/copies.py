"""Copies and links of programs and files made by one command (``cp``, ``ln``, ``install``,
``mv``, ``rsync``, ``dd``), and where a path leads through them: ``cp "$(command -v curl)" ./dl``
makes ``./dl`` curl, ``ln -s /usr/bin/git b/x`` makes ``b/x`` git, a copy of a folder holds
copies of its files, and a copy of a script written earlier in the command holds its text.

Used by ``shell.names``. A copy of something known only at run time (``cp "$X" ./dl``, a glob)
leads to None: running it is ``shell-unknown``.
"""

from __future__ import annotations

from governance import system

TYPE_CHECKING = False
if TYPE_CHECKING:
    from governance.shell.walk import Walk

_VALUED = {"cp": ("-t", "-S", "--target-directory", "--suffix"),
           "mv": ("-t", "-S", "--target-directory", "--suffix"),
           "ln": ("-t", "-S", "--target-directory", "--suffix"),
           "install": ("-t", "-S", "-m", "-o", "-g", "--target-directory", "--suffix", "--mode",
                       "--owner", "--group"),
           "rsync": ("-e", "--rsh", "-f", "--filter", "--exclude", "--include", "-T",
                     "--temp-dir", "--chmod", "--rsync-path")}
def key(an: Walk, value: str) -> str:
    path = system.expanduser(value)
    if an.cwd and not system.isabs(path):
        path = system.join(an.cwd, path)
    return system.normpath(path)


def follow(an: Walk, value: str | None) -> str | None:
    """The file a path refers to after the copies and links this command made (the path itself
    when it made none); None when that is known only at run time."""
    names = an.names
    if value is None or names is None:
        return value
    start = path = key(an, value)
    for _hop in range(8):
        if path in names.files:
            target = names.files[path]
            if target is None:
                return None
            path = key(an, target)
            continue
        folder, inside = path, False
        while "/" in folder.strip("/"):
            folder = folder.rsplit("/", 1)[0]
            if folder in names.filled:
                return None
            if folder in names.files:     # a copy of a folder holds copies of its files
                target = names.files[folder]
                if target is None:
                    return None
                path, inside = key(an, target) + path[len(folder):], True
                break
        if not inside:
            break
    if path == start:
        return value
    if not system.isabs(path):                # keys are relative to the folder the call runs in
        cwd = an.cwd or ""
        if not cwd:
            return "./" + path
        if path.startswith(cwd + "/"):
            return "./" + path[len(cwd) + 1:]
        return system.join(an.root, path) if an.root else "./" + path
    return path


def record_copy(an: Walk, base: str, args: list[str | None]) -> None:
    """``cp``/``ln``/``install``/``mv``/``rsync`` SOURCE... DEST (or ``-t FOLDER SOURCE...``),
    ``dd if=SOURCE of=DEST``: each destination is what its source is."""
    if base == "dd":
        ops = dict(str(a).split("=", 1) for a in args if a is not None and "=" in a)
        if "of" in ops:
            unknown = any(a is None for a in args)
            _copy(an, None if unknown else ops.get("if", "/dev/stdin"), False,
                  [ops["of"]])
        return
    valued = _VALUED.get(base, _VALUED["cp"])
    pos: list[str | None] = []
    into: str | None = ""
    folder_only = symbolic = hard = False
    k = 0
    while k < len(args):
        arg = args[k]
        k += 1
        if arg == "--":
            pos.extend(args[k:])
            break
        if arg is None or not arg.startswith("-") or arg == "-":
            pos.append(arg)
            continue
        value: str | None = ""
        if arg.startswith("--"):
            flag, eq, value = arg.partition("=")
            if flag in valued and not eq:
                value = args[k] if k < len(args) else None
                k += 1
            if flag == "--target-directory":
                into = value
            symbolic = symbolic or flag == "--symbolic"
            hard = hard or (base == "cp" and flag == "--link")
            continue
        for j in range(1, len(arg)):
            c = arg[j]
            if "-" + c in valued:
                value = arg[j + 1:]
                if not value:
                    value = args[k] if k < len(args) else None
                    k += 1
                if c == "t":
                    into = value
                break
            symbolic = symbolic or c == "s"
            hard = hard or (base == "cp" and c == "l")      # cp -al: a tree of hard links
            folder_only = folder_only or (base == "install" and c == "d")
    if folder_only or (base == "rsync" and any(a is not None and ":" in a for a in pos)):
        return
    if into == "":
        if len(pos) == 1 and base == "ln":      # ln -s /usr/bin/git: ./git
            into = "."
        elif len(pos) < 2:
            return
        else:
            into, pos = pos[-1], pos[:-1]
            if len(pos) == 1 and into is not None and not into.endswith("/"):
                inside = _inside(into, pos[0])      # into an existing folder of that name
                _copy(an, pos[0], symbolic, [into, *([inside] if inside else [])],
                      hard or (base == "ln" and not symbolic))
                return
    if into is None:
        return
    for src in pos:
        inside = _inside(into, src)
        if inside:
            _copy(an, src, symbolic, [inside], hard or (base == "ln" and not symbolic))


def _inside(folder: str, src: str | None) -> str:
    """The copy of ``src`` in ``folder``; "" when there is none (``.`` and ``..`` have no
    name to copy under)."""
    if src is None or any(c in src for c in "*?["):
        return folder.rstrip("/") + "/\0"
    name = src.rstrip("/").rsplit("/", 1)[-1]
    return "" if name in ("", ".", "..") else folder.rstrip("/") + "/" + name


def _copy(an: Walk, src: str | None, symbolic: bool, dests: list[str], hard: bool = False
          ) -> None:
    """Each of ``dests`` is a copy (or link) of ``src``; a destination ending in NUL is a folder
    that receives files of names not known. ``hard``: hard links (``ln``, ``cp -l``), through
    which a write reaches the file linked as a symbolic link's does."""
    names = an.names
    target: str | None = None
    if src is not None and not any(c in src for c in "*?["):
        if symbolic and not system.isabs(src) and "/" in dests[0]:
            src = system.join(dests[0].rsplit("/", 1)[0], src)   # relative to the link
        found = follow(an, src if "/" in src else "./" + src)
        target = None if found is None else key(an, found)
        if target is not None and "/" not in target:
            target = "./" + target
        if key(an, src) in an.files:          # a script written earlier: the copy holds it too
            for dest in dests:
                if "\0" not in dest:
                    an.files[key(an, dest)] = an.files[key(an, src)]
    for dest in dests:
        if "\0" in dest:
            names.filled.add(key(an, dest.split("/\0", 1)[0]))
        else:
            names.files[key(an, dest)] = target
            if symbolic or hard:
                names.links.add(key(an, dest))
            else:
                names.links.discard(key(an, dest))


def through_link(an: Walk, value: str) -> str | None:
    """Where ``value`` leads when it goes through a link this command made: ``ln -s /srv
    build/h`` makes ``build/h/`` and ``build/h/x`` lead into ``/srv`` (``build/h`` alone is the
    link itself); ``cp -al .claude c`` makes ``c/settings.json`` lead to ``.claude``'s.
    ``"?"`` when the link's target is known only at run time; None when the
    path goes through no such link."""
    names = an.names
    if names is None or not names.links:
        return None
    path = key(an, value)
    beyond = value.rstrip("/") != value or value.endswith(("/.", "/./"))
    for link in names.links:
        if (path == link and beyond) or path.startswith(link + "/"):
            target = names.files.get(link)
            return "?" if target is None else target + path[len(link):]
    return None
