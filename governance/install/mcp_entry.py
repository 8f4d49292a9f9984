"""Register or remove our MCP servers in a project's ``.mcp.json``.

Two servers, each a stdio server started as ``<python> -I hooks/launch.py MODULE --project
<project>`` (isolated: Claude Code starts it in the project folder, whose files must never be
imported in place of ours; see ``settings.module_command``):
``mcpServers.governance`` (``governance.decisions.mcp_server``: the decision tools, ``install
--mcp``) and ``mcpServers.governance-hooks`` (``governance.server.mcp_hooks``: the tool
``mcp_tool`` hooks call, ``install --mcp-hooks``). Other servers are kept as they are; a changed
file is first copied to ``.claude/governance/backups/mcp.json.bak``; an older entry of ours for
the same module under another name is replaced, so there is never more than one of each.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection
from typing import Any

from governance.errors import InstallError
from governance.install.settings import back_up, module_command
from governance.policy.layer import HOOK_SERVER
from governance.project import temp_path

SERVER_NAME = "governance"
MODULE = "governance.decisions.mcp_server"
HOOKS_MODULE = "governance.server.mcp_hooks"
SERVERS = {SERVER_NAME: MODULE, HOOK_SERVER: HOOKS_MODULE}
# Where earlier versions had the server: entries that start it there are ours too, and
# ``governance install --mcp`` rewrites them (``governance doctor`` names them).
OLD_MODULES = ("governance.mcp_server",)
FILE_NAME = ".mcp.json"


def mcp_json_path(project_dir: str) -> str:
    return os.path.join(project_dir, FILE_NAME)


def server_entry(project_dir: str, python: str, name: str = SERVER_NAME) -> dict[str, Any]:
    command, *args = module_command(SERVERS[name], python)
    return {"type": "stdio", "command": command, "args": [*args, "--project", project_dir],
            "env": {}}


def _module_of(entry: Any) -> str | None:
    """The module an entry of ours starts, or None for somebody else's server."""
    if not isinstance(entry, dict):
        return None
    args = [str(arg) for arg in entry.get("args") or []]
    return next((arg for arg in args if arg in SERVERS.values() or arg in OLD_MODULES), None)


def is_ours(entry: Any, name: str | None = None) -> bool:
    """Ours (``name``: ours and the server ``name``, or an older entry of it)."""
    module = _module_of(entry)
    if module is None or name is None:
        return module is not None
    return module == SERVERS[name] or (name == SERVER_NAME and module in OLD_MODULES)


def _load(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise InstallError(f"cannot read the file ({exc.strerror}).", file=path,
                           fix="check its permissions.") from None
    try:
        data = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        raise InstallError(f"is not valid JSON ({exc}).", file=path,
                           fix="correct the JSON (or move the file away) and install again."
                           ) from None
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers", {}), dict):
        raise InstallError("expected an object whose mcpServers is an object.", file=path,
                           key="mcpServers", fix="correct the file and install again.")
    return data


def _save(path: str, data: dict[str, Any] | None) -> None:
    back_up(path)
    if data is None:
        os.unlink(path)
        return
    temp = temp_path(path)
    try:
        with open(temp, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(data, indent=2) + "\n")
        os.replace(temp, path)
    except OSError as exc:
        raise InstallError(f"cannot write the file ({exc.strerror}).", file=path,
                           fix="check that the project folder is writable.") from None


def load_servers(project_dir: str) -> dict[str, Any]:
    """``mcpServers`` of the project's ``.mcp.json`` ({} when there is none)."""
    return dict(_load(mcp_json_path(project_dir)).get("mcpServers") or {})


def install_mcp(project_dir: str, python: str, name: str = SERVER_NAME) -> str:
    """Add (or update) our server ``name`` in ``<project>/.mcp.json``; return the file's path."""
    path = mcp_json_path(project_dir)
    data = _load(path)
    servers: dict[str, Any] = dict(data.get("mcpServers") or {})
    wanted = server_entry(os.path.realpath(project_dir), python, name)
    kept = {other: entry for other, entry in servers.items()
            if other != name and not is_ours(entry, name)}
    kept[name] = wanted
    if servers == kept and os.path.exists(path):
        return path  # already installed as wanted: leave the file (and its backup) alone
    _save(path, {**data, "mcpServers": kept})
    return path


def uninstall_mcp(project_dir: str, name: str | None = None) -> bool:
    """Remove our servers (``name``: that one only) from ``<project>/.mcp.json``; False when
    none was there. A file left with no server and no other setting is deleted."""
    path = mcp_json_path(project_dir)
    data = _load(path)
    servers: dict[str, Any] = dict(data.get("mcpServers") or {})
    names = list(SERVERS) if name is None else [name]
    kept = {other: entry for other, entry in servers.items()
            if other not in names and not any(is_ours(entry, n) for n in names)}
    if kept == servers:
        return False
    rest = {key: value for key, value in data.items() if key != "mcpServers"}
    _save(path, {**rest, "mcpServers": kept} if kept or rest else None)
    return True


def check(project_dir: str, broken: Collection[str] = ()) -> list[tuple[bool, str, str]]:
    """``(ok, what, fix)`` lines for ``governance doctor`` about our MCP server registration (a
    server named in ``broken``, which doctor reports with its fix, gets no line here)."""
    path = mcp_json_path(project_dir)
    try:
        data = _load(path)
    except InstallError as exc:
        return [(False, exc.render(), "repair the JSON, then run: governance install --mcp")]
    ours = {name: module for name, entry in (data.get("mcpServers") or {}).items()
            if (module := _module_of(entry)) is not None}
    if not ours:
        return [(True, "no governance MCP server registered (optional: governance install --mcp)",
                 "")]
    lines: list[tuple[bool, str, str]] = []
    for name, module in ours.items():
        if module in OLD_MODULES:
            lines.append((False, f"MCP server {name!r} in {path} starts {module}, which moved to "
                                 f"{MODULE}: Claude Code cannot start it",
                          f"run: governance install --mcp --project {project_dir}"))
        elif f"MCP server {name!r} in {FILE_NAME}" not in broken:
            lines.append((True, f"MCP server {name!r} registered ({module})", ""))
    return lines
