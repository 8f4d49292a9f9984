"""Our registrations in a project, as install left them: the options they were made with, and
those that point at an interpreter or script that is gone.

Install writes the absolute path of its interpreter (and of the hook scripts beside the package)
into every command it registers: the hooks and the status line in ``.claude/settings.json``, the
MCP servers in ``.mcp.json``, the slash commands in ``.claude/commands/``. When the tool moves
(uninstalled, reinstalled elsewhere), those paths are gone and Claude Code gets exit 127, which
silently disables the hook. ``broken`` names each one for ``governance doctor``;
``installed_options`` tells ``governance install --repair`` how to write them all again for the
current interpreter, with the transport and options the project already chose.
"""

from __future__ import annotations

import os
import shlex
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from governance.errors import InstallError
from governance.install import mcp_entry, session_entries, settings


class Exposed(NamedTuple):
    """One registration that starts python without ``-I``: the project's files (a
    ``governance/`` folder, ``sitecustomize.py``) or ``PYTHONPATH`` could run in place of ours."""

    where: str
    command: str


class Broken(NamedTuple):
    """One registration that cannot run: where it is, its command, and the path that is gone."""

    where: str
    command: str
    missing: str


def _gone(argv: list[str]) -> str | None:
    """The first absolute path of a command (its program, a script) that does not exist, or a
    program that is not executable."""
    for arg in argv:
        if arg.startswith("/") and not os.path.exists(arg):
            return arg
    if argv and argv[0].startswith("/") and not os.access(argv[0], os.X_OK):
        return argv[0]
    return None


def _argv(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:
        return []


def _handlers(data: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(event, handler) for each of our handlers in the settings."""
    found = []
    hooks = data.get("hooks")
    for event, groups in (hooks.items() if isinstance(hooks, dict) else []):
        for group in groups if isinstance(groups, list) else []:
            for entry in group.get("hooks", []) if isinstance(group, dict) else []:
                if settings.is_ours(entry):
                    found.append((event, entry))
    return found


def _registered(project: str, data: dict[str, Any]) -> list[tuple[str, list[str]]]:
    """(where, argv) of every process registration of ours: the command hooks, the status line,
    the MCP servers and the slash commands (the words before ``state``)."""
    found = [(f"{event} hook", _argv(str(entry.get("command", ""))))
             for event, entry in _handlers(data) if entry.get("type", "command") == "command"]
    status = data.get("statusLine")
    if isinstance(status, dict) and session_entries.is_our_statusline(status):
        found.append(("status line", _argv(str(status.get("command", "")))))
    try:
        servers = mcp_entry.load_servers(project)
    except InstallError:
        servers = {}   # doctor reports the file itself
    for name, entry in servers.items():
        if isinstance(entry, dict) and mcp_entry.is_ours(entry):
            found.append((f"MCP server {name!r} in .mcp.json",
                          [str(entry.get("command", "")), *map(str, entry.get("args") or [])]))
    found += [(f"slash command /{name[:-3]}", words)
              for name, words in _slash_commands(project).items()]
    return found


def broken(project: str, data: dict[str, Any]) -> list[Broken]:
    """Every registration of ours (``data``: the project's settings) that cannot run."""
    found = []
    for where, argv in _registered(project, data):
        # an MCP server's arguments end with the project; its program and script must exist
        program = [arg for i, arg in enumerate(argv) if i == 0 or arg.endswith(".py")]
        if (missing := _gone(program)) is not None:
            found.append(Broken(where, shlex.join(argv), missing))
    return found


def _isolated(argv: list[str]) -> bool:
    """Whether ``argv`` starts python with ``-I`` (among the options before its script or
    module). A one-word command is the ``governance`` console script, which does not."""
    options = []
    for arg in argv[1:]:
        if not arg.startswith("-"):
            break
        options.append(arg)
    return "-I" in options


def exposed(project: str, data: dict[str, Any]) -> list[Exposed]:
    """Every registration of ours that starts python without ``-I`` (written by an earlier
    version): Claude Code starts it in the project folder with its own environment, so a
    ``governance/`` folder, a ``sitecustomize.py`` or ``PYTHONPATH`` there runs outside the
    sandbox. ``governance install --repair`` writes them isolated."""
    return [Exposed(where, shlex.join(argv)) for where, argv in _registered(project, data)
            if argv and not _isolated(argv)]


def _slash_commands(project: str) -> dict[str, list[str]]:
    """Our slash command files in the project -> the command (its words) each runs the CLI
    with: the isolated interpreter, or the ``governance`` executable earlier versions wrote."""
    found = {}
    for name in session_entries.slash_commands(None, "GOVERNANCE"):
        path = os.path.join(project, session_entries.COMMANDS_DIR, name)
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except OSError:
            continue
        for line in text.splitlines():
            if line.startswith("!`"):
                words = _argv(line[2:].rstrip("`"))
                if "state" in words[1:]:
                    found[name] = words[:words.index("state", 1)]
    return found


def installed_options(project: str, data: dict[str, Any]) -> dict[str, Any]:
    """How the project was installed, read from what install wrote: the transport (``http`` with
    its ``port``, ``mcp_hooks``, else command hooks), ``fail_closed``, ``session_hooks``,
    ``statusline``, ``slash_commands``, ``mcp`` and ``sandbox``. Raises InstallError when no
    hook of ours is registered (nothing to repair)."""
    handlers = _handlers(data)
    pre = next((entry for event, entry in handlers if event == "PreToolUse"), None)
    if pre is None:
        raise InstallError(f"governance's hooks are not registered in "
                           f"{settings.settings_path(project)}, so there is nothing to repair",
                           fix=f"install them: governance install --project {project}")
    kind = pre.get("type", "command")
    port = None
    if kind == "http":
        port = urlsplit(str(pre.get("url", ""))).port
    fail_closed = (pre.get("onFailure") == "block"
                   or "--on-error" in _argv(str(pre.get("command", "")))
                   or "on_error=block" in str(pre.get("url", ""))
                   or (isinstance(pre.get("input"), dict) and pre["input"].get("on_error") == "block"))
    try:
        servers = mcp_entry.load_servers(project)
    except InstallError:
        servers = {}
    from governance.project import sandbox_manifest_path

    return {"http": kind == "http", "port": port, "mcp_hooks": kind == "mcp_tool",
            "fail_closed": fail_closed,
            "session_hooks": any(event in session_entries.SESSION_EVENTS for event, _ in handlers),
            "statusline": session_entries.is_our_statusline(data.get("statusLine")),
            "slash_commands": bool(_slash_commands(project)),
            "mcp": mcp_entry.SERVER_NAME in servers
                   and mcp_entry.is_ours(servers[mcp_entry.SERVER_NAME], mcp_entry.SERVER_NAME),
            "sandbox": os.path.isfile(sandbox_manifest_path(project))}


def readable(project: str) -> None:
    """Raise InstallError when a file install or uninstall would change cannot be read (settings
    or local settings that are not a JSON object, a broken ``.mcp.json``), before any is written:
    such a file stops the command whole, never half-way."""
    settings.load(settings.settings_path(project))
    settings.load(settings.local_settings_path(project))
    mcp_entry.load_servers(project)
