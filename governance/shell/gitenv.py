"""Git configuration given outside the configuration files: in the environment
(``GIT_CONFIG_COUNT`` with ``GIT_CONFIG_KEY_n``/``GIT_CONFIG_VALUE_n``, ``GIT_CONFIG_PARAMETERS``,
``GIT_CONFIG_GLOBAL``) and by ``--config-env=KEY=VAR``; each becomes the ``-c KEY=VALUE`` git
would see, so ``shell.programs.git_config`` reads it as configuration on the command line.

Imported by ``shell.resolver`` when git runs. May use the root modules and ``shell.walk``
(types only).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from governance.shell.parser import Simple
    from governance.shell.walk import Walk


def configured(an: Walk, cmd: Simple | None, fields: list[str | None]) -> list[str | None]:
    """``fields`` with the configuration from the environment and ``--config-env`` as ``-c``."""
    fields = git_config_env(an, cmd, fields)
    return [fields[0], *git_environment(an, cmd), *fields[1:]]


_GIT_CONFIG_FILES = ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG")


def git_environment(an: Walk, cmd: Simple | None) -> list[str | None]:
    """The ``-c KEY=VALUE`` settings git takes from its environment (``GIT_CONFIG_COUNT`` with
    ``GIT_CONFIG_KEY_n``/``GIT_CONFIG_VALUE_n``, ``GIT_CONFIG_PARAMETERS``), as command-line
    options; an unknown setting is ``-c`` with an unknown value, and a configuration file the
    command wrote (``GIT_CONFIG_GLOBAL=f``) is unknown too."""
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
    for name in _GIT_CONFIG_FILES:
        if name in env and (env[name] is None or an.wrote(env[name])):
            out += ["-c", None]          # configuration read from a file known at run time
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
