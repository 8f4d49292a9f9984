"""What a tool call names: its words, paths, hosts, ports and MCP server, and the names the
detectors find in them (project, service, fleet, technology).

Hot path: imports only ``os`` (and ``policy.wildcard`` for a host or path glob). A Bash call's
words come from the shell analysis' acts (each simple command's text), not from the raw string.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

PATH_KEYS = ("file_path", "notebook_path", "path")
REMOTE = ("ssh", "scp", "rsync", "sftp", "mosh")
_SSH_VALUES = frozenset("-" + c for c in "bcDEeFIiJLlmOopQRSWw")   # ssh options with a value
_STRIP = "'\"`()[]{};,<>|&"
COMMAND_WORDS = 4   # a command's words that say what it does (docker compose down SERVICE)


class Context:
    """The call's words and what the detectors made of them (``names``: kind -> names)."""

    __slots__ = ("commands", "hosts", "names", "paths", "ports", "tool", "words")

    def __init__(self) -> None:
        self.tool = ""
        self.words: set[str] = set()
        self.commands: list[str] = []     # each command's first words: program, subcommands
        self.paths: list[str] = []
        self.hosts: set[str] = set()
        self.ports: set[str] = set()
        self.names: dict[str, set[str]] = {}

    def all_names(self) -> set[str]:
        return {n for names in self.names.values() for n in names}

    def found(self, kind: str, name: str, why: str, why_map: dict[str, str] | None) -> None:
        self.names.setdefault(kind, set()).add(name)
        if why_map is not None:
            why_map.setdefault(f"{kind} {name}", why)


def of_call(project: str, tool: str, tool_input: dict[str, Any], cwd: str | None,
            acts: list[dict[str, Any]], detectors: list[dict[str, Any]],
            why: dict[str, str] | None = None) -> Context:
    """The context of one call; ``why`` (when given) gets which word made each name."""
    ctx = Context()
    ctx.tool = tool
    lowered = tool.lower()
    ctx.words.add(lowered)
    if lowered.startswith("mcp__"):
        ctx.words.update(w for w in lowered.split("__")[1:] if w)
    for key in PATH_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            ctx.paths.append(value)
    url = tool_input.get("url")
    if isinstance(url, str):
        _url(ctx, url)
    command = tool_input.get("command")
    segments = [str(a.get("segment") or "") for a in acts if a.get("segment")]
    if not segments and isinstance(command, str):
        segments = [command]
    for segment in segments:
        _segment(ctx, segment)
    ctx.paths.append(cwd or project)
    ctx.found("project", os.path.basename(project.rstrip("/")).lower(), "the project folder", why)
    _detect(ctx, detectors, why)
    return ctx


def _segment(ctx: Context, segment: str) -> None:
    words = [w.strip(_STRIP) for w in segment.split()]
    program = ""
    skip = False
    leading = 0
    for word in words:
        if not word:
            continue
        lowered = word.lower()
        if leading < COMMAND_WORDS and not word.startswith("-") and "=" not in word:
            ctx.commands.append(lowered)
            leading += 1
        base = lowered.rsplit("/", 1)[-1]
        if base in REMOTE and not program:
            program = base
        elif "://" in word:
            _url(ctx, word)
        elif "@" in word and not word.startswith("-"):
            _host(ctx, word.split("@", 1)[1].split(":", 1)[0].split("/", 1)[0])
        elif program in ("ssh", "mosh", "sftp") and not skip and not word.startswith("-") and \
                "=" not in word:
            _host(ctx, word.split(":", 1)[0])     # ssh [options] HOST [command]
            program = "-"
        elif program in ("scp", "rsync") and ":" in word and word[:1] not in "/.-":
            _host(ctx, word.split(":", 1)[0])     # scp FILE HOST:PATH
        skip = program in ("ssh", "mosh", "sftp") and word in _SSH_VALUES
        if "/" in word and not word.startswith("-"):
            ctx.paths.append(word)
        for piece in (lowered, base):
            if piece and len(piece) <= 64:
                ctx.words.add(piece)


def _url(ctx: Context, url: str) -> None:
    rest = url.split("://", 1)[1] if "://" in url else url
    authority = rest.split("/", 1)[0].rsplit("@", 1)[-1]
    host, _, port = authority.partition(":")
    _host(ctx, host)
    if port.isdigit():
        ctx.ports.add(port)


def _host(ctx: Context, host: str) -> None:
    host = host.strip("[]").lower()
    if ":" in host and host.count(":") == 1:
        host, port = host.split(":")
        if port.isdigit():
            ctx.ports.add(port)
    if host:
        ctx.hosts.add(host)
        ctx.words.add(host)


def _detect(ctx: Context, detectors: list[dict[str, Any]], why: dict[str, str] | None) -> None:
    for det in detectors:
        kind, name = det["kind"], det["name"]
        word = next((w for w in det["words"] if w in ctx.words), None)
        if word is not None:
            ctx.found(kind, name, f"the word {word!r}", why)
        port = next((p for p in det["ports"] if p in ctx.ports), None)
        if port is not None:
            ctx.found(kind, name, f"the port {port}", why)
        for glob in det["hosts"]:
            host = next((h for h in sorted(ctx.hosts) if _glob(h, glob)), None)
            if host is not None:
                ctx.found(kind, name, f"the host {host}", why)
        for template in det["paths"]:
            for path in ctx.paths:
                found = _path_name(path, template)
                if found is not None:
                    ctx.found(kind, name.replace("{name}", found) if "{name}" in name else name,
                              f"the path {path}", why)
                    break


def _glob(value: str, pattern: str) -> bool:
    """fnmatch semantics (``*`` crosses ``/``); the full matcher loads only for ``?`` and ``[``."""
    if "?" in pattern or "[" in pattern:
        from governance.policy.wildcard import match

        return match(value, pattern)
    if "*" not in pattern:
        return value == pattern
    pieces = pattern.split("*")
    if not value.startswith(pieces[0]) or not value.endswith(pieces[-1]) or \
            len(value) < len(pieces[0]) + len(pieces[-1]):
        return False
    pos, limit = len(pieces[0]), len(value) - len(pieces[-1])
    for piece in pieces[1:-1]:
        found = value.find(piece, pos, limit)
        if found < 0:
            return False
        pos = found + len(piece)
    return True


def _path_name(path: str, template: str) -> str | None:
    """The component of ``path`` that ``{name}`` stands for in ``template`` (or, without
    ``{name}``, the path itself when it matches), else None."""
    path = path.lower()
    if "{name}" not in template:
        return path if _glob(path, template) else None
    left, right = template.split("{name}", 1)
    parts = path.split("/")
    for k in range(1, len(parts)):
        name = parts[k]
        if name and _glob("/".join(parts[:k]) + "/", left) and \
                _glob("/" + "/".join(parts[k + 1:]), right or "*"):
            return name
    return None
