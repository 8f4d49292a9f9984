"""Python environments a command changes, and whether one is governance's own.

The hooks run from an interpreter and its environment (``PathGuard``: the installation paths,
protected). A command that installs into, uninstalls from or clears that environment, or removes
the interpreter it was made from, changes governance by another route than a write: the next hook
fails to start, and a failing hook lets every call through (``fail_open``). Read here:

- ``pip``/``pip3``/``pipX.Y`` and ``python -m pip`` (``install``, ``uninstall``, ``download`` is
  left alone): the environment of the interpreter that runs pip (the program found on ``PATH``
  now, or named by its path), or the one ``--prefix``, ``--target``/``-t``, ``--root`` or
  ``--python`` names;
- ``uv pip install|uninstall|sync``: ``--python``/``-p``, ``--prefix``, ``--target``, else the
  active ``VIRTUAL_ENV``, else ``.venv`` where the command runs;
- ``python -m venv``/``virtualenv``/``uv venv`` DIR: the environment made again in DIR;
- ``pyenv uninstall VERSION``: ``$PYENV_ROOT/versions/VERSION`` (``~/.pyenv`` by default);
- ``uv tool uninstall|install --force``, ``pipx uninstall|reinstall|uninstall-all``: governance's
  own package by name.

One that is a protected place, or the environment the hooks run in (``sys.prefix``), or, for a
tree made again or removed, one that holds a part of the installation, is ``governance-admin``.
Imported by ``shell.resolver`` for these programs only.
"""

from __future__ import annotations

from governance import system

TYPE_CHECKING = False
if TYPE_CHECKING:
    from governance.shell.walk import Walk

PACKAGE = "claude-governance"
_PIP_CHANGES = ("install", "uninstall")
_PIP_PLACES = ("--prefix", "--target", "-t", "--root", "--python")
_UV_PLACES = ("--python", "-p", "--prefix", "--target")
_UV_CHANGES = ("install", "uninstall", "sync")


def check(an: Walk, base: str, fields: list[str | None], seg: str) -> None:
    """The environment ``fields`` (a program and its words, after any ``python -m``) changes;
    ``base`` is the program's name (``pip``, ``uv``, ``venv``, ...)."""
    words = [f for f in fields[1:]]
    places: list[str | None] = []
    whole = False      # a tree made again or removed (venv --clear, pyenv uninstall)
    if base.rstrip("0123456789.") == "pip" and _sub(words) in _PIP_CHANGES:
        places = _option_values(words, _PIP_PLACES) or [_environment_of(an, str(fields[0]))]
    elif base == "uv" and words[:1] == ["pip"] and _sub(words[1:]) in _UV_CHANGES:
        places = _option_values(words, _UV_PLACES) or [_active(an)]
    elif (base == "uv" and words[:1] == ["venv"]) or base in ("venv", "virtualenv"):
        whole = True
        rest = words[1:] if base == "uv" else words
        places = [next((w for k, w in enumerate(rest) if (w is None or w[:1] != "-") and not (
            k and rest[k - 1] in ("-p", "--python", "--prompt", "--seed"))), ".venv")]
    elif base == "pyenv" and _sub(words) == "uninstall":
        root = an.vars.get("PYENV_ROOT") or system.environ_get("PYENV_ROOT") or \
            system.join(system.expanduser("~"), ".pyenv")
        whole = True
        places = [None if v is None else system.join(root, "versions", v)
                  for v in words[1:] if v is None or v[:1] != "-"]
    elif (base == "uv" and words[:2] == ["tool", "uninstall"]) or (
            base == "pipx" and _sub(words) in ("uninstall", "reinstall", "uninstall-all")):
        named = words[2:] if base == "uv" else words[1:]
        if _sub(words) == "uninstall-all" or PACKAGE in named or any(w is None for w in named):
            _say(an, seg, f"{base} removes {PACKAGE}, governance itself")
        return
    for place in places:
        if place is None:
            continue
        if an.protected(place, place) or (_holds_ours(an, place) if whole else
                                           _is_ours(an, place)):
            _say(an, seg, f"{base} changes the Python environment {place}, governance's own")
            return


def _is_ours(an: Walk, place: str) -> bool:
    """Whether ``place`` is the environment the hooks run in (this interpreter's
    ``sys.prefix``), into which a package installed or removed changes what they import."""
    import sys

    path = _absolute(an, place)
    return path is not None and system.realpath(path) == system.realpath(sys.prefix)


def _absolute(an: Walk, place: str) -> str | None:
    path = system.expanduser(place)
    if not system.isabs(path):
        folder = an.folder()
        if folder is None:
            return None
        path = system.join(folder, path)
    return system.normpath(path)


def _holds_ours(an: Walk, place: str) -> bool:
    """Whether the folder ``place`` holds a part of governance's installation (its
    interpreter, standard library, environment: ``project.installation_paths``)."""
    from governance.project import installation_paths

    path = _absolute(an, place)
    if path is None:
        return False
    inside = system.realpath(path).rstrip("/") + "/"
    return any(p.startswith(inside) for p in installation_paths())


def _say(an: Walk, seg: str, what: str) -> None:
    an.add("governance-admin", seg, f"{what}: the hooks would no longer start, and a hook that "
                                    "fails lets every call through; ask the user to run it "
                                    "from a terminal")


def _sub(words: list[str | None]) -> str | None:
    """The subcommand: the first word that is not an option."""
    return next((w for w in words if w is None or w[:1] != "-"), None)


def _option_values(words: list[str | None], names: tuple[str, ...]) -> list[str | None]:
    found: list[str | None] = []
    for k, word in enumerate(words):
        if word is None:
            continue
        if word in names and k + 1 < len(words):
            found.append(words[k + 1])
        elif word.startswith("--") and word.partition("=")[0] in names:
            found.append(word.partition("=")[2])
    return found


def _environment_of(an: Walk, program: str) -> str | None:
    """The environment (``sys.prefix``) of the interpreter a program runs with: the folder
    above the ``bin`` it is in, found on ``PATH`` when named without a path."""
    if "/" in program:
        path: str | None = program
    else:
        from governance.shell.names import on_path

        path = on_path(an, program)
    if path is None:
        return None
    full = _absolute(an, path)
    return None if full is None else system.dirname(system.dirname(full))


def _active(an: Walk) -> str | None:
    """The environment ``uv pip`` changes by default: the active one, else ``.venv`` here."""
    active = an.vars.get("VIRTUAL_ENV") if "VIRTUAL_ENV" in an.vars else \
        system.environ_get("VIRTUAL_ENV")
    return active if active else ".venv"
