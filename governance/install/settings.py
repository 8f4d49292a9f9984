"""Our entries in a project's ``.claude/settings.json``: build, merge, find and remove them.

Merging keeps every other setting and hook, never writes a duplicate, and backs up the previous
file. Our handlers are recognised by the hook script they run (``hooks/pre_tool_use.py`` ...), so a
re-install replaces them in place instead of adding more.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
from typing import Any

from governance.errors import InstallError
from governance.policy.layer import HOOK_SERVER, HOOK_TOOL, HOOK_TOOL_NAME
from governance.project import governance_dir, package_root, temp_path

# event -> hook script; PostToolUseFailure shares the PostToolUse script.
EVENTS: dict[str, str] = {
    "PreToolUse": "pre_tool_use.py",
    "PostToolUse": "post_tool_use.py",
    "PostToolUseFailure": "post_tool_use.py",
}
OURS = re.compile(
    r"(?:hooks|hookscripts)/(pre_tool_use|post_tool_use|session_start|user_prompt_submit)\.py\b")
# our http handlers: the resident server's hook endpoints (``governance serve``)
OURS_URL = re.compile(r"^https?://[^/]+/hooks/(PreToolUse|PostToolUse|PostToolUseFailure|"
                      r"SessionStart|UserPromptSubmit)(?:\?|$)")
HOOK_TIMEOUT_S = 30
BACKUPS_DIR = "backups"   # in .claude/governance/: one backup of each file install rewrites
OLD_BACKUP = re.compile(r"^settings(?:\.local)?\.json\.bak-\d{8}-\d{6}(?:-\d+)?$")
TOKEN_ENV = "GOVERNANCE_SERVER_TOKEN"   # what http handlers put in their Authorization header
# What an mcp_tool handler passes (besides ``event``): every field of the events it serves, as
# Claude Code 2.1.330 sends them, each as ``${field}``; the tool of ``governance.server.mcp_hooks``
# takes these. SessionStart at start-up and on resume has no MCP server yet ("no MCP client
# context"): it stays a command hook.
MCP_FIELDS: tuple[str, ...] = (
    "session_id", "transcript_path", "cwd", "permission_mode", "prompt_id", "effort",
    "agent_id", "agent_type", "tool_name", "tool_input", "tool_use_id", "tool_response",
    "duration_ms", "error", "is_interrupt", "prompt", "mcp_server")
MCP_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit")
# Claude Code 2.1.330 skips an http SessionStart handler ("HTTP hooks are not supported for
# SessionStart"): the briefing stays a command hook.
HTTP_EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit")


def settings_path(project_dir: str) -> str:
    return os.path.join(project_dir, ".claude", "settings.json")


def hook_scripts_dir() -> str:
    """The hook scripts beside the package: the checkout's ``hooks/`` or the installed copy."""
    package = os.path.join(package_root(), "governance")
    checkout = os.path.join(package_root(), "hooks")
    if os.path.isfile(os.path.join(checkout, "pre_tool_use.py")):
        return checkout
    return os.path.join(package, "hookscripts")


def interpreter() -> str:
    """The absolute interpreter of this environment (a venv's own, never a PATH shim)."""
    return os.path.abspath(sys.executable)


def module_command(module: str, python: str | None = None) -> list[str]:
    """The argv that runs our ``module`` as a program, isolated from the folder it is started in:
    ``<python> -I hooks/launch.py MODULE`` (``-I``: no working folder, ``PYTHON*`` variables or
    user site on ``sys.path``; the launcher puts the package beside it first). Every process we
    register or start runs this way, never ``python -m``, which imports the working folder's
    ``governance/`` first."""
    return [python or interpreter(), "-I", os.path.join(hook_scripts_dir(), "launch.py"), module]


def hook_command(script: str, python: str | None = None, fail_closed: bool = False) -> str:
    path = os.path.join(hook_scripts_dir(), script)
    # -I: no user site, no PYTHON* variables; -S: no site-packages scan at start-up (the hot path
    # needs none of it; the cold path that compiles a changed config enables it itself).
    parts = [python or interpreter(), "-I", "-S", path]
    if fail_closed:
        parts += ["--on-error", "block"]
    return " ".join(shlex.quote(p) for p in parts)


def handler(script: str, python: str | None = None, fail_closed: bool = False) -> dict[str, Any]:
    entry: dict[str, Any] = {"type": "command",
                             "command": hook_command(script, python, fail_closed),
                             "timeout": HOOK_TIMEOUT_S}
    if fail_closed:
        entry["onFailure"] = "block"
    return entry


def http_handler(base_url: str, event: str, fail_closed: bool = False) -> dict[str, Any]:
    """A ``type: "http"`` handler on the resident server for ``event``: the bearer token comes
    from ``$GOVERNANCE_SERVER_TOKEN`` (listed in ``allowedEnvVars``, so Claude Code fills it in)."""
    url = f"{base_url.rstrip('/')}/hooks/{event}" + ("?on_error=block" if fail_closed else "")
    entry: dict[str, Any] = {"type": "http", "url": url,
                             "headers": {"Authorization": f"Bearer ${{{TOKEN_ENV}}}"},
                             "allowedEnvVars": [TOKEN_ENV], "timeout": HOOK_TIMEOUT_S}
    if fail_closed:
        entry["onFailure"] = "block"
    return entry


def mcp_tool_handler(event: str, fail_closed: bool = False) -> dict[str, Any]:
    """A ``type: "mcp_tool"`` handler for ``event`` on our ``governance-hooks`` MCP server: the
    hook input reaches the tool field by field (Claude Code passes only what ``input`` names)."""
    arguments: dict[str, Any] = {"event": "${hook_event_name}"}
    arguments.update((name, "${" + name + "}") for name in MCP_FIELDS)
    if fail_closed:
        arguments["on_error"] = "block"
    entry: dict[str, Any] = {"type": "mcp_tool", "server": HOOK_SERVER, "tool": HOOK_TOOL,
                             "input": arguments, "timeout": HOOK_TIMEOUT_S}
    if fail_closed:
        entry["onFailure"] = "block"
    return entry


def identity(entry: dict[str, Any]) -> dict[str, str]:
    """What names one of our handlers in the seal: its command, its url, or its MCP tool."""
    if entry.get("type") == "http":
        return {"url": str(entry.get("url", ""))}
    if entry.get("type") == "mcp_tool":
        return {"tool": f"mcp:{entry.get('server', '')}/{entry.get('tool', '')}"}
    return {"command": str(entry.get("command", ""))}


def load(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise InstallError(f"cannot read settings ({exc.strerror})", file=path) from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InstallError(f"settings are not valid JSON ({exc})", file=path,
                           fix="repair the file (it was left unchanged), then run the command "
                               "again") from None
    if not isinstance(data, dict):
        raise InstallError("settings are not a JSON object", file=path, fix="repair the file")
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        raise InstallError("the hooks key is not an object", file=path, key="hooks",
                           fix="repair the file")
    return data


def is_ours(entry: Any) -> bool:
    if not isinstance(entry, dict):
        return False
    if entry.get("type") == "http":
        return bool(OURS_URL.search(str(entry.get("url", ""))))
    if entry.get("type") == "mcp_tool":
        return entry.get("server") == HOOK_SERVER and entry.get("tool") == HOOK_TOOL
    return bool(OURS.search(str(entry.get("command", ""))))


def remove_ours(data: dict[str, Any], events: list[str] | None = None) -> int:
    """Drop our handlers (and groups left empty by that); returns how many were removed."""
    removed = 0
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return 0
    for event in list(hooks):
        if events is not None and event not in events:
            continue
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept_groups = []
        for group in groups:
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                kept_groups.append(group)
                continue
            kept = [h for h in group["hooks"] if not is_ours(h)]
            removed += len(group["hooks"]) - len(kept)
            if kept:
                kept_groups.append({**group, "hooks": kept})
        if kept_groups:
            hooks[event] = kept_groups
        else:
            del hooks[event]
    if not hooks:
        data.pop("hooks", None)
    return removed


def add_ours(data: dict[str, Any], entries: dict[str, list[dict[str, Any]]]) -> None:
    """Add ``{event: [handler, ...]}`` as one matcher group per event (matcher ``*``)."""
    hooks = data.setdefault("hooks", {})
    for event, handlers in entries.items():
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise InstallError(f"hooks.{event} is not a list", fix="repair the settings file")
        group: dict[str, Any] = {"hooks": handlers}
        if event in ("PreToolUse", "PostToolUse", "PostToolUseFailure"):
            group = {"matcher": "*", **group}
        groups.append(group)


def backup_path(path: str) -> str:
    """Where the one backup of a file install writes is kept: ``.claude/governance/backups/``
    (local, ignored by git), named after the file (``settings.json.bak``, ``mcp.json.bak``)."""
    folder = os.path.dirname(os.path.abspath(path))
    project = os.path.dirname(folder) if os.path.basename(folder) == ".claude" else folder
    return os.path.join(governance_dir(project), BACKUPS_DIR,
                        os.path.basename(path).lstrip(".") + ".bak")


def back_up(path: str) -> str | None:
    """Copy ``path`` over its one backup; returns the backup's path (None: no file to copy)."""
    if not os.path.exists(path):
        return None
    backup = backup_path(path)
    os.makedirs(os.path.dirname(backup), mode=0o700, exist_ok=True)
    shutil.copy2(path, backup)
    return backup


def tidy_old_backups(project_dir: str) -> list[str]:
    """Move the backups earlier versions left in ``.claude/`` (``settings.json.bak-<time>``) and
    the project folder (``.mcp.json.bak``) into ``.claude/governance/backups/``; returns their
    new paths."""
    claude = os.path.join(project_dir, ".claude")
    old = [os.path.join(claude, name) for name in sorted(os.listdir(claude))
           if OLD_BACKUP.match(name)] if os.path.isdir(claude) else []
    if os.path.isfile(os.path.join(project_dir, ".mcp.json.bak")):
        old.append(os.path.join(project_dir, ".mcp.json.bak"))
    moved = []
    for path in old:
        target = os.path.join(governance_dir(project_dir), BACKUPS_DIR,
                              os.path.basename(path).lstrip("."))
        os.makedirs(os.path.dirname(target), mode=0o700, exist_ok=True)
        os.replace(path, target)
        moved.append(target)
    return moved


def save(path: str, data: dict[str, Any]) -> str | None:
    """Write settings atomically; returns the backup's path when an old file existed (one
    backup per file, see ``backup_path``)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    backup = back_up(path)
    tmp = temp_path(path)
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2)
            fh.write("\n")
        os.replace(tmp, path)
    except OSError as exc:
        raise InstallError(f"cannot write settings ({exc.strerror})", file=path) from None
    return backup


def served_elsewhere(named: str) -> str | None:
    """For a name from ``our_commands``: how Claude Code reaches a handler that runs no command
    (``(http): URL``, ``(mcp_tool): server/tool``); None for a command handler."""
    if named.startswith(("http://", "https://")):
        return f"(http): {named}"
    if named.startswith("mcp:"):
        return f"(mcp_tool): {named.removeprefix('mcp:')}"
    return None


def our_commands(data: dict[str, Any]) -> dict[str, list[str]]:
    """event -> commands of our handlers registered in these settings (an http handler's url)."""
    found: dict[str, list[str]] = {}
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return found
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else []:
            for entry in group.get("hooks", []) if isinstance(group, dict) else []:
                if is_ours(entry):
                    found.setdefault(event, []).append(next(iter(identity(entry).values())))
    return found


def owned_expectations(data: dict[str, Any]) -> list[list[Any]]:
    """What governance owns among these settings' hooks, as the seal's expectations
    (``governance.hook.owned``): each of our handlers stays registered, and no settings file
    switches every hook off."""
    expect: list[list[Any]] = []
    hooks = data.get("hooks")
    through_mcp = False
    for event, groups in (hooks.items() if isinstance(hooks, dict) else []):
        for group in groups if isinstance(groups, list) else []:
            for entry in group.get("hooks", []) if isinstance(group, dict) else []:
                if is_ours(entry):
                    alone = {**{k: v for k, v in group.items() if k != "hooks"},
                             "hooks": [entry]}
                    expect.append(["hook", ["hooks", event], {**identity(entry), "group": alone}])
                    through_mcp = through_mcp or entry.get("type") == "mcp_tool"
    if through_mcp:  # the hooks' own tool stays hidden from the agent
        expect.append(["contains", ["permissions", "deny"], HOOK_TOOL_NAME])
    if expect:
        expect.append(["not", ["disableAllHooks"], True])
    return expect


def _listed(holder: dict[str, Any], key: str, item: str, present: bool, name: str) -> bool:
    """Put ``item`` into the list ``holder[key]`` or take it out (a list left empty goes);
    True when it changed. ``name`` is the key's dotted path, for the error."""
    items = holder.get(key)
    if items is None:
        items = []
    if not isinstance(items, list):
        raise InstallError(f"{name} is not a list", key=name, fix="repair the settings file")
    if present == (item in items):
        return False
    kept = [*items, item] if present else [other for other in items if other != item]
    if kept:
        holder[key] = kept
    else:
        holder.pop(key, None)
    return True


def hide_hook_tool(data: dict[str, Any], hide: bool) -> bool:
    """Put the hooks' MCP tool into ``permissions.deny`` (Claude Code then keeps it from the
    model; hooks still call it), or take it out; True when the settings changed."""
    permissions = data.get("permissions")
    if permissions is None and not hide:
        return False
    if not isinstance(permissions, dict):
        if permissions is not None:
            raise InstallError("the permissions key is not an object", key="permissions",
                               fix="repair the settings file")
        permissions = data["permissions"] = {}
    changed = _listed(permissions, "deny", HOOK_TOOL_NAME, hide, "permissions.deny")
    if changed and not permissions:
        data.pop("permissions", None)
    return changed


def local_settings_path(project_dir: str) -> str:
    """The user's own settings for the project (not committed): the server token and the
    approval of our MCP server live there."""
    return os.path.join(project_dir, ".claude", "settings.local.json")


def approve_hooks_server(data: dict[str, Any], approve: bool) -> bool:
    """List the hooks' MCP server in ``enabledMcpjsonServers`` (an interactive session then starts
    it without asking), or take it out; True when the settings changed."""
    return _listed(data, "enabledMcpjsonServers", HOOK_SERVER, approve, "enabledMcpjsonServers")


def forget_local(project_dir: str) -> str | None:
    """Take what install put into the local settings back out (the server token, the approval of
    the hooks' MCP server); returns the file's path when it changed."""
    path = local_settings_path(project_dir)
    data = load(path)
    changed = approve_hooks_server(data, False)
    env = data.get("env")
    if isinstance(env, dict) and TOKEN_ENV in env:
        del env[TOKEN_ENV]
        if not env:
            del data["env"]
        changed = True
    if not changed:
        return None
    if data:
        save(path, data)
    else:
        os.unlink(path)
    return path


def files_to_watch(project_dir: str) -> list[str]:
    """The settings files whose owned parts the seal guards: the project's file, its local
    override and the user's file (in that order: ``governance.hook.owned`` relies on it)."""
    home = os.path.expanduser("~")
    return [settings_path(project_dir),
            os.path.join(project_dir, ".claude", "settings.local.json"),
            os.path.join(home, ".claude", "settings.json")]
