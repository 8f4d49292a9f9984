"""What particular programs do with their arguments, beyond options and subcommands: git's
configuration given on its command line (and ``git config`` keys later commands use), the
start-up file ``BASH_ENV`` names, the names shell builtins define (``declare``, ``set --``,
``printf -v``, ``read``), makefile and justfile recipes, command lines inside other programs'
arguments, and the modules an interpreter is told to load first.

Imported by ``shell.resolver`` only when such a program appears, so an ordinary command does not
pay for reading this module. May use the root modules and ``shell.walk`` (types only).
"""

from __future__ import annotations

from governance.shell.words import quote, word_text

TYPE_CHECKING = False
if TYPE_CHECKING:
    from governance.shell.parser import Simple
    from governance.shell.walk import Walk




GIT_COMMAND_KEYS = ("core.sshcommand", "core.pager", "core.editor", "core.fsmonitor",
                    "core.hookspath", "diff.external", "credential.helper", "gpg.program",
                    "sequence.editor", "uploadpack.packobjectshook", "pager.", "core.askpass",
                    "core.gitproxy", "interactive.difffilter", "sendemail.tocmd",
                    "sendemail.cccmd", "sendemail.headercmd", "sendemail.sendmailcmd")
# SECTION.<name>.KEY settings whose value is a command git runs (filter.lfs.clean ...)
GIT_NAMED_COMMAND_KEYS = frozenset((
    ("filter", "clean"), ("filter", "smudge"), ("filter", "process"), ("diff", "textconv"),
    ("diff", "command"), ("merge", "driver"), ("difftool", "cmd"), ("mergetool", "cmd"),
    ("credential", "helper"), ("remote", "uploadpack"), ("remote", "receivepack"),
    ("remote", "vcs"), ("gpg", "program"), ("browser", "cmd"), ("man", "cmd"),
    ("sendemail", "tocmd"), ("sendemail", "cccmd"), ("sendemail", "headercmd"),
    ("sendemail", "sendmailcmd")))


def runs_command(key: str) -> bool:
    """Whether a git setting (lower case) is a command git runs."""
    return key.startswith(GIT_COMMAND_KEYS) or (
        key.count(".") >= 2 and (key.split(".", 1)[0], key.rsplit(".", 1)[1])
        in GIT_NAMED_COMMAND_KEYS)


def git_config(an: Walk, fields: list[str | None], seg: str,
                depth: int) -> list[str | None] | None:
    """``git -c alias.p=push p`` runs ``git push``; ``git -c alias.x='!rm -rf b' x`` and
    ``-c core.sshCommand=CMD`` run shell commands. Returns the argv with an alias expanded, or
    None when nothing changes it."""
    for field in fields[1:]:       # clone, fetch, remote add, config, -c remote.x.url=...
        if field is None:
            continue
        assigned = "=" in field and not field.startswith(("-", "ext::"))
        url = field.partition("=")[2] if assigned else field
        if url.startswith("ext::"):
            an.add("code-exec", seg, "git runs the command of an ext:: remote")
            an.script(" ".join(quote(word) for word in ext_command(url)), depth + 1, seg)
    aliases: dict[str, str | None] = {}
    i = 1
    while i < len(fields):
        arg = fields[i]
        if arg in ("-c", "--config-env") and i + 1 < len(fields):
            setting = fields[i + 1]
            i += 2
        elif arg is not None and arg.startswith("--config-env="):
            setting, i = arg.split("=", 1)[1], i + 1
        elif arg in ("-C", "--git-dir", "--work-tree", "--namespace", "--exec-path"):
            i += 2
            continue
        elif arg is not None and arg.startswith("-"):
            i += 1
            continue
        else:
            break
        if setting is None:
            an.unknown(seg, "git -c sets configuration known only at run time")
            continue
        key, _, value = setting.partition("=")
        key = key.lower()
        if arg == "--config-env" or (arg or "").startswith("--config-env"):
            value = ""  # the value comes from an environment variable: unknown
            if key.startswith("alias.") or runs_command(key):
                an.unknown(seg, f"git {key} is set from an environment variable")
            continue
        if key.startswith("alias."):
            aliases[key[6:]] = value
        elif key == "core.hookspath":          # a folder: the hooks in it run (shell.gitfiles)
            an.add("code-exec", seg, "git -c core.hooksPath runs the hooks of another folder")
            an.vars["git-core.hookspath"] = value
        elif runs_command(key) and value:
            an.add("code-exec", seg, f"git -c {key} runs a command")
            an.script(value.lstrip("!"), depth + 1, seg)
    if i >= len(fields):
        return None
    sub = fields[i]
    if sub == "config":   # git config alias.pub push: later `git pub` in this command pushes
        words = _config_words(fields[i + 1:])
        if len(words) >= 2 and words[0] is not None and (
                words[0].lower().startswith("alias.") or words[0].lower() == "core.hookspath"):
            an.vars["git-" + words[0].lower()] = words[1]
        return None
    alias = aliases.get(str(sub).lower()) if sub is not None else None
    if alias is None and sub is not None and "git-alias." + str(sub).lower() in an.vars:
        alias = an.vars["git-alias." + str(sub).lower()]
        if alias is None:
            an.unknown(seg, f"git {sub} is an alias set to a value known only at run time")
            return None
    if alias is None:
        return None
    value = alias
    rest = " ".join(quote(str(f)) for f in fields[i + 1:] if f is not None)
    if value.startswith("!"):
        an.script(f"{value[1:]} {rest}".strip(), depth + 1, seg)
        return [fields[0], "version"]            # the alias ran a shell command, not git
    return [*fields[:i], *value.split(), *fields[i + 1:]]


_VOLUME_OPTIONS = ("-v", "--volume", "--mount")


def volumes(an: Walk, fields: list[str | None], raws: list[str], seg: str) -> dict[str, str]:
    """``docker run -v SRC:DST``, ``--mount type=bind,src=SRC,dst=DST`` (podman, nerdctl too):
    a container given a governance-protected folder or file to write (not ``:ro``,
    ``readonly``) writes governance's files, whatever its command says. Returns the folders
    mounted writable, DST -> SRC, so the paths the container's command writes are read as the
    files of this machine they are."""
    mounted: dict[str, str] = {}
    k = 1
    while k < len(fields):
        arg = fields[k]
        value: str | None = None
        option = ""
        if arg in _VOLUME_OPTIONS and k + 1 < len(fields):
            option, value, k = str(arg), fields[k + 1], k + 2
        elif arg is not None and arg.startswith(("--volume=", "--mount=")):
            option, _, value = arg.partition("=")
            k += 1
        elif arg is not None and arg.startswith("-v") and len(arg) > 2 and arg[2] != "-":
            option, value, k = "-v", arg[2:], k + 1
        else:
            k += 1
            continue
        if value is None:
            continue       # a volume known only at run time: the sandbox's denyWrite is there
        if option == "--mount":
            spec = dict(part.partition("=")[::2] for part in value.split(","))
            source = spec.get("source") or spec.get("src") or ""
            inside = spec.get("destination") or spec.get("dst") or spec.get("target") or ""
            writable = spec.get("type", "volume") == "bind" and not ({"readonly", "ro"} & set(
                spec)) and spec.get("readonly", spec.get("ro", "false")) in ("false", "0")
        else:
            parts = value.split(":")
            source, inside = parts[0], parts[1] if len(parts) > 1 else ""
            writable = len(parts) < 3 or "ro" not in parts[2].split(",")
        if not writable or source[:1] not in ("/", ".", "~"):
            continue                                  # read-only, or a named volume
        where = an.where(source)
        if inside.startswith("/") and where != "?":
            mounted[inside] = where if where.startswith("/") or an.root is None else \
                f"{an.root.rstrip('/')}/{where}"
        if an.protected(source, source) or an.holds_protected(source, True):
            an.add("governance-admin", seg,
                   f"the container may write {source}, a governance-protected place, mounted "
                   f"writable with {option}: mount it read-only (:ro) or ask the user")
    return mounted


# claude's subcommands that run no agent (``claude config get``, ``claude mcp list``)
_CLAUDE_TOOLS = ("config", "mcp", "update", "install", "doctor", "plugin", "migrate-installer",
                 "setup-token", "api-key", "login", "logout")
_CLAUDE_ONLY_PRINT = ("-v", "--version", "-h", "--help")


# what Claude Code reads from its environment that takes an agent out of this project's
# governance: the hooks skipped (--bare sets CLAUDE_CODE_SIMPLE), another API to sign in to
CLAUDE_ENV = {"CLAUDE_CODE_SIMPLE": "skips the hooks, governance's among them",
               "ANTHROPIC_BASE_URL": "signs in to the API at another address with the user's "
                                     "credentials",
               "ANTHROPIC_BEDROCK_BASE_URL": "signs in to another address",
               "ANTHROPIC_VERTEX_BASE_URL": "signs in to another address"}


def agent_folder(an: Walk, fields: list[str | None], seg: str, cmd: Simple | None = None
                 ) -> None:
    """``claude`` runs an agent under the settings of the folder it starts in: anywhere but
    this project's own folder (``cd /tmp/old-checkout && claude -p ...``, an older worktree,
    a subfolder with a ``.claude`` of its own), that folder's settings and not this project's
    governance decide what it may do: ``governance-admin``. So is an environment that skips
    the hooks or sends the user's credentials elsewhere (``CLAUDE_ENV``). A folder known
    only at run time is ``shell-unknown``."""
    words = [f for f in fields[1:] if f is not None]
    if any(w in _CLAUDE_ONLY_PRINT for w in words) or next(
            (w for w in words if not w.startswith("-")), "") in _CLAUDE_TOOLS:
        return
    names = {name for name, _ in cmd.assigns} if cmd is not None else set()
    for name, why in CLAUDE_ENV.items():
        if name in names or name in an.vars:
            an.add("governance-admin", seg, f"claude started with {name} {why}: ask the user")
    if an.root is None:
        return                          # no folder to compare with (explain-command alone)
    folder = an.folder()
    if folder is None:
        an.unknown(seg, "claude runs an agent in a folder known only at run time, under that "
                        "folder's settings")
        return
    layer = getattr(an.check, "layer", None)
    project = str(getattr(layer, "project_dir", "") or an.root).rstrip("/")
    from governance import system

    real = system.realpath(folder)
    if real != system.realpath(project):
        where = "inside" if real.startswith(system.realpath(project).rstrip("/") + "/") \
            else "outside"
        an.add("governance-admin", seg,
               f"claude would run an agent in {folder}, {where} this project, under that "
               "folder's settings instead of this project's governance: ask the user")


_LOCAL_DAEMONS = ("unix://", "npipe://", "fd://")
_MAX_CONTEXT = 256


def docker_host(an: Walk, fields: list[str | None], seg: str, cmd: Simple | None) -> None:
    """``docker -H tcp://HOST``, ``DOCKER_HOST=ssh://HOST docker ...``: the commands go to a
    daemon on another machine, and ``docker build`` sends it the build's folder: a secret file
    there that ``.dockerignore`` does not name is ``exfiltration`` to that host."""
    address: str | None = None
    for k, field in enumerate(fields[1:], 1):
        if field in ("-H", "--host") and k + 1 < len(fields):
            address = fields[k + 1]
        elif field is not None and field.startswith(("--host=", "-H=")):
            address = field.split("=", 1)[1]
        elif field is not None and not field.startswith("-"):
            break
    if address is None:
        given = {name: word for name, word in cmd.assigns} if cmd is not None else {}
        address = an.expand_one(given["DOCKER_HOST"].parts) if "DOCKER_HOST" in given \
            else an.vars.get("DOCKER_HOST")
    if address is not None and (address.startswith(_LOCAL_DAEMONS) or not address):
        return
    host = "?" if address is None else address.split("://", 1)[-1].split("@")[-1] \
        .split(":")[0].split("/")[0] or "?"
    if host in ("localhost", "127.0.0.1", "::1"):
        return
    words = [f for k, f in enumerate(fields[1:], 1) if f is not None and not f.startswith("-")
             and fields[k - 1] not in ("-H", "--host", "-c", "--context", "--config", "-l",
                                       "--log-level")]
    if words[:1] == ["build"] or words[:2] in (["buildx", "build"], ["image", "build"]):
        _context_secrets(an, fields, seg, host)


def _context_secrets(an: Walk, fields: list[str | None], seg: str, host: str) -> None:
    secret_path = getattr(an.check, "secret_path", None)
    folder = an.folder()
    context = fields[-1] if fields[-1] is not None and not str(fields[-1]).startswith("-") \
        else None
    if secret_path is None or folder is None or context is None or "://" in context:
        return
    from governance import system

    top = system.normpath(system.join(folder, system.expanduser(context)))
    try:
        names = system.listdir(top)[:_MAX_CONTEXT]
    except OSError:
        return
    from governance.shell import source

    ignore = system.join(top, ".dockerignore")
    ignored = an.file_text(ignore) or (source.text_of(an, "docker", ignore, ignore, seg)
                                       if system.isfile(ignore) else None) or ""
    listed = {line.strip().lstrip("/") for line in ignored.splitlines()}
    for name in names:
        label = secret_path(system.join(top, name))
        if label is not None and name not in listed and "*" not in listed:
            an.add("exfiltration", seg, f"docker build sends the folder {context}, with "
                                        f"{name} in it, to the daemon at {host}")
            act = an.seen[("exfiltration", seg)]
            act.hosts, act.secrets = [host], [label]
            return


_COMPOSE_FILES = ("compose.yaml", "compose.yml", "docker-compose.yaml", "docker-compose.yml")
_COMPOSE_OVERRIDES = ("compose.override.yaml", "compose.override.yml",
                      "docker-compose.override.yaml", "docker-compose.override.yml")
# subcommands that start containers from the file's services
_COMPOSE_STARTS = ("up", "run", "create", "start", "restart", "watch")


def compose(an: Walk, base: str, fields: list[str | None], seg: str) -> None:
    """``docker compose up|run|...`` (``docker-compose``, ``podman compose``): the compose
    files start containers with the volumes and commands they list. A file that names a
    governance-protected place (a volume of ``.claude``, a command that writes
    ``/app/.claude/settings.json``) is ``governance-admin``, as such a ``docker run`` is. The
    files are ``-f``/``--file`` (``-`` is standard input), else the first default name in the
    project folder (``--project-directory``) with its override file, read from disk or from
    what the command wrote earlier; one named only at run time is ``shell-unknown``."""
    from governance.shell import source

    named: list[str | None] = []
    folder = "."
    sub = None
    k = 1
    while k < len(fields):
        word = fields[k]
        if word in ("-f", "--file", "--project-directory") and k + 1 < len(fields):
            if word == "--project-directory":
                folder = fields[k + 1] or folder
            else:
                named.append(fields[k + 1])
            k += 2
            continue
        if word is not None and word.startswith(("--file=", "--project-directory=")):
            key, _, value = word.partition("=")
            if key == "--file":
                named.append(value)
            else:
                folder = value
        elif word is not None and word.startswith("-f") and len(word) > 2:
            named.append(word[2:])
        elif word is not None and not word.startswith("-") and word != "compose":
            sub = word
            break
        k += 1
    if sub not in _COMPOSE_STARTS:
        return
    if not named:
        first = next((f"{folder}/{n}" for n in _COMPOSE_FILES if _present(an, f"{folder}/{n}")),
                     None)
        override = next((f"{folder}/{n}" for n in _COMPOSE_OVERRIDES
                         if _present(an, f"{folder}/{n}")), None)
        named = [name for name in (first, override if first else None) if name is not None]
    for name in named:
        if name is None:
            an.unknown(seg, f"{base} compose starts services from a file named only at run time")
            continue
        if name == "-":
            continue          # standard input: read as the command's input by the caller
        path = source.path_of(an, name)
        if path is None:          # no folder to read from: only what the command wrote
            text = an.file_text(name)
        else:
            text = source.text_of(an, base, path, name, seg)
        if text is None:
            continue
        why = _names_protected(an, text)
        if why is not None:
            an.add("governance-admin", seg,
                   f"{base} compose starts services from {name}, which {why}: its containers "
                   "may change governance files; ask the user")


def _present(an: Walk, name: str) -> bool:
    """Whether the command wrote the file earlier, or it is on disk."""
    from governance import system
    from governance.shell import source

    path = source.path_of(an, name)
    return an.wrote(name) or (path is not None and (source.written(an, path) is not None or
                                                    system.exists(path)))


def _names_protected(an: Walk, text: str) -> str | None:
    """Why a file's text names a governance-protected place: a marker (``.claude/``), or a
    word, split as volume specifications are (``./.claude:/c:rw``), that is a protected path
    or the folder of one."""
    from governance.shell.source import HINTS

    lowered = text.lower()
    for marker in an.shell.get("protected_markers", ()):
        if marker in lowered:
            return f"names {marker!r}"
    for word in text.translate(_SEPARATORS).split():
        word = word.strip("-")
        if any(h in word.lower() for h in HINTS) and (
                an.protected(word, word) or an.holds_protected(word, True)):
            return f"names {word}"
    return None


_SEPARATORS = str.maketrans({c: " " for c in "\"':=,[]{}()"})


def ext_command(url: str) -> list[str]:
    """The command an ``ext::`` remote runs, as git-remote-ext reads it: words split on
    unescaped spaces, ``%`` escapes (``% `` a space, ``%%`` a percent sign, ``%s``/``%S`` the
    service's name); a word holding ``%G`` or ``%V`` is for git and is not passed on."""
    words: list[str] = []
    word: list[str] = []
    own = True          # the word is passed to the command
    text = url[len("ext::"):]
    i = 0
    while i < len(text):
        char = text[i]
        if char == "%" and i + 1 < len(text):
            escape = text[i + 1]
            word.append({" ": " ", "%": "%", "s": "git-upload-pack", "S": "upload-pack"}.get(
                escape, ""))
            own = own and escape not in "GV"
            i += 2
            continue
        if char == " ":
            if word and own:
                words.append("".join(word))
            word, own = [], True
        else:
            word.append(char)
        i += 1
    if word and own:
        words.append("".join(word))
    return words


_CONFIG_VALUED = ("-f", "--file", "--blob", "--type", "--default", "--comment", "--value")


def _config_words(args: list[str | None]) -> list[str | None]:
    """The key and value ``git config`` is given, without its options and their values
    (``-f FILE``) or the action word of git's newer syntax (``git config set KEY VALUE``)."""
    words: list[str | None] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg in _CONFIG_VALUED:
            skip = True
        elif arg is None or not arg.startswith("-"):
            words.append(arg)
    return words[1:] if words[:1] in (["set"], ["add"]) else words


def startup(an: Walk, value: str | None, raw: str, seg: str, depth: int) -> None:
    """``BASH_ENV=FILE bash -c :``: bash runs FILE before the command; its text is analysed when
    the command wrote it or the file can be read, and is unknown when written at run time."""
    text = an.file_text(value)
    if value is None or (value.startswith(("/dev/", "/proc/")) and value != "/dev/null"):
        an.unknown(seg, f"bash runs a start-up file known only at run time ({raw})")
    elif text is not None:
        an.script(text, depth + 1, seg)
    elif an.wrote(value):
        an.unknown(seg, f"bash runs {raw}, written earlier in this command")
    elif an.root is not None:
        from governance.shell.source import run_file

        run_file(an, "bash", value, raw, seg, depth)


def definitions(an: Walk, base: str, fields: list[str | None], cmd: Simple | None) -> None:
    """Names a command gives values to, for the commands after it: ``export``/``declare``
    assignments (a nameref ``declare -n`` is unknown), ``set -- WORDS`` (``"$@"``),
    ``printf -v VAR FORMAT`` and ``read VAR <<< WORDS``."""
    args = fields[1:]
    if base not in ("set", "printf", "read"):   # export, declare, typeset, local, readonly
        ref = any(a is not None and a.startswith("-") and "n" in a[1:] for a in args)
        if cmd is not None and len(cmd.words) == len(fields):
            for arg, word in zip(args, cmd.words[1:], strict=True):
                raw = str(word.text[word.start:word.end]) if word.text is not None else ""
                if arg is None and "=" in raw and raw.split("=", 1)[0].isidentifier():
                    an.vars[raw.split("=", 1)[0]] = None       # local x=$(...): not known
                    from governance.shell.evaluated import runtime_word

                    if runtime_word(an, raw.split("=", 1)[1]):
                        an.runtime.add(raw.split("=", 1)[0])
        for arg in args:
            if arg and "=" in arg and not arg.startswith("-"):
                var, _, value = arg.partition("=")
                an.vars[var] = None if ref else value
                an.ifs = an.ifs or var == "IFS"
                if ref and value.isidentifier():
                    from governance.shell.secrets import alias

                    alias(an, var, value)       # declare -n R=GITHUB_TOKEN; curl .../$R
    elif base == "set" and "--" in args:
        from governance.shell.names import positional

        positional(an, args[args.index("--") + 1:])
        if cmd is not None and len(cmd.words) == len(fields):   # set -- "$TOKEN"; curl .../$1
            after = [word_text(w) for w in cmd.words[1:]][args.index("--") + 1:]
            an.positional_secrets(["", *after])
    elif base == "printf" and len(args) >= 3 and args[0] == "-v" and args[1]:
        form, values = args[2], args[3:]
        known = form is not None and all(v is not None for v in values)
        if known:
            from governance.shell.escapes import printf

            an.vars[str(args[1])] = printf(str(form), [str(v) for v in values])
            an.runtime.discard(str(args[1]))
        else:
            an.vars[str(args[1])] = None
            an.runtime.add(str(args[1]))
    elif base == "read" and cmd is not None:
        names = [a for a in args if a is not None and not a.startswith("-")]
        kind, text = an.stdin_text(cmd)
        split_by = any(name == "IFS" for name, _ in cmd.assigns)   # IFS=: read a b: unknowable
        words = (text or "").split() if kind == "literal" and not (an.ifs or split_by) else None
        for k, var in enumerate(names or ["REPLY"]):
            if words is None:
                an.vars[var] = None
                an.runtime.add(var)            # read x; echo $((x)): text from the input
            else:
                an.runtime.discard(var)
                an.vars[var] = " ".join(words[k:]) if k == len(names) - 1 else (
                    words[k] if k < len(words) else "")


def recipe_lines(text: str) -> list[str]:
    """The commands of a makefile's or justfile's recipes: indented lines (``@``, ``-`` and ``+``
    prefixes dropped) and inline recipes after ``target: ;``."""
    lines = []
    for line in text.splitlines():
        if line[:1] in ("\t", " ") and line.strip():
            lines.append(line.strip().lstrip("@-+").strip())
        elif ": ;" in line or ":;" in line:
            lines.append(line.split(";", 1)[1].strip())
    return [line for line in lines if line and not line.startswith("#")]


def command_lines(arg: str) -> list[str]:
    """The argument itself when it holds a space, and each double-quoted string inside it
    (``\"`` and ``\\`` unescaped, as Lisp, Vim script and most languages write them)."""
    found = [arg] if " " in arg.strip() else []
    i, n = 0, len(arg)
    while i < n:
        if arg[i] != '"':
            i += 1
            continue
        out: list[str] = []
        i += 1
        while i < n and arg[i] != '"':
            if arg[i] == "\\" and i + 1 < n:
                i += 1
            out.append(arg[i])
            i += 1
        i += 1
        text = "".join(out)
        if " " in text:
            found.append(text)
    return found


def preloaded(language: str, modules: list[str]) -> str:
    """Code that loads the modules an interpreter was told to load first."""
    if language == "perl":
        return "".join(f"use {m.split('=', 1)[0]};\n" for m in modules)
    if language == "ruby":
        return "".join(f"require '{m}'\n" for m in modules)
    if language == "node":
        return "".join(f"require('{m}');\n" for m in modules)
    return ""
