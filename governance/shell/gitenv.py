"""Git configuration given outside the repository's configuration files: in the environment
(``GIT_CONFIG_COUNT`` with ``GIT_CONFIG_KEY_n``/``GIT_CONFIG_VALUE_n``, ``GIT_CONFIG_PARAMETERS``),
by ``--config-env=KEY=VAR``, and in the files the command points git at (``GIT_CONFIG_GLOBAL``,
``GIT_CONFIG_SYSTEM``, ``GIT_CONFIG``, the ``.gitconfig`` of a ``HOME`` or the ``git/config`` of an
``XDG_CONFIG_HOME`` it sets, and what ``include.path``/``includeIf.*.path`` include); each setting
becomes the ``-c KEY=VALUE`` git would see, so ``shell.programs.git_config`` reads it as
configuration on the command line. A file is read from what the command wrote earlier, or from
disk; one whose text is known only at run time is a setting known only at run time.

Imported by ``shell.resolver`` when git runs. May use the root modules and ``shell.walk``
(types only).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from governance.shell.parser import Simple
    from governance.shell.walk import Walk


def configured(an: Walk, cmd: Simple | None, fields: list[str | None], seg: str
               ) -> list[str | None]:
    """``fields`` with the configuration from the environment, ``--config-env`` and the files
    included with ``-c include.path=FILE`` as ``-c``."""
    fields = git_config_env(an, cmd, fields)
    out: list[str | None] = [fields[0], *git_environment(an, cmd, seg)]
    i = 1
    while i < len(fields):
        arg = fields[i]
        out.append(arg)
        if arg == "-c" and i + 1 < len(fields):
            setting = fields[i + 1]
            out.append(setting)
            i += 2
            path = _include(setting)
            if path is not None:          # git -c include.path=FILE: FILE's settings
                out += config_file(an, path, "", 1, seg)
            continue
        if arg is None or not arg.startswith("-"):
            out += fields[i + 1:]
            break
        i += 1
    return out


_MAX_INCLUDES = 10     # git's own limit of nested includes


def _include(setting: str | None) -> str | None:
    """The file an ``include.path`` or ``includeIf.COND.path`` setting names."""
    if setting is None:
        return None
    key, eq, value = setting.partition("=")
    key = key.lower()
    if eq and (key == "include.path" or (key.startswith("includeif.") and
                                         key.endswith(".path"))):
        return value
    return None


def config_file(an: Walk, path: str, folder: str, level: int, seg: str
                ) -> list[str | None]:
    """The settings of a git configuration file as ``-c KEY=VALUE`` words, and those of the
    files it includes (a relative path is relative to the including file's folder). A file
    that cannot be read before git runs is ``shell-unknown`` (``source.text_of``); a missing
    one adds nothing."""
    from governance import system
    from governance.shell import source
    from governance.shell.gitfiles import parse_config

    if path.startswith("~") or path.startswith("/") or not folder:
        name = path
    else:
        name = f"{folder}/{path}"
    if level > _MAX_INCLUDES:
        return ["-c", None]
    full = source.path_of(an, name)
    if full is None:          # no folder to read from: only what the command wrote
        text = an.file_text(name)
        if text is None and an.wrote(name):
            return ["-c", None]
    else:
        text = source.text_of(an, "git", full, name, seg)   # written earlier, or on disk
    out: list[str | None] = []
    for key, value in parse_config(text or ""):
        setting = f"{key}={value}"
        out += ["-c", setting]
        included = _include(setting)
        if included is not None:
            where = system.dirname(full) if full is not None else system.dirname(name)
            out += config_file(an, included, where, level + 1, seg)
    return out


_GIT_CONFIG_FILES = ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG")


def git_environment(an: Walk, cmd: Simple | None, seg: str) -> list[str | None]:
    """The ``-c KEY=VALUE`` settings git takes from its environment (``GIT_CONFIG_COUNT`` with
    ``GIT_CONFIG_KEY_n``/``GIT_CONFIG_VALUE_n``, ``GIT_CONFIG_PARAMETERS``) and from the files
    it names (``GIT_CONFIG_GLOBAL=f``, ``HOME=d``: ``d/.gitconfig``), as command-line options;
    an unknown setting is ``-c`` with an unknown value."""
    env = dict(an.vars)
    for name, word in cmd.assigns if cmd is not None else ():
        env[name] = an.expand_one(word.parts)
    out: list[str | None] = []
    if "GIT_CONFIG_COUNT" in env:
        count = env["GIT_CONFIG_COUNT"] or ""
        if not count.strip().isdigit():
            out += ["-c", None]
        for k in range(min(int(count), 32) if count.strip().isdigit() else 0):
            key, value = env.get(f"GIT_CONFIG_KEY_{k}"), env.get(f"GIT_CONFIG_VALUE_{k}")
            out += ["-c", None if key is None or value is None else f"{key}={value}"]
    if "GIT_CONFIG_PARAMETERS" in env:
        text = env["GIT_CONFIG_PARAMETERS"]
        settings = None if text is None else _quoted_words(text)
        for setting in settings if settings is not None else [None]:
            out += ["-c", setting]
    files: list[str | None] = [env[name] for name in _GIT_CONFIG_FILES if name in env]
    if "XDG_CONFIG_HOME" in env:
        files.append(None if env["XDG_CONFIG_HOME"] is None else
                     f"{env['XDG_CONFIG_HOME']}/git/config")
    if "HOME" in env:
        home = env["HOME"]
        files.append(None if home is None else f"{home}/.gitconfig")
        if "XDG_CONFIG_HOME" not in env:
            files.append(None if home is None else f"{home}/.config/git/config")
    for path in files:
        if path is None:
            out += ["-c", None]          # configuration read from a file known at run time
        elif path not in ("/dev/null", ""):
            out += config_file(an, path, "", 1, seg)
    return out


def git_config_env(an: Walk, cmd: Simple | None,
                   fields: list[str | None]) -> list[str | None]:
    """``V='!CMD' git --config-env=alias.x=V x``: ``--config-env`` with a variable set in this
    command is ``-c`` with its value (one set elsewhere stays unknown)."""
    env = dict(an.vars)
    for name, word in cmd.assigns if cmd is not None else ():
        env[name] = an.expand_one(word.parts)
    out: list[str | None] = [fields[0]]
    i = 1
    while i < len(fields):
        arg = fields[i]
        setting = fields[i + 1] if arg == "--config-env" and i + 1 < len(fields) else \
            arg[len("--config-env="):] if arg is not None and arg.startswith("--config-env=") \
            else None
        key, eq, variable = (setting or "").rpartition("=")
        if eq and key and variable in env:
            value = env[variable]
            out += ["-c", None if value is None else f"{key}={value}"]
            i += 2 if arg == "--config-env" else 1
            continue
        if arg is None or not arg.startswith("-"):
            return [*out, *fields[i:]]
        valued = arg in ("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path")
        out += fields[i:i + 1 + valued]
        i += 1 + valued
    return out


def _quoted_words(text: str) -> list[str | None]:
    """``'alias.p=push' 'core.pager=less'``: the words of GIT_CONFIG_PARAMETERS."""
    words: list[str | None] = []
    i, n = 0, len(text)
    while i < n:
        if text[i].isspace():
            i += 1
            continue
        if text[i] != "'":
            end = text.find(" ", i)
            end = n if end < 0 else end
            words.append(text[i:end])
            i = end
            continue
        end = text.find("'", i + 1)
        if end < 0:
            words.append(None)
            break
        word = text[i + 1:end]
        i = end + 1
        if text[i:i + 1] == "=" and text[i + 1:i + 2] == "'":   # 'key'='value'
            close = text.find("'", i + 2)
            word = f"{word}={text[i + 2:close if close > 0 else n]}"
            i = n if close < 0 else close + 1
        words.append(word)
    return words


_PLACES = ("GIT_DIR", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR")


def repository_places(an: Walk, cmd: Simple | None, fields: list[str | None], seg: str) -> None:
    """Where git keeps the repository it writes: ``GIT_DIR``, ``GIT_INDEX_FILE``,
    ``GIT_OBJECT_DIRECTORY`` and ``GIT_COMMON_DIR`` (set for the command or exported),
    ``--git-dir`` and ``git init [--separate-git-dir D] [DIR]``. Any git command may write
    there (``git status`` refreshes the index), so one that is, or holds, a governance-protected
    place is ``governance-admin``; one known only at run time names no place."""
    env = dict(an.vars)
    for name, word in cmd.assigns if cmd is not None else ():
        env[name] = an.expand_one(word.parts)
    places = [(name, env[name]) for name in _PLACES if env.get(name)]
    k, n = 1, len(fields)
    while k < n:
        arg = fields[k]
        if arg is None or not arg.startswith("-"):
            break
        if arg == "--git-dir" and k + 1 < n:
            places.append((arg, fields[k + 1]))
        elif arg.startswith("--git-dir="):
            places.append(("--git-dir", arg.partition("=")[2]))
        k += 2 if arg in ("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path",
                          "--config-env", "--super-prefix") else 1
    if k < n and fields[k] == "init":
        words = fields[k + 1:]
        j = 0
        while j < len(words):
            given = words[j]
            if given in ("--separate-git-dir", "--template") and j + 1 < len(words):
                places.append((str(given), words[j + 1]))
                j += 2
                continue
            if given is not None and given.startswith(("--separate-git-dir=", "--template=")):
                places.append((given.partition("=")[0], given.partition("=")[2]))
            elif given is not None and given[:1] != "-" and not places_named(places, "init"):
                places.append(("init", given.rstrip("/") + "/.git"))
            j += 1
    for name, value in places:
        if value is not None and (an.protected(value, value) or an.holds_protected(value)):
            an.add("governance-admin", seg,
                   f"git keeps its repository in {value} ({name}), a governance-protected place:"
                   " ask the user to make this change from a terminal")
            return


def places_named(places: list[tuple[str, str | None]], name: str) -> bool:
    return any(n == name for n, _v in places)
