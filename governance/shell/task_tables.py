"""Tasks a project's configuration file holds as commands, run by name:

- ``deno task NAME``: ``tasks`` of the nearest ``deno.json``/``deno.jsonc`` (a string, or an
  object's ``command``; its ``dependencies`` run first);
- ``composer run-script NAME``, ``composer run NAME``, ``composer NAME`` (not one of composer's
  own commands), and the event scripts ``composer install``/``update``/``require``/``remove``/
  ``dump-autoload`` run (``pre-install-cmd`` ...; not with ``--no-scripts``): ``scripts`` of
  ``composer.json`` (a string or a list; ``@NAME`` runs another script, ``@php``/``@composer``
  those programs, a ``Class::method`` callback the project's own PHP code);
- ``poe NAME``: ``[tool.poe.tasks]`` of the nearest ``pyproject.toml`` (a string is a command;
  a table's ``cmd`` or ``shell``; ``sequence`` and ``ref`` name other tasks; ``script`` and
  ``expr`` are the project's Python);
- ``pdm run NAME`` and ``pdm NAME`` (not one of pdm's commands): ``[tool.pdm.scripts]``, with the
  ``pre_NAME`` and ``post_NAME`` scripts (a string, or a table's ``cmd``, ``shell`` or
  ``composite``; ``call`` is Python);
- ``hatch run [ENV:]NAME``: ``[tool.hatch.envs.ENV.scripts]`` of ``pyproject.toml`` or
  ``[envs.ENV.scripts]`` of ``hatch.toml`` (a string or a list; a command whose first word is
  another script runs that script); a name that is no script is the command itself;
- ``task [NAME...]`` (``go-task``): ``tasks`` of the nearest ``Taskfile.yml`` and its spellings
  (a string, a list, or ``cmds``/``cmd`` with ``deps`` first; ``task:`` items run other tasks;
  ``default`` without a name; a task of an included file is unknown);
- ``lefthook run HOOK``: ``HOOK``'s ``commands`` (``run``), ``jobs`` and ``scripts`` (the file
  under ``.lefthook/HOOK/``, run by its ``runner``) in ``lefthook.yml`` and its spellings, with
  ``lefthook-local.yml`` over it;
- ``pre-commit run [ID]``: the ``entry`` and ``args`` of the hooks of ``repo: local`` in
  ``.pre-commit-config.yaml`` (``-c FILE``), or of the one named; hooks from other repositories
  run their own code, which is the runner's act.

YAML files are read by ``shell.blockyaml``; one it cannot read (anchors, tags, flow collections
over several lines) is ``shell-unknown``, as the runner may read it. Templates the runners fill in
(``{{.CLI_ARGS}}``, ``{staged_files}``) are words known only at run time.

Each command is analysed as the shell commands it is, in the file's folder, with the arguments
given after the name appended to the task's last command. A file the command wrote before running
it, or one that is not JSON or TOML, runs nothing known: ``shell-unknown`` when it was written
here, nothing when the runner would refuse it. Code the task names (a Python or PHP callable) is
the project's own: ``shell-execute``.

Imported by ``shell.resolver`` (its ``_TASK_TABLES``) only when one of these runners runs, in a
folder the analysis may read; ``tomllib`` is imported then.
"""

from __future__ import annotations

from governance import system
from governance.shell.source import find_up, path_of, run_text, text_of, written
from governance.shell.words import quote

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from governance.shell.walk import Walk

_MAX_TASKS = 32
_COMPOSER_NAMES = (
    "about archive audit browse home bump check-platform-reqs clear-cache clearcache cc config "
    "create-project depends why diagnose dump-autoload dumpautoload exec fund global help init "
    "install i licenses list outdated prohibits why-not reinstall remove rm require r run-script "
    "run search self-update selfupdate show info status suggests update u upgrade validate "
    "repository repo")
_COMPOSER_OWN = frozenset(_COMPOSER_NAMES.split())
_COMPOSER_EVENTS = {
    "install": ("pre-install-cmd", "post-install-cmd", "pre-autoload-dump", "post-autoload-dump"),
    "i": ("pre-install-cmd", "post-install-cmd", "pre-autoload-dump", "post-autoload-dump"),
    "update": ("pre-update-cmd", "post-update-cmd", "pre-autoload-dump", "post-autoload-dump"),
    "u": ("pre-update-cmd", "post-update-cmd", "pre-autoload-dump", "post-autoload-dump"),
    "upgrade": ("pre-update-cmd", "post-update-cmd", "pre-autoload-dump", "post-autoload-dump"),
    "require": ("pre-update-cmd", "post-update-cmd", "pre-autoload-dump", "post-autoload-dump"),
    "remove": ("pre-update-cmd", "post-update-cmd", "pre-autoload-dump", "post-autoload-dump"),
    "dump-autoload": ("pre-autoload-dump", "post-autoload-dump"),
    "dumpautoload": ("pre-autoload-dump", "post-autoload-dump"),
}
_PDM_NAMES = (
    "add build cache completion config export fix import info init install list lock outdated "
    "publish py python remove run search self show sync update use venv")
_PDM_OWN = frozenset(_PDM_NAMES.split())
# options that take a value, before the task's name
_VALUED = {"deno": ("--cwd", "-c", "--config"), "composer": ("-d", "--working-dir"),
           "poe": ("-C", "--directory", "--root", "-e", "--executor"),
           "pdm": ("-p", "--project", "-c", "--config"), "hatch": ("-e", "--env", "-p",
                                                                   "--project"),
           "task": ("-t", "--taskfile", "-d", "--dir", "-o", "--output", "-C", "--concurrency"),
           "go-task": ("-t", "--taskfile", "-d", "--dir", "-o", "--output", "-C",
                       "--concurrency"),
           "lefthook": (), "pre-commit": ("-c", "--config", "--hook-stage", "--from-ref",
                                          "--to-ref", "-s", "-o", "--source", "--origin")}
_FOLDERS = ("--cwd", "-d", "--working-dir", "-C", "--directory", "--root", "-p", "--project",
            "--dir")
# options that name the runner's file
_FILES = ("-t", "--taskfile", "-c", "--config")
_TASKFILES = ("Taskfile.yml", "taskfile.yml", "Taskfile.yaml", "taskfile.yaml",
              "Taskfile.dist.yml", "taskfile.dist.yml", "Taskfile.dist.yaml", "taskfile.dist.yaml")
_LEFTHOOK = ("lefthook.yml", ".lefthook.yml", "lefthook.yaml", ".lefthook.yaml",
             ".config/lefthook.yml", ".config/lefthook.yaml")
_LEFTHOOK_LOCAL = ("lefthook-local.yml", ".lefthook-local.yml", "lefthook-local.yaml",
                   ".lefthook-local.yaml")
_FILLED = "\"$__filled\""     # a template the runner fills in at run time


class _Run:
    """One runner's call: where its file is, what it is named, what it runs."""

    def __init__(self, an: Walk, base: str, seg: str, depth: int, folder: str) -> None:
        self.an, self.base, self.seg, self.depth, self.folder = an, base, seg, depth, folder
        self.seen: set[str] = set()
        self.file: str | None = None          # the file an option names (task -t FILE)

    def command(self, text: str, origin: str, home: str, language: str | None = None) -> None:
        if text.strip():
            run_text(self.an, text, language, origin, self.seg, self.depth, home)

    def code(self, what: str) -> None:
        self.an.add("shell-execute", self.seg, f"{self.base} runs {what}, the project's own code")


def run(an: Walk, base: str, fields: list[str | None], seg: str, depth: int) -> bool:
    """Analyse the task a runner runs (see the module's docstring); whether it named one the
    file holds (``pdm run NAME`` runs the command NAME when there is no such script)."""
    folder = path_of(an, ".")
    if folder is None:
        return False
    words: list[str | None] = []
    named_file: str | None = None
    k = 1
    while k < len(fields):
        arg = fields[k]
        if arg == "--no-scripts":
            return False
        if _named(base, words) or arg is None or not arg.startswith("-"):
            words.append(arg)       # the words up to the task's name, then its arguments
        elif arg in _VALUED.get(base, ()) and k + 1 < len(fields):
            value = fields[k + 1]
            if arg in _FOLDERS and not (base == "task" and arg == "-C") and \
                    not (base == "go-task" and arg == "-C"):
                if value is None:
                    an.unknown(seg, f"{base} runs in a folder known only at run time")
                    return True
                folder = system.normpath(system.join(folder, system.expanduser(value)))
            elif arg in _FILES:
                if value is None:
                    an.unknown(seg, f"{base} reads its tasks from a file named only at run time")
                    return True
                named_file = value
            k += 2
            continue
        elif "=" in arg and arg.split("=", 1)[0] in _FOLDERS:
            folder = system.normpath(system.join(folder, system.expanduser(
                arg.split("=", 1)[1])))
        k += 1
    call = _Run(an, base, seg, depth, folder)
    call.file = named_file
    if base == "deno":
        if words[:1] == ["task"] and len(words) > 1:
            _deno(call, words[1], words[2:])
    elif base == "composer":
        _composer(call, words)
    elif base == "poe":
        if words:
            _poe(call, words[0], words[1:])
    elif base == "pdm":
        if words[:1] == ["run"] and len(words) > 1:
            _pdm(call, words[1], words[2:])
        elif words and words[0] not in _PDM_OWN:
            _pdm(call, words[0], words[1:])
    elif base == "hatch" and words[:1] == ["run"] and len(words) > 1:
        _hatch(call, words[1], words[2:])
    elif base in ("task", "go-task"):
        _task(call, words)
    elif base == "lefthook" and words[:1] == ["run"] and len(words) > 1:
        _lefthook(call, words[1])
    elif base == "pre-commit" and words[:1] == ["run"]:
        _pre_commit(call, [w for w in words[1:] if w is None or not w.startswith("-")][:1])
    return bool(call.seen)


def _named(base: str, words: list[str | None]) -> bool:
    """Whether ``words`` reach the task's name (``deno task NAME``, ``composer NAME``, ``pdm run
    NAME``): what follows is the task's own arguments."""
    if base in ("deno", "hatch") or words[:1] in (["run"], ["run-script"]):
        return len(words) >= 2
    return len(words) >= 1


def _unknown_name(call: _Run, name: str | None) -> bool:
    if name is None:
        call.an.unknown(call.seg, f"{call.base} runs a task named only at run time")
        return True
    return False


def _args(rest: list[str | None]) -> str:
    return " ".join(quote(r) if r is not None else '"$__arg"' for r in rest if r != "--")


# --- reading the files -----------------------------------------------------------------------------
def _document(call: _Run, names: tuple[str, ...], kind: str) -> tuple[Any, str] | None:
    """The nearest of ``names`` up from the folder, parsed (``kind``: json or toml), and its
    folder; None when there is none or the runner could not read it either."""
    an = call.an
    if call.file is not None:
        path: str | None = system.normpath(system.join(call.folder,
                                                       system.expanduser(call.file)))
    else:
        here = next((system.join(call.folder, n) for n in names
                     if written(an, system.join(call.folder, n))), None)
        path = here or find_up(call.folder, names)
    if path is None:
        return None
    label = system.basename(path)
    text = text_of(an, call.base, path, label, call.seg)
    if text is None:
        return None
    try:
        if kind == "yaml":
            from governance.shell.blockyaml import load

            data = load(text)
            if data is None:
                an.unknown(call.seg, f"{call.base} runs what {label} says, which governance "
                                     "cannot read (anchors, tags or flow collections)")
                return None
            return data, system.dirname(path)
        if kind == "toml":
            import tomllib

            return tomllib.loads(text), system.dirname(path)
        from governance.jsoncodec import loads

        return loads(_without_comments(text) if path.endswith(".jsonc") else text), \
            system.dirname(path)
    except (ValueError, RecursionError):
        return None


def _without_comments(text: str) -> str:
    """JSON with comments (``deno.jsonc``) as JSON: ``//`` and ``/* */`` outside strings gone."""
    out: list[str] = []
    k, n, quoted = 0, len(text), False
    while k < n:
        c = text[k]
        if quoted:
            out.append(c)
            if c == "\\" and k + 1 < n:
                out.append(text[k + 1])
                k += 1
            elif c == '"':
                quoted = False
        elif c == '"':
            quoted = True
            out.append(c)
        elif text.startswith("//", k):
            end = text.find("\n", k)
            k = n if end < 0 else end
            continue
        elif text.startswith("/*", k):
            end = text.find("*/", k + 2)
            k = n if end < 0 else end + 2
            continue
        else:
            out.append(c)
        k += 1
    return "".join(out)


def _table(data: Any, *keys: str) -> dict[str, Any]:
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data if isinstance(data, dict) else {}


def _once(call: _Run, name: str) -> bool:
    """Whether the task may run now: not already on this chain, and within the budget."""
    if name in call.seen or len(call.seen) >= _MAX_TASKS:
        return False
    call.seen.add(name)
    return True


# --- the runners ------------------------------------------------------------------------------------
def _deno(call: _Run, name: str | None, rest: list[str | None]) -> None:
    if _unknown_name(call, name):
        return
    found = _document(call, ("deno.json", "deno.jsonc"), "json")
    if found is None:
        return
    tasks, home = _table(found[0], "tasks"), found[1]

    def one(task: str, args: str) -> None:
        value = tasks.get(task)
        if value is None or not _once(call, task):
            return
        if isinstance(value, dict):
            for dependency in value.get("dependencies") or ():
                if isinstance(dependency, str):
                    one(dependency, "")
            value = value.get("command")
        if isinstance(value, str):
            call.command(f"{value} {args}".strip(), f"the task {task} of deno.json", home)

    one(str(name), _args(rest))


def _composer(call: _Run, words: list[str | None]) -> None:
    if not words:
        return
    first = words[0]
    if first in ("run-script", "run"):
        names, rest = words[1:2], words[2:]
    elif first in _COMPOSER_EVENTS:
        names, rest = list(_COMPOSER_EVENTS[str(first)]), []
    elif first is None or first not in _COMPOSER_OWN:
        names, rest = words[:1], words[1:]
    else:
        return
    if not names or any(_unknown_name(call, n) for n in names):
        return
    found = _document(call, ("composer.json",), "json")
    if found is None:
        return
    scripts, home = _table(found[0], "scripts"), found[1]

    def one(script: str, args: str) -> None:
        value = scripts.get(script)
        if value is None or not _once(call, script):
            return
        for line, head in _lines(value, args):
            if head.startswith("@") and head not in ("@php", "@composer", "@putenv"):
                one(head[1:], line[len(head):].strip())
            elif head == "@putenv":
                continue
            elif "::" in head and " " not in line.strip():
                call.code(f"the callback {head}")
            else:
                text = line[1:] if head in ("@php", "@composer") else line
                call.command(text, f"the script {script} of composer.json", home)

    for script in names:
        one(str(script), _args(rest))


def _poe(call: _Run, name: str | None, rest: list[str | None]) -> None:
    if _unknown_name(call, name):
        return
    found = _document(call, ("pyproject.toml",), "toml")
    if found is None:
        return
    tasks, home = _table(found[0], "tool", "poe", "tasks"), found[1]

    def one(task: str, args: str) -> None:
        value = tasks.get(task)
        if value is None or not _once(call, task):
            return
        _poe_value(call, tasks, value, task, args, home, one)

    one(str(name), _args(rest))


def _poe_value(call: _Run, tasks: dict[str, Any], value: Any, task: str, args: str, home: str,
               one: Any) -> None:
    origin = f"the task {task} of pyproject.toml"
    if isinstance(value, str):
        call.command(f"{value} {args}".strip(), origin, home)
    elif isinstance(value, list):                 # a sequence: other tasks, by name
        for item in value:
            if isinstance(item, str) and item in tasks:
                one(item, "")
            else:
                _poe_value(call, tasks, item, task, "", home, one)
    elif isinstance(value, dict):
        for key in ("cmd", "shell"):
            if isinstance(value.get(key), str):
                call.command(f"{value[key]} {args}".strip(), origin, home)
        if isinstance(value.get("ref"), str):
            one(value["ref"].split(" ", 1)[0], args)
        for item in value.get("sequence") or ():
            if isinstance(item, str) and item in tasks:
                one(item, "")
            else:
                _poe_value(call, tasks, item, task, "", home, one)
        for key in ("script", "expr"):
            if isinstance(value.get(key), str):
                call.code(f"the Python {key} {value[key]!r} of its task {task}")


def _pdm(call: _Run, name: str | None, rest: list[str | None]) -> None:
    if _unknown_name(call, name):
        return
    found = _document(call, ("pyproject.toml",), "toml")
    if found is None:
        return
    scripts, home = _table(found[0], "tool", "pdm", "scripts"), found[1]
    if name not in scripts:
        return          # pdm run CMD: the command itself, read as an argument of pdm

    def one(script: str, args: str) -> None:
        value = scripts.get(script)
        if value is None or not _once(call, script):
            return
        origin = f"the script {script} of pyproject.toml"
        if isinstance(value, str):
            call.command(f"{value} {args}".strip(), origin, home)
        elif isinstance(value, dict):
            cmd = value.get("cmd")
            if isinstance(cmd, list):
                cmd = " ".join(quote(str(c)) for c in cmd)
            for text in (cmd, value.get("shell")):
                if isinstance(text, str):
                    call.command(f"{text} {args}".strip(), origin, home)
            for item in value.get("composite") or ():
                if isinstance(item, str):
                    head = item.split(" ", 1)[0]
                    if head in scripts:
                        one(head, item[len(head):].strip())
                    else:
                        call.command(item, origin, home)
            if isinstance(value.get("call"), str):
                call.code(f"the Python callable {value['call']!r} of its script {script}")

    for script in (f"pre_{name}", str(name), f"post_{name}"):
        one(script, _args(rest) if script == name else "")


def _hatch(call: _Run, target: str | None, rest: list[str | None]) -> None:
    if _unknown_name(call, target):
        return
    env, _, name = str(target).rpartition(":")
    env = env or "default"
    scripts: dict[str, Any] = {}
    home = call.folder
    for file, keys in (("pyproject.toml", ("tool", "hatch", "envs", env, "scripts")),
                       ("hatch.toml", ("envs", env, "scripts"))):
        found = _document(call, (file,), "toml")
        if found is not None:
            scripts = {**_table(found[0], *keys), **scripts}
            home = found[1]
    if name not in scripts:
        return          # hatch run CMD: the command itself, read as an argument of hatch

    def one(script: str, args: str) -> None:
        value = scripts.get(script)
        if value is None or not _once(call, script):
            return
        for line, head in _lines(value, args):
            if head in scripts:
                one(head, line[len(head):].strip())
            else:
                call.command(line, f"the script {script} of the hatch environment {env}", home)

    one(name, _args(rest))


def _lines(value: Any, args: str) -> list[tuple[str, str]]:
    """A task given as a string or a list of strings: each line with its first word, the
    arguments given after the task's name appended to the last line."""
    lines = [value] if isinstance(value, str) else [v for v in value if isinstance(v, str)] \
        if isinstance(value, list) else []
    out = []
    for k, line in enumerate(lines):
        line = f"{line} {args}".strip() if k == len(lines) - 1 else line
        out.append((line, line.split(" ", 1)[0]))
    return out


def _filled(text: str) -> str:
    """A runner's templates (``{{.CLI_ARGS}}``, ``{staged_files}``) as run-time words."""
    out, k = [], 0
    while k < len(text):
        if text.startswith("{{", k) and "}}" in text[k:]:
            end = text.index("}}", k) + 2
            out.append(_FILLED)
            k = end
            continue
        if text[k] == "{" and "}" in text[k:]:
            end = text.index("}", k)
            word = text[k + 1:end]
            if word and (word.replace("_", "").isalpha() or word.isdigit()):
                out.append(_FILLED)
                k = end + 1
                continue
        out.append(text[k])
        k += 1
    return "".join(out)


def _task(call: _Run, words: list[str | None]) -> None:
    names: list[str | None] = []
    for word in words:
        if word == "--":
            break
        if word is None or (not word.startswith("-") and "=" not in word):
            names.append(word)
    if any(_unknown_name(call, n) for n in names):
        return
    found = _document(call, _TASKFILES, "yaml")
    if found is None:
        return
    data, home = found
    tasks = _table(data, "tasks")
    label = f"{call.base}'s Taskfile"

    def one(task: str) -> None:
        value = tasks.get(task)
        if value is None:
            if ":" in task and isinstance(data, dict) and data.get("includes"):
                call.an.unknown(call.seg, f"{call.base} runs {task}, a task of an included "
                                          "Taskfile")
            return
        if not _once(call, task):
            return
        items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        if isinstance(value, dict):
            deps = value.get("deps")
            for dep in deps if isinstance(deps, list) else ():
                name = dep if isinstance(dep, str) else dep.get("task") \
                    if isinstance(dep, dict) else None
                if isinstance(name, str):
                    one(name)
            cmds = value.get("cmds")
            items = [cmds] if isinstance(cmds, str) else list(cmds) if isinstance(cmds, list) \
                else []
            if isinstance(value.get("cmd"), str):
                items.append(value["cmd"])
        for item in items:
            if isinstance(item, dict):
                if isinstance(item.get("task"), str):
                    one(item["task"])
                    continue
                item = item.get("cmd") if isinstance(item.get("cmd"), str) else \
                    item.get("defer") if isinstance(item.get("defer"), str) else None
            if isinstance(item, str):
                call.command(_filled(item), f"the task {task} of {label}", home)

    for name in names or ["default"]:
        one(str(name))


def _lefthook(call: _Run, hook: str | None) -> None:
    if _unknown_name(call, hook):
        return
    found = _document(call, _LEFTHOOK, "yaml")
    local = _document(call, _LEFTHOOK_LOCAL, "yaml") if call.file is None else None
    if found is None and local is None:
        return
    home = (found or local or ({}, call.folder))[1]
    config = _table(found[0], str(hook)) if found is not None else {}
    if local is not None:
        config = {**config, **_table(local[0], str(hook))}
    call.seen.add(str(hook))
    origin = f"the {hook} hook of lefthook.yml"

    def job(item: Any) -> None:
        if not isinstance(item, dict):
            return
        if isinstance(item.get("run"), str):
            call.command(_filled(item["run"]), origin, home)
        if isinstance(item.get("script"), str):
            script(item["script"], item)
        group = item.get("group")
        if isinstance(group, dict):
            for inner in group.get("jobs") or ():
                job(inner)

    def script(name: str, spec: Any) -> None:
        runner = spec.get("runner") if isinstance(spec, dict) else None
        path = system.join(home, ".lefthook", str(hook), name)
        text = text_of(call.an, call.base, path, name, call.seg)
        if text is None:
            return
        from governance.shell.program import language_of

        words = str(runner or "").split()
        language = language_of(words[0].rsplit("/", 1)[-1]) if words else None
        call.command(text, f"the script {name} of the {hook} hook of lefthook.yml", home,
                     language)

    commands = config.get("commands")
    for item in (commands.values() if isinstance(commands, dict) else ()):
        job(item)
    for item in config.get("jobs") or ():
        job(item)
    scripts = config.get("scripts")
    for name, spec in (scripts.items() if isinstance(scripts, dict) else ()):
        script(str(name), spec)


def _pre_commit(call: _Run, named: list[str | None]) -> None:
    if named and _unknown_name(call, named[0]):
        return
    found = _document(call, (".pre-commit-config.yaml",), "yaml")
    if found is None:
        return
    data, home = found
    repos = data.get("repos") if isinstance(data, dict) else None
    for repo in repos if isinstance(repos, list) else ():
        if not isinstance(repo, dict) or repo.get("repo") != "local":
            continue
        for hook in repo.get("hooks") or ():
            if not isinstance(hook, dict) or not isinstance(hook.get("entry"), str):
                continue
            if named and named[0] not in (hook.get("id"), hook.get("alias")):
                continue
            if hook.get("language") == "fail" or not _once(call, str(hook.get("id"))):
                continue
            args = hook.get("args")
            text = " ".join([hook["entry"], *(quote(str(a)) for a in (
                args if isinstance(args, list) else ()))])
            if hook.get("pass_filenames") not in ("false", False):
                text += " " + _FILLED
            call.command(text, f"the local hook {hook.get('id')} of .pre-commit-config.yaml",
                         home)
