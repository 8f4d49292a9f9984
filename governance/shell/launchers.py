"""Package launchers: commands that download a package and run it in one step (``npx``, ``bunx``,
``npm exec``, ``pnpm dlx``, ``yarn dlx``, ``bun x``, ``go run pkg@version``, ``nix run
nixpkgs#pkg``, ``nix shell``). A command entry with ``launches:`` says how to read it:

- ``sub``: the subcommands that launch (``dlx``, ``exec``, ``x``, ``run``); empty when the
  command itself launches (``npx CMD``);
- ``always``: the package is always fetched (``pnpm dlx``, ``yarn dlx``);
- ``packages``: options that name a package to fetch (``npx -p PKG``, ``--package=PKG``);
- ``accept``: options that accept a download without asking (``npx -y``);
- ``calls``: options whose value is a command line it runs (``npx -c 'CMD'``), analysed as one;
- ``local``: ``node`` when a package the project has (``node_modules/.bin/NAME`` in the folder
  the command runs in or above) runs without a download; ``pinned`` when only a package that
  names a version or a remote source is fetched (``go run pkg@latest``, ``nix run nixpkgs#x``,
  but not ``go run ./cmd`` or ``nix run .#app``).

A package that is fetched is ``package-install``: what it runs is whatever the registry serves. A
package named only at run time is ``shell-unknown``. ``npx`` assumes ``--yes`` when standard input
is not a terminal, as under Claude Code, so a package the project does not have is downloaded.
Imported by ``shell.resolver`` for such entries; reads the file tree only to look for a local bin.
"""

from __future__ import annotations

from governance import system

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from governance.shell.rules import Argv
    from governance.shell.walk import Walk

_REMOTE = ("http://", "https://", "git+", "git:", "github:", "gitlab:", "npm:", "jsr:", "file:")


def run(an: Walk, spec: dict[str, Any], base: str, argv: Argv, seg: str, depth: int) -> bool:
    """Add the acts of a launch; whether the command launches at all."""
    positionals = [value for value, _raw in argv.positionals]
    subs = spec["sub"]
    if subs:
        if not positionals or positionals[0] not in subs:
            return False
        positionals = positionals[1:]
    for option in spec["calls"]:
        for value, raw in argv.values.get(option, ()):
            if value is None:
                an.unknown(seg, f"{base} {option} runs a command known only at run time ({raw})")
            else:
                an.script(value, depth + 1, seg)
    named = [value for option in spec["packages"] for value, _raw in argv.values.get(option, ())]
    package = named[0] if named else positionals[0] if positionals else ""
    if package is None:
        an.unknown(seg, f"{base} runs a package named only at run time")
        return True
    if not package or package.startswith((".", "/", "~")):   # npx ./bin/x.js: a local file
        return False
    fetched = spec["always"] or bool(named) or any(f in spec["accept"] for f in argv.flags) or \
        _pinned(package)
    if not fetched and spec["local"] == "node":
        fetched = not _local_bin(an, _bin_name(package))
    if fetched:
        an.add("package-install", seg, f"{base} downloads the package {package} and runs it")
    return fetched


def launched(an: Walk, spec: dict[str, Any], with_value: dict[str, Any],
             fields: list[str | None], raws: list[str]) -> tuple[list[str | None], list[str]] | None:
    """The command a launch runs, as words to decide like a typed command: ``npx rimraf@5 dist``
    runs ``rimraf dist``; ``npx -p PKG CMD ARGS`` runs ``CMD ARGS``. The launcher's own options
    end at the first word that is not one (``npx rimraf -rf x``: ``-rf`` is rimraf's). A
    package whose command has another name is mapped through ``shell.package_bins``. None when
    nothing is launched (no command word, a local file, a subcommand that does not launch)."""
    if spec["local"] == "pinned":     # go run, nix run: a module or a flake, not an npm package
        return None
    waiting = bool(spec["sub"])       # `npm exec`, `pnpm dlx`: the launch follows the subcommand
    i, n = 1, len(fields)
    while i < n:
        word = fields[i]
        if word is None or word == "-" or not word.startswith("-"):
            if not waiting:
                break
            if word not in spec["sub"]:
                return None
            waiting = False
        elif word == "--":
            i += 1
            break
        elif "=" not in word and with_value.get(word):
            i += int(with_value[word])
        i += 1
    if waiting or i >= n:
        return None
    word = fields[i]
    if word is None or not word or word.startswith((".", "/", "~", *_REMOTE)):
        return None
    if any(option in spec["packages"] for option in fields[1:i]):
        return list(fields[i:]), list(raws[i:])   # npx -p PKG CMD: CMD is a command already
    package = "@" + word[1:].split("@", 1)[0] if word.startswith("@") else word.split("@", 1)[0]
    name = an.shell.get("package_bins", {}).get(package) or _bin_name(word)
    return [name, *fields[i + 1:]], [name, *raws[i + 1:]]


def _pinned(package: str) -> bool:
    """A version (``pkg@1``, ``@scope/pkg@latest``) or a remote source (a URL, ``github:``,
    a flake reference other than the local ``.#x``, a module path under a host name)."""
    if package.startswith(_REMOTE):
        return True
    if "#" in package and not package.startswith((".", "/", "path:")):
        return True
    if package.startswith((".", "/")):
        return False
    host = package.split("/", 1)[0]
    return "@" in package[1:] or ("/" in package and "." in host)   # go run example.com/x/cmd


def _bin_name(package: str) -> str:
    """The command a package name runs: ``@scope/tool@2`` -> ``tool``."""
    name = package[1:].split("@", 1)[0] if package.startswith("@") else package.split("@", 1)[0]
    return name.rsplit("/", 1)[-1]


def _local_bin(an: Walk, name: str) -> bool:
    """Whether ``node_modules/.bin/NAME`` is in the folder the command runs in or above."""
    if an.root is None or an.cwd is None or not name or "/" in name:
        return False
    folder = system.normpath(system.join(an.root, an.cwd))
    for _ in range(40):
        if system.exists(system.join(folder, "node_modules", ".bin", name)):
            return True
        parent = system.dirname(folder)
        if parent == folder:
            return False
        folder = parent
    return False
