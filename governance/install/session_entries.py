"""The optional session integration a project install adds to ``.claude/settings.json``.

- ``session_hook_entries``: SessionStart and UserPromptSubmit handlers (``hooks/session_start.py``,
  ``hooks/user_prompt_submit.py``) in the same form as the tool hooks, ready for
  ``settings.add_ours``.
- ``statusline_entry`` / ``merge_statusline``: our ``statusLine``, registered without clobbering
  a status line the user already has.
- ``slash_commands``: ``/cycle`` and ``/governance-state`` as ``.claude/commands/`` files that call
  the CLI through Claude Code's ``!`` command expansion (no tool call, so the model cannot use them
  to change its own state).
- ``check``: what ``governance doctor`` reports about all of the above.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Collection
from typing import Any

from governance.install import settings

SESSION_EVENTS: dict[str, str] = {
    "SessionStart": "session_start.py",
    "UserPromptSubmit": "user_prompt_submit.py",
}
STATUSLINE_MARK = "statusline"
COMMANDS_DIR = os.path.join(".claude", "commands")

CYCLE_COMMAND = """\
---
description: Set the governance cycle state, e.g. /cycle implementation-cycle/DO/WORK-064
argument-hint: CYCLE/PHASE/WORK-ID | PHASE
allowed-tools: Bash({governance} state set:*)
disable-model-invocation: true
---
!`{governance} state set $ARGUMENTS`

The user changed the governance cycle state with /cycle; the command's output is above. In two
lines, confirm the new state and what it blocks. Do not try to change the state yourself.
"""

STATE_COMMAND = """\
---
description: Show the governance cycle state and what is allowed, warned and blocked in it
allowed-tools: Bash({governance} state show:*)
---
!`{governance} state show`

Summarise the governance state above for the user in at most three lines: the state, what is
blocked, and how the user changes it (/cycle or `governance state set` in a terminal).
"""


def session_hook_entries(python: str | None = None) -> dict[str, list[dict[str, Any]]]:
    """``{event: [handler]}`` for SessionStart and UserPromptSubmit, for ``settings.add_ours``.

    Neither event gets ``onFailure: block``: a briefing that fails must never stop a session or
    erase a prompt.
    """
    return {event: [settings.handler(script, python)] for event, script in SESSION_EVENTS.items()}


def statusline_command(python: str | None = None) -> str:
    """The status-line command: the venv's interpreter running ``hooks/statusline.py`` (a console
    script would import ``re`` and the CLI first, and the status line must be as fast as a hook)."""
    return settings.hook_command("statusline.py", python)


def statusline_entry(python: str | None = None) -> dict[str, Any]:
    return {"type": "command", "command": statusline_command(python), "padding": 0}


def is_our_statusline(entry: Any) -> bool:
    command = str(entry.get("command", "")) if isinstance(entry, dict) else ""
    return ("governance statusline" in command or "governance.session.statusline" in command
            or "/statusline.py" in command)


def merge_statusline(data: dict[str, Any], entry: dict[str, Any],
                     replace: bool = False) -> tuple[bool, str]:
    """Put our ``statusLine`` into settings ``data``; returns (changed, what happened).

    A status line that is not ours is kept unless ``replace`` is set.
    """
    current = data.get("statusLine")
    if current == entry:
        return False, "The governance status line is already registered."
    if current is not None and not is_our_statusline(current) and not replace:
        command = current.get("command", "?") if isinstance(current, dict) else current
        return False, (f"Kept the existing status line ({command}). To show governance there, "
                       f"add the output of `{entry['command']}` to it, or install again with "
                       "--replace-statusline.")
    data["statusLine"] = entry
    return True, f"Registered the status line: {entry['command']}"


def remove_statusline(data: dict[str, Any]) -> bool:
    """Drop our ``statusLine`` (never someone else's); returns whether it was there."""
    if is_our_statusline(data.get("statusLine")):
        del data["statusLine"]
        return True
    return False


def cli_command(python: str | None = None) -> str:
    """The CLI as a slash command runs it: the interpreter by its absolute path, isolated
    (``settings.module_command``), so neither the project folder it runs in nor ``PYTHONPATH``
    can put another ``governance`` in its place, and the venv need not be on PATH."""
    return shlex.join(settings.module_command("governance.commands", python))


def slash_commands(python: str | None = None, governance: str | None = None) -> dict[str, str]:
    """``{file name: text}`` of the slash commands for ``<project>/.claude/commands/``.

    The CLI is ``cli_command(python)``, or the executable ``governance`` (the plugin's commands:
    ``governance`` from PATH, as the plugin cannot know where the tool is installed).
    """
    quoted = shlex.quote(governance) if governance else cli_command(python)
    return {
        "cycle.md": CYCLE_COMMAND.format(governance=quoted),
        "governance-state.md": STATE_COMMAND.format(governance=quoted),
    }


def write_slash_commands(project: str, python: str | None = None) -> list[str]:
    """Write the slash commands into the project; returns the paths written."""
    folder = os.path.join(project, COMMANDS_DIR)
    os.makedirs(folder, exist_ok=True)
    written = []
    for name, text in slash_commands(python).items():
        path = os.path.join(folder, name)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        written.append(path)
    return written


def check(project: str, data: dict[str, Any], broken: Collection[str] = ()
          ) -> list[tuple[bool, str, str]]:
    """``(ok, what, fix)`` lines for ``governance doctor`` about the session integration: what is
    registered and what is not (optional). Registrations named in ``broken`` (the ``where`` of
    ``registration.broken``, which doctor reports with their fix) get no line here."""
    lines: list[tuple[bool, str, str]] = []
    registered = settings.our_commands(data)
    for event, script in SESSION_EVENTS.items():
        commands = registered.get(event, [])
        if not commands:
            lines.append((False, f"{event} hook is not registered (no session briefing)",
                          "governance install --session-hooks"))
            continue
        if f"{event} hook" in broken:
            continue
        elsewhere = settings.served_elsewhere(commands[0])
        lines.append((True, f"{event} hook registered {elsewhere}" if elsewhere is not None
                      else f"{event} hook registered ({script})", ""))
    status = data.get("statusLine")
    if status is None:
        lines.append((False, "no status line is registered", "governance install --statusline"))
    elif not is_our_statusline(status):
        lines.append((True, "a status line of another tool is registered (kept as it is)", ""))
    elif "status line" not in broken:
        lines.append((True, f"status line registered ({status['command']})", ""))
    for name in slash_commands(None):
        path = os.path.join(project, COMMANDS_DIR, name)
        if f"slash command /{name[:-3]}" in broken:
            continue
        if os.path.isfile(path):
            lines.append((True, f"slash command /{name[:-3]} present", ""))
        else:
            lines.append((False, f"slash command /{name[:-3]} is missing",
                          "governance install --slash-commands"))
    return lines
