"""Task runners whose tasks are code in a file: ``nox`` (noxfile.py), ``invoke`` (tasks.py),
``tox`` (tox.ini), ``rake`` (Rakefile), ``gradle`` (build.gradle), ``cmake -P FILE``.

Imported by ``shell.resolver`` when one runs in a folder the analysis may read (the
``shell.task_files`` table names each runner's files and the options that name another). A file
the command wrote before running it is shell-unknown: its code decides what runs, and it is not
on disk to read. A file on disk is read for the commands it names: ``commands =`` lines of an
ini file, ``COMMAND ...`` of CMake, and string literals (one, or several in one call:
``session.run("git", "push")``) that begin with a program governance knows. Other code in them
is not read; the runner itself is judged by its own entry.
"""

from __future__ import annotations

from governance import system
from governance.shell.source import path_of, run_text, text_of, written

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from governance.shell.walk import Walk

_MAX_COMMANDS = 64


def run(an: Walk, spec: dict[str, Any], base: str, fields: list[str | None], seg: str,
        depth: int) -> None:
    folder = path_of(an, ".")
    if folder is None:
        return
    names: list[str | None] = []
    tasks: list[str | None] = []
    options, selects = spec.get("options", ()), spec.get("tasks", ())
    k = 1
    while k < len(fields):
        arg = fields[k]
        option, eq, value = (arg or "").partition("=")
        if arg in options or arg in selects:
            (names if arg in options else tasks).append(fields[k + 1] if k + 1 < len(fields)
                                                        else "")
            k += 2
            continue
        if eq and (option in options or option in selects):
            (names if option in options else tasks).append(value)
        elif (arg is None or not arg.startswith("-")) and spec.get("positional") and (
                arg is None or "=" not in arg):
            tasks.append(arg)
        k += 1
    if not names and spec.get("options_only"):
        return
    for name in names or spec.get("files", ()):
        if name is None:
            an.unknown(seg, f"{base} runs tasks from a file named only at run time")
            continue
        path = system.join(folder, system.expanduser(name))
        if written(an, path) is not None:
            an.unknown(seg, f"{base} runs the code of {name}, written earlier in this command")
            continue
        if not system.isfile(path):
            continue
        text = text_of(an, base, path, name, seg)
        if text is None:
            continue
        if None in tasks:
            an.unknown(seg, f"{base} runs a task named only at run time")
        fallback = spec.get("fallback") or ""
        chosen = [block(text, t) or block(text, fallback) for t in tasks or [
            spec.get("default") or ""] if t]
        text = "\n".join(b for b in chosen if b is not None) if chosen and all(
            b is not None for b in chosen) else text
        for line in commands(an.shell, text)[:_MAX_COMMANDS]:
            run_text(an, line, None, f"{name}, run by {base}", seg, depth, folder)


def block(text: str, task: str) -> str | None:
    """The lines that define ``task`` (``def task(``, ``task :task``, ``[testenv:task]``,
    ``register("task")`` ...): from its line to the next line indented no deeper that starts
    something else; None when no line defines it (the whole file is read then)."""
    if not task:
        return None
    lines = text.splitlines()
    for k, line in enumerate(lines):
        stripped = line.strip()
        marks = (f"def {task}(", f"task :{task}", f"task {task}", f"[testenv:{task}]",
                 f"[{task}]", f'"{task}"', f"'{task}'")
        if not any(stripped.startswith(m) or (m[0] in "\"'" and m in stripped and (
                "task" in stripped or "register" in stripped)) for m in marks):
            continue
        indent = len(line) - len(line.lstrip())
        end = k + 1
        while end < len(lines):
            nxt = lines[end]
            if nxt.strip() and len(nxt) - len(nxt.lstrip()) <= indent and \
                    not nxt.strip().startswith(("end", "}", ")", "#")) and \
                    not (stripped.startswith("[") and not nxt.strip().startswith("[")):
                break
            end += 1
        return "\n".join(lines[k:end])
    return None


def commands(shell: dict[str, Any], text: str) -> list[str]:
    """The command lines a task file names (see the module's docstring)."""
    from governance.shell.rules import known_name

    found: list[str] = []
    lines = text.splitlines()
    ini = False
    for line in lines:
        stripped = line.strip()
        key = stripped.split("=", 1)[0].strip()
        if key == "commands" and "=" in stripped:        # tox.ini: commands = ...
            ini = True
            stripped = stripped.split("=", 1)[1].strip()
        elif ini and not line[:1].isspace():
            ini = False
        if ini and stripped and not stripped.startswith(("#", "[")):
            found.append(stripped)
        if "COMMAND " in stripped:                         # CMake: COMMAND prog args )
            found.append(stripped.split("COMMAND ", 1)[1].split(")", 1)[0])
        for words in _calls(stripped):
            if words and known_name(shell, words[0].split()[0] if words[0].split() else ""):
                found.append(" ".join(words))
    return found


def _calls(line: str) -> list[list[str]]:
    """Runs of string literals in a line, each run one call's arguments: ``run("git", "push")``
    -> ``["git", "push"]``; ``sh "git push"`` -> ``["git push"]``."""
    out: list[list[str]] = []
    current: list[str] = []
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c in "'\"":
            end = line.find(c, i + 1)
            if end < 0:
                break
            current.append(line[i + 1:end])
            i = end + 1
            continue
        if c not in " ,\t" and current:
            out.append(current)
            current = []
        i += 1
    if current:
        out.append(current)
    return out
