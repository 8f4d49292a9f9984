"""``npm run NAME``, ``npm test``, ``pnpm NAME``, ``yarn NAME``, ``bun run NAME``, and the
lifecycle scripts ``npm install``/``ci``/``publish``/``pack``/``version`` run: the ``scripts`` of
the nearest ``package.json`` (up from the folder, or ``--prefix``/``-C``/``--dir``/``--cwd``), with
their ``pre``/``post`` scripts, analysed as the shell commands they are, in the package's folder.

Imported by ``shell.resolver`` when a package manager runs. The file is read with
``governance.jsoncodec``; one that is not JSON runs nothing (the package manager refuses it).
"""

from __future__ import annotations

from governance import system
from governance.shell.source import find_up, path_of, run_text, text_of, written
from governance.shell.words import quote

TYPE_CHECKING = False
if TYPE_CHECKING:
    from governance.shell.walk import Walk

FOLDER_OPTIONS = ("--prefix", "-C", "--dir", "--cwd")
# commands of the package managers themselves: `yarn NAME` runs a script only when NAME is none
_NAMES = (
    "install i add remove rm un uninstall update up upgrade upgrade-interactive why list ls ll la "
    "info view v outdated audit init create publish unpublish pack link ln unlink dlx exec x "
    "config cache global import rebuild rb store patch patch-commit workspace workspaces set "
    "plugin npm node login logout dedupe prune fetch setup env root licenses bin help version "
    "ci it install-test self-update owner dist-tag deprecate search s doctor explain query pm "
    "why trust")
BUILTINS = frozenset(_NAMES.split())
# lifecycle scripts npm runs for its own commands (the package's root scripts)
LIFECYCLE = {
    "install": ("preinstall", "install", "postinstall", "prepublish", "preprepare", "prepare",
                "postprepare"),
    "publish": ("prepublishOnly", "prepack", "prepare", "postpack", "publish", "postpublish"),
    "pack": ("prepack", "prepare", "postpack"),
    "version": ("preversion", "version", "postversion"),
    "restart": ("prerestart", "restart", "stop", "start", "postrestart"),
}
ALIASES = {"i": "install", "in": "install", "ins": "install", "isntall": "install", "add": "install",
           "ci": "install", "clean-install": "install", "ic": "install", "install-ci-test": "install",
           "cit": "install", "it": "install", "install-test": "install", "t": "test",
           "tst": "test", "run-script": "run", "rum": "run", "urn": "run"}


def _scripts(an: Walk, base: str, folder: str, seg: str) -> tuple[dict[str, str], str] | None:
    """The scripts of the nearest package.json (as this command left it: written earlier, or
    changed by ``npm pkg set scripts.NAME=...``) and its folder."""
    here = system.join(folder, "package.json")
    path = here if written(an, here) else find_up(folder, ("package.json",))
    set_here = {k[len(_SET):]: v for k, v in an.vars.items() if k.startswith(_SET)}
    if path is None:
        return (_known(set_here), folder) if set_here else None
    text = text_of(an, base, path, "package.json", seg)
    if text is None:
        return None
    from governance.jsoncodec import loads

    try:
        data = loads(text)
    except ValueError:
        return None
    scripts = data.get("scripts") if isinstance(data, dict) else None
    if not isinstance(scripts, dict):
        scripts = {}
    found = {str(k): v for k, v in scripts.items() if isinstance(v, str)}
    return {**found, **_known(set_here)}, system.dirname(path)


_SET = "npm-script."      # npm pkg set scripts.NAME=CMD, remembered for a later `npm run NAME`


def _known(scripts: dict[str, str | None]) -> dict[str, str]:
    return {k: v if v is not None else '"$__unknown_script"' for k, v in scripts.items()}


def remember(an: Walk, args: list[str | None]) -> None:
    """``npm pkg set scripts.NAME=CMD`` / ``npm set-script NAME CMD``: the script a later
    ``npm run NAME`` in this command runs."""
    if args[:2] == ["pkg", "set"]:
        for arg in args[2:]:
            if arg is None:
                an.vars[_SET + "*"] = None
            elif arg.startswith("scripts."):
                name, _, value = arg[8:].partition("=")
                an.vars[_SET + name] = value
    elif args[:1] == ["set-script"] and len(args) >= 3 and args[1] is not None:
        an.vars[_SET + args[1]] = args[2]


# package managers that run a package's bin where no script has the name (`yarn NAME`, `pnpm
# NAME`, `bun run NAME`, `yarn run NAME`) and with `exec`
_BIN_RUNNERS = ("yarn", "pnpm", "bun")


def _bin(an: Walk, words: list[str | None], seg: str, depth: int) -> None:
    """A bin the package manager runs (``node_modules/.bin/NAME``, else one on the path), with
    its arguments, analysed as the command it is."""
    if words[:1] == ["--"]:
        words = words[1:]
    an.script(" ".join(quote(w) if w is not None else '"$__arg"' for w in words), depth + 1, seg)


def _plan(base: str, args: list[str | None]) -> tuple[list[str], list[str | None]] | None:
    """The scripts a package manager runs for its arguments (names, in order), and the extra
    arguments the main one gets; None when it runs none. ``?`` stands for the script named by the
    first argument when it is one (``yarn NAME``)."""
    if not args:
        return (list(LIFECYCLE["install"]), []) if base in ("yarn", "pnpm", "bun") else None
    sub = args[0]
    if sub is None:
        return ["*"], []
    sub = ALIASES.get(sub, sub)
    if sub == "run":
        if len(args) < 2:
            return None
        name = args[1]
        rest = args[2:]
        if base == "npm" and "--" in rest:
            rest = rest[rest.index("--") + 1:]
        elif base == "npm":
            rest = []
        return (["*"] if name is None else [f"pre{name}", name, f"post{name}"]), rest
    if sub in ("test", "start", "stop"):
        if base == "bun" and sub == "test":
            return None                      # bun's own test runner
        return [f"pre{sub}", sub, f"post{sub}"], []
    if sub in LIFECYCLE:             # `npm install PKG` runs the root's scripts too
        return list(LIFECYCLE[sub]), []
    if base in ("yarn", "pnpm", "bun") and sub not in BUILTINS and not sub.startswith("-"):
        return ["?" + sub], args[1:]
    return None


def run(an: Walk, base: str, fields: list[str | None], seg: str, depth: int) -> None:
    """Analyse the package scripts a package manager runs (see the module's docstring)."""
    folder = path_of(an, ".")
    if folder is None:
        return
    args: list[str | None] = []
    ignore = False
    i, n = 1, len(fields)
    while i < n:
        arg = fields[i]
        if arg in FOLDER_OPTIONS and i + 1 < n:
            value = fields[i + 1]
            if value is None:
                an.unknown(seg, f"{base} runs in a folder known only at run time")
                return
            folder = system.normpath(system.join(folder, system.expanduser(value)))
            i += 2
            continue
        if arg is not None and arg.startswith(tuple(o + "=" for o in FOLDER_OPTIONS)):
            folder = system.normpath(system.join(folder, system.expanduser(
                arg.split("=", 1)[1])))
        elif arg == "--ignore-scripts":
            ignore = True
        elif arg is not None and arg.startswith("-") and arg != "--" and not args:
            pass
        else:
            args.append(arg)
        i += 1
    if args[:1] in (["pkg"], ["set-script"]):
        remember(an, args)
        return
    if base in _BIN_RUNNERS and args[:1] == ["exec"] and len(args) > 1:
        _bin(an, args[1:], seg, depth)              # pnpm exec rimraf dist: the bin runs
        return
    plan = _plan(base, args)
    if plan is None:
        return
    if _SET + "*" in an.vars:
        an.unknown(seg, f"{base} runs a package script set to a value known only at run time")
    names, rest = plan
    found = _scripts(an, base, folder, seg)
    scripts, home = found if found is not None else ({}, folder)
    named = args[1:] if args[:1] == ["run"] else args if names[0].startswith("?") else []
    if base in _BIN_RUNNERS and named and named[0] is not None and named[0] not in scripts:
        _bin(an, named, seg, depth)                 # yarn rimraf dist: no script, the bin runs
        return
    if found is None:
        return
    if names == ["*"]:
        names = list(scripts)
    elif names[0].startswith("?"):
        name = names[0][1:]
        if name not in scripts:
            return
        names = [f"pre{name}", name, f"post{name}"]
    main = names[1] if len(names) == 3 and names[0] == "pre" + names[1] else None
    for name in names:
        if name not in scripts or (ignore and name != main):
            continue
        text = scripts[name]
        if name == main and rest:
            text += " " + " ".join(quote(r) if r is not None else '"$__arg"' for r in rest)
        run_text(an, text, None, f"the script {name} of package.json", seg, depth, home)
