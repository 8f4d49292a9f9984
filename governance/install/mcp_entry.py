"""Register or remove our MCP server in a project's ``.mcp.json``.

The entry is ``mcpServers.governance``: a stdio server started as
``<python> -m governance.decisions.mcp_server --project <project>``. Other servers are kept as they are; a
changed file is first copied to ``.mcp.json.bak``; an older entry of ours under another name is
replaced, so there is never more than one.
"""

from __future__ import annotations

import json
import os
import shutil
from typing import Any

from governance.errors import InstallError
from governance.project import temp_path

SERVER_NAME = "governance"
MODULE = "governance.decisions.mcp_server"
# Where earlier versions had the server: entries that start it there are ours too, and
# ``governance install --mcp`` rewrites them (``governance doctor`` names them).
OLD_MODULES = ("governance.mcp_server",)
FILE_NAME = ".mcp.json"


def mcp_json_path(project_dir: str) -> str:
    return os.path.join(project_dir, FILE_NAME)


def server_entry(project_dir: str, python: str) -> dict[str, Any]:
    return {"type": "stdio", "command": python,
            "args": ["-m", MODULE, "--project", project_dir], "env": {}}


def _module_of(entry: Any) -> str | None:
    """The ``-m`` module an entry of ours starts, or None for somebody else's server."""
    if not isinstance(entry, dict):
        return None
    args = [str(arg) for arg in entry.get("args") or []]
    return next((arg for arg in args if arg == MODULE or arg in OLD_MODULES), None)


def _is_ours(entry: Any) -> bool:
    return _module_of(entry) is not None


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
    if os.path.exists(path):
        shutil.copy2(path, path + ".bak")
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


def install_mcp(project_dir: str, python: str) -> str:
    """Add (or update) our server in ``<project>/.mcp.json``; return the file's path."""
    path = mcp_json_path(project_dir)
    data = _load(path)
    servers: dict[str, Any] = dict(data.get("mcpServers") or {})
    wanted = server_entry(os.path.realpath(project_dir), python)
    kept = {name: entry for name, entry in servers.items()
            if name != SERVER_NAME and not _is_ours(entry)}
    kept[SERVER_NAME] = wanted
    if servers == kept and os.path.exists(path):
        return path  # already installed as wanted: leave the file (and its backup) alone
    _save(path, {**data, "mcpServers": kept})
    return path


def uninstall_mcp(project_dir: str) -> bool:
    """Remove our server from ``<project>/.mcp.json``; False when it was not there. A file left
    with no server and no other setting is deleted."""
    path = mcp_json_path(project_dir)
    data = _load(path)
    servers: dict[str, Any] = dict(data.get("mcpServers") or {})
    kept = {name: entry for name, entry in servers.items()
            if name != SERVER_NAME and not _is_ours(entry)}
    if kept == servers:
        return False
    rest = {key: value for key, value in data.items() if key != "mcpServers"}
    _save(path, {**rest, "mcpServers": kept} if kept or rest else None)
    return True


def check(project_dir: str) -> list[tuple[bool, str, str]]:
    """``(ok, what, fix)`` lines for ``governance doctor`` about our MCP server registration."""
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
        else:
            lines.append((True, f"MCP server {name!r} registered ({MODULE})", ""))
    return lines
