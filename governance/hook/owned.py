"""What governance owns in Claude Code's settings files, checked on every PreToolUse call and put
back when something else took it away.

The seal's ``settings`` part lists expectations ``[op, path, value]`` over three files: the
project's ``.claude/settings.json`` (the file install writes), ``settings.local.json`` (which
overrides it) and the user's ``~/.claude/settings.json``:

- ``equals``: the key holds ``value`` in the settings file, and the local file does not say
  otherwise (``sandbox.enabled: true``);
- ``contains``: the list at the key holds ``value`` (a ``denyWrite`` path, the ``*`` of
  ``deniedDomains``);
- ``hook``: a handler with ``value["command"]`` (an http handler: ``value["url"]``; an mcp_tool
  handler: ``value["tool"]``, ``mcp:server/tool``) is registered for the event ``path[1]``;
- ``not``: no file sets the key to ``value`` (``disableAllHooks: true`` would switch every hook
  off);
- ``within``: the list at the key, in the settings file and the local file, holds nothing
  beyond ``value`` (the sandbox's ``allowedDomains``: a host added there would open the network
  a state closes, where ``strictAllowlist`` is on). The user's own file is theirs.

Hot path: the files' stat signature is looked up in a memo first (``seal.settings_unchanged``,
which the hook asks before it imports this module; the memo is bound to the seal like every
derived file); only a changed file is parsed (``jsoncodec``). Repair (``json``, cold) merges the owned
items back and leaves everything else as it was; a file that is not valid JSON is reported, never
rewritten (the user may be in the middle of editing it).
"""

from __future__ import annotations

from governance import jsoncodec
from governance.policy.seal import recall_derived, settings_memo
from governance.project import read_bytes, replace_file

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MISSING = object()


def _load(path: str) -> dict[str, Any] | None:
    """The file's settings; {} when absent; None when it is not a JSON object."""
    try:
        data = jsoncodec.loads(read_bytes(path).decode("utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _get(data: Any, path: list[str]) -> Any:
    for key in path:
        if not isinstance(data, dict) or key not in data:
            return MISSING
        data = data[key]
    return data


def _names(handler: dict[str, Any], key: str) -> Any:
    if key == "tool":
        return f"mcp:{handler.get('server')}/{handler.get('tool')}" \
            if handler.get("type") == "mcp_tool" else None
    return handler.get(key)


def _has_hook(data: dict[str, Any], event: str, value: dict[str, Any]) -> bool:
    key = next((k for k in ("command", "url", "tool") if k in value), "command")
    groups = _get(data, ["hooks", event])
    for group in groups if isinstance(groups, list) else []:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        for handler in handlers if isinstance(handlers, list) else []:
            if isinstance(handler, dict) and _names(handler, key) == value[key]:
                return True
    return False


def _managed_hook(event: str, value: dict[str, Any]) -> bool:
    """Whether Claude Code's managed settings run this hook (``install --managed``): then the
    project's copy is not needed, and putting it back would decide every call twice."""
    from governance.project import managed_settings_path

    data = _load(managed_settings_path())
    return data is not None and _has_hook(data, event, value)


def problems(entry: dict[str, Any], loaded: list[dict[str, Any] | None]) -> list[tuple[int, str]]:
    """(file index, what is wrong) for every expectation the files no longer meet."""
    files = entry["files"]
    found: list[tuple[int, str]] = []
    for index, data in enumerate(loaded):
        if data is None:
            found.append((index, f"{files[index]} is not a valid JSON object"))
    main = loaded[0]
    for op, path, value in entry["expect"]:
        dotted = ".".join(path)
        if op == "equals":
            if main is not None and _get(main, path) != value:
                found.append((0, f"{dotted} is no longer {jsoncodec.dumps(value)}"))
            for index, data in enumerate(loaded[1:2], 1):
                there = _get(data, path) if data is not None else MISSING
                if there is not MISSING and there != value:
                    found.append((index, f"{files[index]} overrides {dotted} with "
                                         f"{jsoncodec.dumps(there)}"))
        elif op == "contains":
            items = _get(main, path) if main is not None else MISSING
            if main is not None and (not isinstance(items, list) or value not in items):
                found.append((0, f"{dotted} no longer lists {jsoncodec.dumps(value)}"))
        elif op == "hook":
            if main is not None and not _has_hook(main, path[1], value) \
                    and not _managed_hook(path[1], value):
                found.append((0, f"the governance hook for {path[1]} was removed"))
        elif op == "not":
            for index, data in enumerate(loaded):
                if data is not None and _get(data, path) == value:
                    found.append((index, f"{files[index]} sets {dotted} to "
                                         f"{jsoncodec.dumps(value)}"))
        elif op == "within":
            for index, data in enumerate(loaded[:2]):
                items = _get(data, path) if data is not None else MISSING
                extra = [i for i in items if i not in value] if isinstance(items, list) else []
                if extra:
                    found.append((index, f"{files[index]} adds {jsoncodec.dumps(extra)} to "
                                         f"{dotted}"))
    return found


def check(project_dir: str, entry: dict[str, Any] | None) -> list[tuple[int, str]]:
    """What no longer matches the owned settings; [] when all is as accepted (or nothing is
    owned)."""
    if not entry or not isinstance(entry.get("files"), list) or not entry.get("expect"):
        return []
    name, key = settings_memo(entry)
    if recall_derived(project_dir, name, key) is True:
        return []
    found = problems(entry, [_load(str(path)) for path in entry["files"]])
    if not found:
        from governance.policy import derived

        derived.remember(project_dir, name, key, True)
    return found


def _set(data: dict[str, Any], path: list[str], value: Any) -> None:
    node = data
    for key in path[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            child = node[key] = {}
        node = child
    node[path[-1]] = value


def _delete(data: dict[str, Any], path: list[str]) -> None:
    parent = _get(data, path[:-1]) if len(path) > 1 else data
    if isinstance(parent, dict):
        parent.pop(path[-1], None)


def repair(entry: dict[str, Any]) -> list[str]:
    """Put the owned items back into every file that lost them; returns the files rewritten. A file
    that is not a JSON object is left alone."""
    import json

    files = [str(f) for f in entry["files"]]
    written: list[str] = []
    for index, path in enumerate(files):
        data = _load(path)
        if data is None:
            continue
        before = json.dumps(data, sort_keys=True)
        for op, key_path, value in entry["expect"]:
            there = _get(data, key_path)
            if op == "equals" and there != value and (index == 0 or (
                    index == 1 and there is not MISSING)):
                _set(data, key_path, value)
            elif op == "contains" and index == 0:
                if not isinstance(there, list):
                    _set(data, key_path, [value])
                elif value not in there:
                    there.append(value)
            elif op == "hook" and index == 0 and not _has_hook(data, key_path[1], value) \
                    and not _managed_hook(key_path[1], value):
                hooks = data.get("hooks")
                if not isinstance(hooks, dict):
                    hooks = data["hooks"] = {}
                groups = hooks.get(key_path[1])
                if not isinstance(groups, list):
                    groups = hooks[key_path[1]] = []
                groups.append(value["group"])
            elif op == "not" and there == value:
                _delete(data, key_path)
            elif op == "within" and index < 2 and isinstance(there, list):
                there[:] = [item for item in there if item in value]
        if json.dumps(data, sort_keys=True) == before:
            continue
        try:
            replace_file(path, (json.dumps(data, indent=2) + "\n").encode(), mode=0o644)
        except OSError:
            continue
        written.append(path)
    return written
