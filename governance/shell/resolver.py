"""Resolving one expanded command: wrappers, nested shells, evaluators, interpreters, ``find``.

Hot path: imports only our own ``shell.rules``. ``resolve`` peels wrappers (``sudo``, ``env``,
``timeout``, ``xargs`` ...) off an argument vector until it reaches the command that really runs,
recurses into the strings that nested shells and evaluators run (``bash -c``, ``eval``, ``watch``,
``su -c``, heredocs fed to a shell), and finally matches the ``shell.commands`` patterns.
"""

from __future__ import annotations

from governance.shell.rules import harmless as harmless_flag
from governance.shell.rules import known_name, lookup_name, match_command, name_forms, parse_spec
from governance.shell.words import quote

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from governance.shell.parser import Simple
    from governance.shell.rules import Argv
    from governance.shell.walk import Walk

_MAX_HOPS = 32
# programs that name other programs (``shell.names``): cp, ln, install, hash, alias ...
NAMING = frozenset(("cp", "ln", "install", "ginstall", "mv", "link", "dd", "rsync", "hash",
                    "alias", "unalias", "unset", "shift"))
_DECLARERS = ("export", "declare", "typeset", "local", "readonly")
# builtins that evaluate names or arithmetic they are given (``shell.evaluated``)
NAMED = frozenset(("let", "test", "[", "[[", "printf", "read", "declare", "typeset", "local",
                   "export", "readonly", "unset", "mapfile", "readarray", "getopts", "wait",
                   "complete", "compgen"))


_COMPOSERS = ("docker-compose", "podman-compose")
_CONTAINERS = ("docker", "podman", "nerdctl")


_REF_MOVERS = ("update-ref", "symbolic-ref", "replace", "tag", "branch", "bundle", "notes")


_MAX_COPIED = 2000


def _copied_over(an: Walk, argv: Argv, target: str, raw: str, seg: str, primitive: str,
                 reason: str) -> None:
    """``cp -r SRC/. DIR``, ``cp -rT SRC DIR``: the files of SRC, listed now, written over
    DIR's; a source that cannot be listed (known at run time, not there yet, too many files) may
    write any file of DIR."""
    import os

    from governance import system

    folder = an.folder()
    dest = target[:-2] or "."
    if an.root is None:                  # the analysis alone: no files to list
        an.target(target, raw, seg, primitive, reason)
        return
    sources = [v for v, _r in argv.positionals[:-1]]
    listed: list[str] = []
    for source in sources:
        if source is None or folder is None:
            listed = []
            break
        top = os.path.join(folder, system.expanduser(source))
        if not os.path.isdir(top):     # not there yet: what this command puts there
            listed = []
            break
        for here, _dirs, files in os.walk(top):
            listed += [os.path.relpath(os.path.join(here, f), top) for f in files]
            if len(listed) > _MAX_COPIED:
                break
        if len(listed) > _MAX_COPIED:
            break
    else:
        for rel in listed:
            an.target(f"{dest.rstrip('/')}/{rel}", raw, seg, primitive, reason)
        return
    an.target(target, raw, seg, primitive, reason, True)


def _moves_refs(fields: list[str | None]) -> bool:
    """Whether a git command points a branch, HEAD or a tag at another commit: update-ref,
    symbolic-ref, replace, tag/branch that create or force, a fetch into a named local ref."""
    words = [f for f in fields[1:] if f is not None]
    k = 0
    while k < len(words) and words[k].startswith("-"):
        k += 2 if words[k] in ("-C", "-c", "--git-dir", "--work-tree") else 1
    if k >= len(words):
        return False
    sub, rest = words[k], words[k + 1:]
    if sub == "fetch":
        return any(":" in w and not w.startswith(("-", ":")) and "://" not in w and
                   not w.startswith("git@") for w in rest)
    if sub in ("tag", "branch"):      # a new name at HEAD moves nothing; one at a start point,
        named = [w for w in rest if not w.startswith("-")]   # or forced, does
        return not any(w in ("-l", "--list", "-d", "-D", "--delete", "-v", "--verify",
                             "--contains", "--show-current") for w in rest) and (
            len(named) >= 2 or (bool(named) and any(w in ("-f", "--force", "-m", "-M", "-c",
                                                          "-C") for w in rest)))
    if sub == "symbolic-ref":
        return len([w for w in rest if not w.startswith("-")]) >= 2
    return sub in _REF_MOVERS


def resolve(an: Walk, fields: list[str | None], globs: list[bool], raws: list[str],
            cmd: Simple, seg: str, depth: int) -> None:
    shell = an.shell
    for _hop in range(_MAX_HOPS):
        while fields and fields[0] == "":
            fields, globs, raws = fields[1:], globs[1:], raws[1:]
        if not fields:
            an.add("shell-read", seg, "runs no command")
            return
        first = fields[0]
        if first is None and _hop == 0:
            first = _located(an, raws[0])      # "$VIRTUAL_ENV/bin/python": the environment's
            if first is not None:
                fields = [first, *fields[1:]]
        if first is None:
            an.unknown(seg, f"the command name {raws[0]} is only known at run time")
            return
        if (globs[0] and first not in ("[", "[[")) or first == "{}":
            an.unknown(seg, f"the command name {raws[0]} is a pattern expanded at run time")
            return
        base = first.rsplit("/", 1)[-1]
        if an.names is not None or base in NAMING or (_hop == 0 and any(
                n == "PATH" for n, _ in cmd.assigns)) or ((base in _DECLARERS or base == "env") \
                and any("PATH=" in r for r in raws)):
            from governance.shell.names import step  # functions, aliases, copies, PATH

            named = step(an, fields, raws, cmd, seg, depth, _hop == 0)
            if named is None:
                return
            if named is not fields:
                fields, globs = named, [False] * len(named)
                first = str(fields[0])
                base = first.rsplit("/", 1)[-1]
        if base.startswith("git-") and len(base) > 4 and \
                lookup_name(base, shell.get("commands", {})) is None:
            # git X runs git-X (from git's exec path, then PATH): git-push ARGS is git push ARGS
            fields, raws = ["git", base[4:], *fields[1:]], ["git", base[4:], *raws[1:]]
            globs = [False, False, *globs[1:]]
            continue
        if "/" in first and an.files and an.wrote(first):   # written by this command: its text
            from governance.shell.program import interpreter_argv  # is what runs

            text = an.file_text(first)
            head = interpreter_argv(text, shell.get("shells", {})) if text else None
            if head is not None:      # #!/bin/rm -rf: the kernel runs `/bin/rm -rf FILE ARGS`
                fields, raws = [*head, *fields], [*head, *raws]
                globs = [False] * len(head) + globs
                continue
            from governance.shell import script

            script.script_file(an, base, first, raws[0], seg, depth)
            return
        forms = name_forms(first)
        if base in _SCRIPT_RUNS and an.root is not None and "run" in fields[1:]:
            from governance.shell import task_tables  # pdm run NAME: the project's script NAME

            if task_tables.run(an, base, fields, seg, depth):
                an.add("shell-execute", seg, f"{base} runs a script of the project")
                return
        name = lookup_name(forms, shell.get("wrappers", {}))
        if name is not None:
            from governance.shell import wrapper

            mark = len(an.acts)
            if shell["wrappers"][name].get("fanout") and cmd is not None and \
                    getattr(an.check, "secret_path", None) is not None and \
                    any(f is not None and f.startswith(("-a", "--arg-file", "::::"))
                        for f in fields):
                from governance.shell.secrets import argument_file  # xargs -a .env CMD

                argument_file(an, fields, cmd)
            start = wrapper.unwrap(an, shell["wrappers"][name], base, fields, raws, seg, depth,
                                   cmd)
            if shell["wrappers"][name].get("primitive") in _NETWORK_ACTS:   # ssh HOST "echo $T"
                flows(an, base, fields, raws, seg, cmd, mark, files=False)
            if start is None:
                return
            if start > 1 and any((r if f is None else f)[:1] == "-"
                                 for f, r in zip(fields[1:start], raws[1:start], strict=False)):
                from governance.shell.outputs import outputs  # time -o FILE CMD, strace -o

                outputs(an, base, first, fields[:start], raws[:start], seg, "unlisted")
            if start > 0:
                fields, raws = fields[start:], raws[start:]
                if fields[-1] is None and raws[-1].startswith("(arguments read") and \
                        cmd is not None and cmd.piped_from is not None:   # find X | xargs rm
                    raws[-1] = "\0" + cmd.piped_from.segment
                globs = (globs[start:] + [False] * len(fields))[:len(fields)]
                continue
        if lookup_name(forms, shell.get("shells", {})) is not None:
            from governance.shell import script

            script.shell(an, base, fields, raws, cmd, seg, depth)
            return
        name = lookup_name(forms, shell.get("evaluators", {}))
        if name is not None:
            from governance.shell import script

            script.evaluator(an, shell["evaluators"][name], base, fields, raws, cmd, seg, depth)
            flows(an, base, fields, raws, seg, cmd, len(an.acts))   # source .env
            return
        name = lookup_name(forms, shell.get("interpreters", {}))
        if name is not None:
            from governance.shell import interpreter

            mark = len(an.acts)
            mapped = interpreter.interpret(an, shell["interpreters"][name], name, base, fields,
                                           raws, cmd, seg, depth)
            if mapped is None:
                flows(an, base, fields, raws, seg, cmd, mark)   # python -c CODE < .env
                return
            tail = len(mapped) - 1          # python -m json.tool IN OUT: IN OUT keep their text
            kept = raws[len(raws) - tail:] if 0 < tail < len(fields) and \
                fields[len(fields) - tail:] == mapped[1:] else [str(f) for f in mapped[1:]]
            fields, globs, raws = mapped, [False] * len(mapped), [str(mapped[0]), *kept]
            continue
        if base in shell.get("finders", {}):
            from governance.shell import wrapper

            wrapper.find(an, shell["finders"][base], fields, globs, raws, cmd, seg, depth)
            return
        if base == "git":
            if "init" in fields or any(f is not None and f.startswith("--git-dir") for f in
                                       fields) or any(n.startswith(("GIT_DIR", "GIT_INDEX",
                                                                    "GIT_OBJECT", "GIT_COMMON"))
                                                      for n in [*an.vars, *(a for a, _ in
                                                                            cmd.assigns)]):
                from governance.shell.gitenv import repository_places

                repository_places(an, cmd, fields, seg)   # GIT_DIR=.claude/governance git init
            _git_folder(an, fields)               # git -C DIR: paths are read from DIR
            from governance.shell.programs import git_config

            if any(f is not None and (f.startswith("--config-env") or f[:8].lower() in (
                    "include.", "includei")) for f in fields) or any(
                    n.startswith("GIT_CONFIG") or n in ("HOME", "XDG_CONFIG_HOME")
                    for n in [*an.vars, *(a for a, _ in cmd.assigns)]):
                from governance.shell.gitenv import configured  # GIT_CONFIG_COUNT=1 ...

                fields = configured(an, cmd, fields, seg)
                raws, globs = [str(f) for f in fields], [False] * len(fields)
            aliased = git_config(an, fields, seg, depth)
            if aliased is not None:
                fields, raws = aliased, [str(f) for f in aliased]
                globs = [False] * len(fields)
            if an.root is not None:           # aliases and hooks from the files git reads
                from governance.shell import gitfiles

                aliased = gitfiles.run(an, fields, seg, depth)
                if aliased is not None:
                    fields, raws = aliased, [str(f) for f in aliased]
                    globs = [False] * len(fields)
            if "clean" in fields or "stash" in fields:   # git clean -x: ignored files too
                from governance.shell import ignored

                ignored.check(an, fields, seg)
        mark = len(an.acts)
        plain(an, base, fields, raws, seg, depth, cmd)
        flows(an, base, fields, raws, seg, cmd, mark)
        if base == "git" and _moves_refs(fields):
            from governance.shell.worktree import REFS_MOVED

            an.vars[REFS_MOVED] = "1"    # a later checkout or reset --hard reads other commits
        return
    an.unknown(seg, "too many wrappers around the command")


# folders the user's environment names, under which a program's path is read as written
_LOCATIONS = frozenset(("VIRTUAL_ENV", "CONDA_PREFIX", "PYENV_ROOT", "JAVA_HOME", "GOROOT",
                        "GOPATH", "GOBIN", "CARGO_HOME", "RUSTUP_HOME", "NVM_DIR", "VOLTA_HOME",
                        "BUN_INSTALL", "DENO_INSTALL", "PNPM_HOME", "ANDROID_HOME",
                        "ANDROID_SDK_ROOT", "FLUTTER_ROOT", "DOTNET_ROOT", "M2_HOME",
                        "GRADLE_HOME", "HOMEBREW_PREFIX", "HOME", "PWD"))


def _located(an: Walk, raw: str) -> str | None:
    """A program named by a folder the user's environment gives and a literal path under it
    (``"$VIRTUAL_ENV/bin/python"``, ``${CONDA_PREFIX}/bin/pip``): that path, with the folder as
    the environment has it, or a stand-in when the hook's environment lacks it (the program's
    name is what decides). None for any other name known only at run time, and for a variable
    this command set."""
    text = raw[1:-1] if len(raw) > 1 and raw[0] == raw[-1] == '"' else raw
    if not text.startswith("$"):
        return None
    braced = text.startswith("${")
    end = text.find("}") if braced else text.find("/")
    if end < 0:
        return None
    name = text[2:end] if braced else text[1:end]
    tail = text[end + 1:] if braced else text[end:]
    if name not in _LOCATIONS or name in an.vars or not tail.startswith("/") or len(tail) < 2 \
            or any(c in tail for c in "$`*?[{\\\"'"):
        return None
    from governance import system

    folder = system.environ_get(name) if name not in ("HOME", "PWD") else None
    if name == "HOME":
        folder = system.expanduser("~")
    elif name == "PWD":
        folder = an.folder()
    return (folder or f"/{name.lower()}").rstrip("/") + tail


def flows(an: Walk, base: str, fields: list[str | None], raws: list[str], seg: str,
          cmd: Simple | None, mark: int, files: bool = True) -> None:
    """The secrets a command reads or carries (``shell.secrets``), read only when it may touch
    one: a word that expands something, a program that prints the environment or reaches the
    network, input from a file, or an argument that names a secret file. ``mark``: how many
    acts there were before the command's own; ``files``: whether its arguments name local
    files (not those of a command ssh runs on the remote host)."""
    if an.flow is None and not _may_touch_secrets(an, base, fields, raws, seg, cmd, mark):
        return
    from governance.shell import secrets

    secrets.command(an, base, fields, raws, seg, cmd, mark, files)
    secrets.assign(an, "_", raws[-1])      # $_: the last argument of the command before


_NETWORK_ACTS = ("web-fetch", "local-request", "vcs-push")


def expands(raw: str) -> bool:
    """Whether a word's text may expand a variable or run a command (a superset)."""
    if "`" in raw:
        return True
    k = raw.find("$")
    while k >= 0:
        c = raw[k + 1:k + 2]
        if c.isalpha() or c in "{(_":
            return True
        k = raw.find("$", k + 1)
    return False


def _text(word: Any) -> str:
    return word.text[word.start:word.end] if word.text is not None else ""


def _may_touch_secrets(an: Walk, base: str, fields: list[str | None], raws: list[str], seg: str,
                       cmd: Simple | None, mark: int) -> bool:
    ask = getattr(an.check, "secret_path", None)
    if ask is None:
        return False
    table = an.shell.get("secret_flow") or {}
    if base in table.get("dumps", ()) or base in table.get("sinks", ()) or \
            base in table.get("secret_commands", ()) or base in table.get("clients", ()):
        return True
    for k in range(mark, len(an.acts)):
        if an.acts[k].primitive in _NETWORK_ACTS:
            return True
    if cmd is not None and any(a.primitive == "package-install" for a in an.acts[mark:]) and (
            any(expands(_text(w)) for _name, w in cmd.assigns) or
            any("=" in _text(w) and expands(_text(w)) for w in cmd.words)):
        return True                  # [env] PIP_INDEX_URL=https://HOST/$TOKEN/ pip install
    for k in range(1, len(fields)):
        if fields[k] is None or expands(raws[k]):
            return True
    if cmd is not None:
        for r in cmd.redirs:
            target = r.target
            if r.op in ("<", "<&", "<<<") or (r.body and "$" in r.body) or (
                    target is not None and target.text is not None and
                    "/dev/" in target.text[target.start:target.end]):
                return True
    metadata = table.get("metadata", ())
    if base in metadata and base not in ("git", "ln", "mv"):    # ln -s .env x: x is .env
        return False
    for field in fields[1:]:
        if not field or field[0] == "+":
            continue
        if field[0] == "@":
            field = field[1:]
        elif "=@" in field:
            field = field.split("=@", 1)[1]
        elif field[0] == "-":
            if field[:2] != "--" or "=" not in field:
                continue
            field = field.split("=", 1)[1]
        if "*" in field:           # cat .e*, ~/.aws/cred*: the files the glob matches now
            if ask(field if not an.cwd or field[0] in "/~" else f"{an.cwd}/{field}"):
                return True
            name = field.replace("*", "")   # cat .env*, -g '*.pem': a name it stands for
            field = name if name.rsplit("/", 1)[-1] not in ("", ".") else field.replace("*", "x")
        if ask(field if not an.cwd or field[0] in "/~" else f"{an.cwd}/{field}"):
            return True
    return False


def _one_level(fields: list[str | None]) -> bool:
    """``find DIR -maxdepth 0|1 ...``: it does not descend below the folders it names."""
    return any(fields[k] == "-maxdepth" and fields[k + 1] in ("0", "1")
               for k in range(len(fields) - 1))


_SIGNALLERS = ("kill", "pkill", "killall", "killall5", "skill", "fuser")
# runners of the tasks a configuration file holds (governance.shell.task_tables)
_TASK_TABLES = ("deno", "composer", "poe", "pdm", "hatch", "task", "go-task", "lefthook",
                "pre-commit")
_SCRIPT_RUNS = ("pdm", "hatch")    # `BASE run NAME` runs a script NAME, else the command NAME


def _git_folder(an: Walk, fields: list[str | None]) -> None:
    """``git -C DIR`` (repeatable, each relative to the last) and ``--work-tree=DIR`` before the
    subcommand: the folder the command's paths are read from."""
    k = 1
    while k < len(fields):
        arg = fields[k]
        if arg is None or not arg.startswith("-"):
            return
        if arg == "-C" or arg == "--work-tree":
            an.enter(fields[k + 1] if k + 1 < len(fields) else None)
            k += 2
            continue
        if arg.startswith("--work-tree="):
            an.enter(arg.partition("=")[2])
        elif arg.startswith("-C") and arg[2:3] not in ("", "-"):
            an.enter(arg[2:])
        k += 2 if arg in ("-c", "--git-dir", "--namespace", "--exec-path", "--config-env",
                          "--super-prefix", "--list-cmds") else 1


def plain(an: Walk, base: str, fields: list[str | None], raws: list[str], seg: str,
           depth: int = 0, cmd: Simple | None = None) -> None:
    shell = an.shell
    first = str(fields[0])
    if base in _SIGNALLERS:                  # kill PID: governance's server among them?
        from governance.shell import signals

        signals.check(an, base, fields, raws, seg)
    if base == "ip" and len(fields) > 2:            # ip a a 10.0.0.1/24 dev eth0
        from governance.shell.administration import ip_change

        why = ip_change(fields)
        if why is not None:
            an.add("privilege", seg, why)
    if base[:3] == "pip" or base in _ENVIRONMENT_TOOLS:   # pip uninstall, pyenv uninstall V
        from governance.shell import environments

        environments.check(an, base, fields, seg)
    if base in ("cd", "pushd", "popd"):
        an.change_dir(fields)
    elif base in _DECLARERS or base in ("set", "printf", "read"):
        from governance.shell.programs import definitions

        definitions(an, base, fields, cmd)
        commands = shell.get("command_env") or {}
        if base in _DECLARERS and commands:      # export GIT_EDITOR=CMD; git commit
            for raw in raws[1:]:
                var = raw.split("=", 1)[0]
                if "=" in raw and var in commands:
                    from governance.shell.embedded import env_value

                    env_value(an, var, commands[var], an.vars.get(var), seg, depth)
    elif base in AWKS:
        _awk(an, base, fields, raws, seg, depth)
        return
    if base in NAMED:                            # let x, test -v "$x", read "$x", unset "$x"
        from governance.shell import evaluated

        evaluated.builtin(an, base, fields, raws, seg, depth)
        if base == "read" and cmd is not None and (cmd.piped_from is not None or cmd.fed or
                                                   cmd.fed_from is not None):
            from governance.shell.loops import bind_lines  # find /srv | while read f; ...

            bind_lines(an, fields, cmd.piped_from.segment if cmd.piped_from is not None
                       else cmd.fed, cmd.fed_from)
    if base == "expect":
        from governance.shell import expectscript  # expect -c 'spawn CMD'

        expectscript.run(an, fields, cmd, seg, depth)
    elif base in ("sed", "gsed") and any(f is None or "e" in f or "w" in f.lower() or (
            f[:1] == "-" and "f" in f) for f in fields[1:]):   # ... 'w FILE', -f SCRIPT
        from governance.shell import sedscript  # sed 's/.*/CMD/e', sed '1e CMD'

        sedscript.run(an, base, fields, raws, cmd, seg, depth)
    tasks = shell.get("task_files", {}).get(base)
    if tasks is not None and an.root is not None:      # nox, tox, rake, cmake -P ...
        from governance.shell import taskfiles

        taskfiles.run(an, tasks, base, fields, seg, depth)
    if base in _TASK_TABLES and an.root is not None and (
            base != "deno" or "task" in fields):         # deno task, composer, poe, pdm, hatch
        from governance.shell import task_tables

        task_tables.run(an, base, fields, seg, depth)
    matched = harmless = False
    name = lookup_name(first, shell.get("commands", {}))
    spec = shell["commands"][name] if name is not None else {}
    if name is not None:
        selector = spec.get("selector")
        if selector and len(fields) > 1 and str(fields[1]).startswith(selector):
            fields, raws = [fields[0], *fields[2:]], [raws[0], *raws[2:]]   # cargo +nightly
        argv = parse_spec(spec, fields[1:], raws[1:])
        for option in argv.text:          # git commit -m TEXT, -F - <<EOF: prose, not acts
            for value, raw in argv.values.get(option, ()):
                if "$(" not in raw and "`" not in raw:   # what a substitution runs is no prose
                    an.prose.append(raw)
                if value == "-" and cmd is not None:
                    an.prose.extend(r.body for r in cmd.redirs if r.body)
        if spec.get("command_options"):     # vim -c '!CMD', tar --to-command=CMD, git difftool -x
            from governance.shell.embedded import options

            options(an, base, spec["command_options"], argv, seg, depth)
        if spec.get("argv_options"):     # fd -x CMD ARGS, gdb --args PROG ARGS
            from governance.shell.embedded import argv_runs

            argv_runs(an, base, spec["argv_options"], fields, raws, cmd, seg, depth)
        launched = None
        own = launch = argv
        if spec.get("launches"):           # npx PKG -p x: -p is the package's, not npx's
            from governance.shell import launchers

            launched = launchers.launched(an, spec["launches"], spec["with_value"], fields, raws)
            if launched is not None:
                end = len(fields) - len(launched[0])
                own = parse_spec(spec, fields[1:end], raws[1:end])
                launch = parse_spec(spec, fields[1:end + 1], raws[1:end + 1])
        quiet = harmless_flag(own, [*shell.get("harmless_flags", ()), *spec.get("harmless", ())])
        if quiet is not None:
            an.add("shell-read", seg, f"{base} {quiet} only prints")
            return
        if argv.refused is not None:      # git checkout --unified 3: git refuses, runs nothing
            an.add("shell-read", seg, f"{base} refuses the option {argv.refused} and does nothing")
            return
        if spec.get("code"):
            _code(an, spec["code"], base, fields, seg, depth)   # rails runner CODE
        if spec.get("input_forms") and cmd is not None:   # ed FILE <<< '!CMD'
            from governance.shell.embedded import input_text

            input_text(an, base, spec["input_forms"], cmd, seg, depth)
        if spec.get("program") and cmd is not None and not argv.values.get("-f"):
            from governance.shell import script

            script.stdin_program(an, base, cmd, seg, depth)             # at now <<< CMD
        if spec.get("schedule") and cmd is not None:
            from governance.shell import schedule

            schedule.install(an, base, fields, raws, cmd, seg, depth)   # ... | crontab -
        runner = _RUNNERS.get(name) if an.root is not None else None
        recited = False                        # a recipe or script was read
        if runner is not None:                 # make, just, npm run ...: the files they run
            before = len(an.acts)
            _run_recipes(an, runner, base, fields, seg, depth, cmd)
            recited = len(an.acts) > before
        for option in () if runner is not None else spec.get("recipes", ()):  # make -f FILE
            for value, _raw in argv.values.get(option, ()):
                text = an.stdin_text(cmd)[1] if value == "-" and cmd is not None else \
                    an.file_text(value)
                if text is not None:
                    from governance.shell.programs import recipe_lines

                    for line in recipe_lines(text):
                        an.script(line, depth + 1, seg)
                elif value == "-" or an.wrote(value):
                    an.unknown(seg, f"{base} runs recipes known only at run time")
        if spec.get("queries"):                # psql -c SQL, redis-cli CMD: the statements
            from governance.shell import database

            matched = database.run(an, spec["queries"], base, argv, cmd, seg, depth)
        if spec.get("launches"):               # npx PKG, pnpm dlx PKG, go run PKG@v: fetched
            from governance.shell import launchers

            matched = launchers.run(an, spec["launches"], base, launch, seg, depth) or matched
            if launched is not None:           # npx rimraf .claude: rimraf .claude runs
                _nested(an, launched[0], launched[1], cmd, seg, depth)
        safe = shell.get("safe_targets", {})
        matches = match_command(spec, fields[1:], raws[1:], argv=argv)
        for rule, targets in matches:
            if rule.get("aside"):            # git checkout BRANCH: the files it replaces, listed
                from governance.shell.extraction import extract

                extract(an, rule["extracts"], fields, raws, argv, cmd, seg)
                continue
            real = [(t, raw) for t, raw in targets
                    if t is None or not (t in safe or t.startswith("/dev/fd/"))]
            if not real and (targets or rule.get("targets")) and not rule.get("extracts"):
                harmless = True               # writes only to /dev/null and the like, or nothing
                continue
            matched = True
            local = (_local(an, base, spec, argv, cmd) or (_git_local(base, argv) if base ==
                     "git" else None)) if rule["primitive"] == "web-fetch" else None
            primitive, reason = ("local-request", local) if local else (rule["primitive"],
                                                                        rule["reason"])
            if rule.get("deploy"):           # helm upgrade -n staging: deploy-staging
                from governance.shell.deployment import primitive as deploy

                names = [str(a) for a in an.vars.values() if a] + [
                    v for v in (an.expand_one(w.parts) for _n, w in cmd.assigns) if v
                ] if cmd is not None else []
                primitive, why = deploy(an.shell, rule, [*fields[1:], *names])
                reason = f"{reason}: {why}"
            if rule.get("regenerable"):      # rm -rf dist: output git ignores is file-delete
                from governance.shell.generated import check
                from governance.shell.generated import matched as found

                rebuilt, why = found(an, argv, real, fields) if rule["regenerable"] == "matches" \
                    else check(an, real)
                if not rebuilt and rule["regenerable"] == "matches":
                    whole, why_whole = check(an, real)     # find build -delete: build is output
                    if whole:
                        rebuilt, why = whole, why_whole
                    elif _one_level(fields):               # find DIR -maxdepth 1: as rm DIR/*
                        rebuilt, why = True, "it deletes the files of one folder, as rm DIR/* does"
                primitive = "file-delete" if rebuilt else primitive
                reason = f"{reason}: {why}"
            an.add(primitive, seg, reason)
            if primitive == "file-delete" and any(t is None or raw[:1] == "\0"
                                                  for t, raw in real):
                _listed_delete(an, real, cmd, seg, depth)   # find /srv -type f | xargs rm
            if rule.get("extracts"):     # tar -x, git apply ...: the files it writes, listed
                from governance.shell.extraction import extract

                extract(an, rule["extracts"], fields, raws, argv, cmd, seg)
            fetched = any(r["primitive"] == "web-fetch" for r, _t in matches)
            for k, (target, raw) in enumerate(real):
                if fetched and rule["primitive"] == "file-write":
                    an.written(target)        # curl -o i.sh URL && bash i.sh: unknown text
                folder = rule.get("folders", "")
                if rule.get("into") and len(real) > 1 and folder != "direct":
                    folder = "" if k == 0 else "direct"  # cp a DIR: DIR/a is written, not DIR
                if rule.get("into") and target is not None and target.endswith("/."):
                    _copied_over(an, argv, target, raw, seg, primitive, reason)
                    continue            # cp -r SRC/. DIR: SRC's files over DIR's
                an.target(target, raw, seg, primitive, reason, folder,
                          replaces=bool(rule.get("into")) and folder != "direct")
    if name is not None and spec.get("requests"):
        from governance.shell import methods

        methods.check(an, base, spec["requests"], argv, seg)   # curl -X DELETE localhost:9200/x
    if name is not None and not harmless and _remote_args(fields) and not (
            {rule["primitive"] for rule, _t in matches} & _NETWORK) and \
            lookup_name(first, shell.get("read_only", {})) is None:
        from governance.shell import remote

        understood = {f for rule, _t in matches for f in rule.get("flags") or ()}
        remote.listed(an, base, argv, fields, seg, understood)   # kubectl apply -f https://...
    if "/" in first and base != "governance" and an.protected(first, raws[0]):
        an.add("governance-admin", seg, f"{raws[0]} is a governance script: ask the user to run "
               "it from a terminal")
    if base in shell.get("outputs", {}) or _may_name_output(shell, fields, raws):
        from governance.shell.outputs import outputs  # iconv -o FILE, uniq IN OUT

        outputs(an, base, first, fields, raws, seg,
                "read" if lookup_name(first, shell.get("read_only", {})) is not None else
                "listed" if name is not None else "unlisted")
    if base == "claude":
        from governance.shell.programs import agent_folder  # cd /tmp/old && claude -p ...

        agent_folder(an, fields, seg, cmd)
    if base in _COMPOSERS or (base in _CONTAINERS and "compose" in fields[1:]):
        from governance.shell.programs import compose  # docker compose up: its files' volumes

        compose(an, base, fields, seg)
    if base == "docker" and (any(f is not None and f.startswith(("-H", "--host")) for f in
                                 fields[1:]) or "DOCKER_HOST" in an.vars or
                             any(n == "DOCKER_HOST" for n, _ in (cmd.assigns if cmd else ()))):
        from governance.shell.programs import docker_host  # DOCKER_HOST=tcp://h docker build .

        docker_host(an, fields, seg, cmd)
    runs = spec.get("runs")
    if runs:
        sub = next((k for k in range(1, len(fields)) if fields[k] is not None and
                    not str(fields[k]).startswith("-")), None)
        pair = f"{fields[sub]} {fields[sub + 1]}" if sub is not None and sub + 1 < len(
            fields) else None
        if sub is not None and (fields[sub] in runs or pair in runs):
            mounted: dict[str, str] = {}
            if fields[sub] in ("run", "create") and any(
                    f is not None and f.startswith(("-v", "--volume", "--mount"))
                    for f in fields[sub + 1:]):
                from governance.shell.programs import volumes  # docker run -v .claude:/c

                mounted = volumes(an, fields[sub:], raws[sub:], seg)
            outer, an.mounts = an.mounts, {**an.mounts, **mounted}
            try:
                _carried(an, fields[sub:], raws[sub:], seg, depth, cmd)  # docker run IMAGE CMD
            finally:
                an.mounts = outer
    if matched:
        return
    if harmless or lookup_name(first, shell.get("read_only", {})) is not None:
        an.add("shell-read", seg, f"{base} only reads")
    elif name is not None:
        lexicon = spec.get("lexicon")     # `lexicon: destructive`: only those verbs count
        if not (lexicon and _verbs(an, base, fields, raws, seg, spec,
                                   lexicon if lexicon == "destructive" else None)):
            default = spec.get("default") or ("shell-execute", f"{base} runs a program")
            an.add(default[0], seg, default[1])   # aws lambda invoke: aws calls a cloud API
            if default[0] == "shell-execute" and not recited and not any(
                    spec.get(k) for k in _READ_ARGUMENTS):
                _carried(an, fields, raws, seg, depth, cmd, first=True)   # mise exec -- CMD
                _names_governance(an, base, fields, seg)
    elif "/" in first and an.file_text(first) is not None:
        from governance.shell import script

        script.program(an, str(an.file_text(first)), None, seg, depth)
    elif "/" in first and an.wrote(first):
        an.unknown(seg, f"{raws[0]} was written earlier in this command with content known "
                        "only at run time")
    elif "/" in first and _run_file(an, base, first, raws[0], seg, depth):
        pass
    else:
        if not _verbs(an, base, fields, raws, seg, None):
            from governance.shell.administration import administers

            admin = administers(an, base, first, fields, raws)    # iptables -F, as root
            if admin is not None:
                an.add("privilege", seg, admin)
            else:
                an.add("shell-unlisted", seg, f"{base} is not a command governance knows")
        _names_governance(an, base, fields, seg)     # groovy -e 'new File(".claude/...")...
        if _remote_args(fields):
            from governance.shell import remote

            remote.unlisted(an, base, fields, seg)        # axel https://..., sshfs me@host:/ x
        if any(f is not None and "/dev/" in f for f in fields[1:]):
            from governance.shell.devices import arguments

            arguments(an, base, fields, seg)   # ddrescue img /dev/sdb
        _carried(an, fields, raws, seg, depth, cmd)


# programs that change Python environments (governance.shell.environments)
_ENVIRONMENT_TOOLS = ("uv", "pyenv", "pipx", "virtualenv")
# the keys of a command entry whose arguments are read already (SQL, code, recipes, commands)
_READ_ARGUMENTS = ("queries", "code", "command_options", "argv_options", "input_forms",
                   "recipes", "runs", "program", "schedule", "task_files", "text")


def _code(an: Walk, code: dict[str, str], base: str, fields: list[str | None], seg: str,
          depth: int) -> None:
    """Code a framework's subcommand runs (``shell.commands.NAME.code``): ``rails runner CODE``,
    ``manage.py shell -c CODE``, ``artisan tinker --execute CODE``, read as inline code of its
    language; code known only at run time is unknown."""
    words = fields[1:]
    sub = next((k for k, f in enumerate(words) if f is not None and not f.startswith("-")), None)
    if sub is None or words[sub] is None:
        return
    for key, language in code.items():
        name, _, option = key.partition(" ")
        if words[sub] != name:
            continue
        rest = words[sub + 1:]
        if option:
            at = next((k for k, f in enumerate(rest) if f == option or (
                f is not None and f.startswith(option + "="))), None)
            if at is None:
                continue
            given = str(rest[at])
            value = given.partition("=")[2] if given != option else (
                rest[at + 1] if at + 1 < len(rest) else None)
        else:
            value = next((f for f in rest if f is None or not f.startswith("-")), "")
            if value == "":
                continue
        if value is None:
            an.unknown(seg, f"{base} {key} runs {language} code known only at run time")
        else:
            an.inline(language, value, seg, depth)


# what a listed command's patterns may already say about the network: a remote URL adds nothing
_NETWORK = {"web-fetch", "local-request", "package-install", "vcs-push"}


def _remote_args(fields: list[str | None]) -> bool:
    """Whether an argument may name a remote place (``shell.remote`` decides)."""
    return any(f is not None and ("://" in f or ("@" in f and ":" in f)) for f in fields[1:])


def _verbs(an: Walk, base: str, fields: list[str | None], raws: list[str], seg: str,
           listed: dict[str, Any] | None, only: str | None = None) -> bool:
    """What the subcommand words say the program does (``shell.lexicon``); ``only``: the one
    primitive that counts."""
    from governance.shell import lexicon

    return lexicon.apply(an, base, fields, raws, seg, listed, only)


def _local(an: Walk, base: str, spec: dict[str, Any], argv: Any, cmd: Simple | None) -> str | None:
    """Why a fetching program's request stays on this machine (``shell.endpoint``), or None."""
    if not spec.get("requests"):
        return None
    from governance.shell.endpoint import proxied, request

    names = [name for name, _ in cmd.assigns] if cmd is not None else []
    why = request(spec["requests"], argv, an.shell.get("local_hosts", ()), proxied(names, an.vars))
    return f"{base}: {why}, not the web" if why else None


_GIT_FROM = ("clone", "fetch", "pull", "ls-remote")


def _git_local(base: str, argv: Any) -> str | None:
    """Why ``git clone|fetch|pull|ls-remote SOURCE`` stays on this machine, or None: a source
    spelled as a path (``/srv/repo``, ``../lib``, ``~/code/x``, ``file://...``), not a remote's
    name or a URL. Submodules cloned with it may come from anywhere."""
    found = [v for v, _raw in argv.positionals]
    if len(found) < 2 or found[0] not in _GIT_FROM or any(
            f.startswith(("--recurse-submodules", "--recursive")) for f in argv.flags):
        return None
    source = found[1]
    if source is None or "::" in source:
        return None
    path = source[7:] if source.startswith("file://") else source
    if not path.startswith(("/", "./", "../", "~/")) and path not in (".", ".."):
        return None
    return f"{base} {found[0]} reads the repository at {source}, on this machine, not the web"


_RUNNERS = {"make": "makefile", "gmake": "makefile", "just": "justfile", "npm": "package_scripts",
            "pnpm": "package_scripts", "yarn": "package_scripts", "bun": "package_scripts"}


def _run_recipes(an: Walk, runner: str, base: str, fields: list[str | None], seg: str,
                 depth: int, cmd: Simple | None = None) -> None:
    if runner == "makefile":
        from governance.shell import makefile

        kind, text = an.stdin_text(cmd) if cmd is not None else ("none", None)
        makefile.run(an, base, fields, seg, depth, text if kind == "literal" else None)
    elif runner == "justfile":
        from governance.shell import justfile

        justfile.run(an, base, fields, seg, depth)
    else:
        from governance.shell import package_scripts

        package_scripts.run(an, base, fields, seg, depth)


def _nested(an: Walk, fields: list[str | None], raws: list[str], cmd: Simple | None, seg: str,
            depth: int) -> None:
    """A command another one runs with its own words (``docker run IMAGE CMD``, ``npx PKG``),
    resolved one level deeper: within the same command, whose redirections and input still
    apply, or as a command line of its own."""
    if depth + 1 > an.shell.get("limits", {}).get("max_depth", 6):
        an.unknown(seg, "programs nested too deep")
    elif cmd is not None:
        resolve(an, fields, [False] * len(fields), raws, cmd, seg, depth + 1)
    else:
        an.script(" ".join(quote(w) if w is not None else '"$__unknown"' for w in fields),
                  depth + 1, seg)


def _run_file(an: Walk, base: str, value: str, raw: str, seg: str, depth: int) -> bool:
    """``./x.sh``: the file on disk, read and analysed (``shell.source``)."""
    from governance.shell import source

    return source.run_file(an, base, value, raw, seg, depth)


# awk is read here, not with the interpreters: it is the filter most pipelines hold
AWKS = ("awk", "gawk", "mawk", "nawk", "busybox-awk")


def _awk(an: Walk, base: str, fields: list[str | None], raws: list[str], seg: str,
         depth: int) -> None:
    """An awk program: read like inline code (``system()``, pipes to commands, ``/inet``
    sockets, ``print > FILE``); ``-i inplace`` edits its file arguments."""
    i, n = 1, len(fields)
    program: str | None = ""
    inplace = False
    while i < n:
        arg = fields[i]
        if arg in ("-e", "--source") and i + 1 < n:     # gawk -e PROGRAM: program text
            if fields[i + 1] is None:
                an.unknown(seg, f"{base} runs a program known only at run time")
            else:
                an.inline("awk", str(fields[i + 1]), seg, depth)
            program = None
            i += 2
            continue
        written = _awk_file(arg)      # gawk --dump-variables=F, -pF, --pretty-print=F
        if written is not None:
            an.target(written, written, seg, "file-write", f"{base} {arg} writes {written}")
            i += 1
            continue
        if arg in ("-f", "--file", "-E", "--exec"):
            from governance.shell import script

            script.script_file(an, base, fields[i + 1] if i + 1 < n else None,
                         raws[i + 1] if i + 1 < n else "", seg, depth, "awk")
            program = None
            i += 2
            continue
        if arg in ("-v", "-F", "--assign", "--field-separator", "-i", "--include", "-l", "--load"):
            inplace = inplace or (arg in ("-i", "--include") and i + 1 < n and
                                  fields[i + 1] == "inplace")
            i += 2
            continue
        if arg is not None and arg.startswith("-") and arg != "-":
            i += 1
            continue
        break
    if program is not None:
        if i >= n:
            an.add("shell-read", seg, f"{base} without a program does nothing")
            return
        code = fields[i]
        i += 1
        if code is None:
            an.unknown(seg, f"{base} runs a program known only at run time")
        else:
            an.inline("awk", code, seg, depth)
    for k in range(i, n):
        if inplace:
            an.target(fields[k], raws[k], seg, "file-write", f"{base} -i inplace edits {raws[k]}")
    if not inplace:
        an.add("shell-read", seg, f"{base} reads its input")


_AWK_FILES = {"--dump-variables": "awkvars.out", "-d": "awkvars.out",
              "--profile": "awkprof.out", "-p": "awkprof.out",
              "--pretty-print": "awkprof.out", "-o": "awkprof.out"}


def _awk_file(arg: str | None) -> str | None:
    """The file a gawk option writes (``--profile[=F]``, ``-pF``, ``-d``), or None."""
    if arg is None or arg[:1] != "-":
        return None
    if arg.startswith("--"):
        name, eq, value = arg.partition("=")
        full = next((o for o in _AWK_FILES if o.startswith("--") and len(name) >= 5 and
                     o.startswith(name)), None)      # GNU abbreviations: --dump, --prof
        return None if full is None else (value if eq else _AWK_FILES[full])
    head = arg[:2]
    return (arg[2:] or _AWK_FILES[head]) if head in _AWK_FILES else None


def _may_name_output(shell: dict[str, Any], fields: list[str | None], raws: list[str]) -> bool:
    """Whether an option may name an output file (``shell.outputs``): a long option, one of
    ``output_options``, or ``-o``/``-O`` with a value attached. ``sort -rn``, ``head -20`` and
    ``grep -v`` cannot, so the module that reads outputs is not loaded for them."""
    spellings = shell.get("output_options", {})
    for field, raw in zip(fields[1:], raws[1:], strict=False):
        text = raw if field is None else field
        if text[:1] == "-" and (text[:2] == "--" or text[:2] in ("-o", "-O") or
                                text.partition("=")[0] in spellings):
            return True
    return False


def _document(shell: dict[str, Any], arg: str) -> bool:
    """A file with a word for an extension (``notes/governance.md``) or a pattern
    (``notes/gov*``), not a program listed under that very name: data, not a command to run."""
    name = arg.rsplit("/", 1)[-1]
    stem, dot, ext = name.rpartition(".")
    return (bool(dot and stem and ext.isalpha()) or any(c in name for c in "*?[")) and not any(
        name in shell.get(t, {}) for t in ("commands", "wrappers", "shells", "interpreters"))


def _message(before: str | None, arg: str | None, raw: str, messages: dict[str, int],
             an: Walk) -> bool:
    """Whether a word is the text of a message option (``--notes TEXT``, ``--message=TEXT``:
    ``shell.lexicon.message_options``), which is kept as prose, out of the marker scan."""
    from governance.shell.lexicon import prose

    spelled = raw.split("=", 1)[0] if raw.startswith("--") and "=" in raw else None
    if not prose(before, arg, messages) and spelled not in messages:
        return False
    if "$(" not in raw and "`" not in raw:         # what a substitution runs is no prose
        an.prose.append(raw)
    return True


def _carried(an: Walk, fields: list[str | None], raws: list[str], seg: str, depth: int,
             cmd: Simple | None, first: bool = False) -> None:
    """An unknown program may run its arguments (``chrt -f 1 CMD``, ``podman run IMG CMD``,
    ``emacs --eval '(shell-command "CMD")'``). Heuristically, each argument that names a known
    command and has arguments after it starts a nested command (``pkill node`` names a process,
    not a command to run; in ``docker run node npm publish`` both ``node ...`` and ``npm ...``
    are read); an argument that reads as a command line, or a double-quoted string inside one
    that does, is analysed as one. ``first``: the first such command only (a known program's
    subcommand that governance does not read: ``mise exec -- CMD``)."""
    shell = an.shell
    messages = (shell.get("lexicon") or {}).get("message_options") or {}
    for j in range(1, len(fields)):
        arg = fields[j]
        if _message(fields[j - 1], arg, raws[j], messages, an):   # --notes TEXT: data, not a command
            continue
        if arg is None or not arg or arg.startswith("-"):
            continue
        fed = cmd is not None and j + 1 == len(fields) and an.stdin_text(cmd)[0] != "none" and \
            any(lookup_name(name_forms(arg), shell.get(t, {})) is not None
                for t in ("shells", "interpreters"))   # chrt -f 1 bash <<< CMD
        if "=" not in arg and " " not in arg and (j + 1 < len(fields) or fed) and \
                known_name(shell, arg) and not _document(shell, arg):
            _nested(an, list(fields[j:]), list(raws[j:]), cmd, seg, depth)
            if first:
                return
            continue  # a later name may be the real command (`docker run node npm publish`)
        from governance.shell.programs import command_lines

        for text in command_lines(arg):
            words = text.split()
            if any(known_name(shell, w.strip("'\"();")) for w in words):
                an.script(text, depth + 1, seg)


_LITERALS = ("'", '"')


def _names_governance(an: Walk, base: str, fields: list[str | None], seg: str) -> None:
    """A program governance does not read, given code that names a governance-protected file
    or the folder of one in a quoted literal (``scala -e 'new
    File(".claude/settings.json").delete()'``), may change it: ``governance-admin``. A file given
    as an argument of its own is what the program reads (``mytool .claude/settings.json``)."""
    for arg in fields[1:]:
        if not arg or ("/" not in arg and "claude" not in arg):
            continue
        found: list[str] = []
        for mark in _LITERALS:
            if mark in arg:
                found += arg.split(mark)[1::2]
        for value in found:
            value = value.strip()
            if value and "\n" not in value and (an.protected(value, value) or
                                                 an.holds_protected(value, direct=True)):
                an.add("governance-admin", seg,
                       f"{base}, a program governance does not read, is given {value}, a "
                       "governance-protected file or folder, which it may change: ask the user "
                       "to run it from a terminal")
                return


def _listed_delete(an: Walk, targets: list[tuple[str | None, str]], cmd: Simple | None,
                   seg: str, depth: int) -> None:
    """A delete of every file a listing of a whole tree names (``find /srv | xargs rm``,
    ``for f in $(ls /srv/*); do rm "$f"; done``): decided as ``rm -r`` of that tree
    (``shell.trees``)."""
    from governance.shell.trees import computed, delete, listed, sources

    if cmd is None:
        return
    for value, raw in targets:
        if value is not None and raw[:1] != "\0":
            continue
        for text in sources(an, raw):
            piped = cmd.piped_from if cmd is not None else None
            roots = listed(an, piped) if piped is not None and piped.segment == text else \
                computed(an, text)
            if roots:
                delete(an, roots, cmd, seg, depth + 1)
                return
