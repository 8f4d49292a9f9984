"""The part of Claude Code's ``sandbox`` settings that governance owns, merged into the project's
``.claude/settings.json`` and removed again exactly.

What we set: ``enabled: true``, ``allowUnsandboxedCommands: false`` (else the model may retry a
failed command outside the sandbox), ``failIfUnavailable: true`` (else a missing bubblewrap
silently runs everything unsandboxed), ``filesystem.denyWrite`` for every governance file (the
ledger's anchors under the user's home included), ``network.httpProxyPort`` / ``socksProxyPort``:
governance's own proxy (``sandbox.proxy``), which decides each connection of a sandboxed command
by the state, and ``network.deniedDomains: ["*"]`` while the state closes the network (for a
command whose proxy setting was taken away). What we changed is recorded in the manifest
(``.claude/governance/sandbox.json``): the previous value of every key we set and every list entry
we added, so that removal restores the user's own settings and touches nothing else.
"""

from __future__ import annotations

import os
import time
from typing import Any

from governance.errors import InstallError
from governance.ledger import anchor
from governance.project import governance_dir, installation_paths

SCALARS: dict[str, object] = {"enabled": True, "allowUnsandboxedCommands": False,
                              "failIfUnavailable": True}
DENY_WRITE = ("filesystem", "denyWrite")
DENIED_DOMAINS = ("network", "deniedDomains")
ALLOWED_DOMAINS = ("network", "allowedDomains")
PROXY_KEYS = ("httpProxyPort", "socksProxyPort")   # in sandbox.network: governance's proxy
EVERY_HOST = "*"
ABSENT = {"absent": True}  # the manifest's word for "the key did not exist"


def protected_paths(project: str, python: str | None = None) -> list[str]:
    """Absolute paths a sandboxed command may not write: the project's settings and governance
    folder, the user's settings, the ledger anchors under the user's home, and our installation
    (``project.installation_paths``)."""
    home = os.path.expanduser("~")
    paths = [
        os.path.join(project, ".claude", "settings.json"),
        os.path.join(project, ".claude", "settings.local.json"),
        governance_dir(project),
        os.path.join(home, ".claude", "settings.json"),
        os.path.join(home, ".claude", "settings.local.json"),
        anchor.folder(),
    ]
    resolved = [os.path.realpath(path) if os.path.exists(path) else path for path in paths]
    return list(dict.fromkeys(resolved + installation_paths(python)))


def _section(data: dict[str, Any], keys: tuple[str, ...], created: list[str]) -> dict[str, Any]:
    node = data
    walked: list[str] = []
    for key in keys:
        walked.append(key)
        child = node.get(key)
        if child is None:
            child = node[key] = {}
            if ".".join(walked) not in created:
                created.append(".".join(walked))
        elif not isinstance(child, dict):
            raise InstallError(f"{'.'.join(walked)} is not an object", key=".".join(walked),
                               fix="repair the settings file (Claude Code expects an object)")
        node = child
    return node


def _list(data: dict[str, Any], path: tuple[str, ...], created: list[str]) -> list[Any]:
    parent = _section(data, ("sandbox", *path[:-1]), created)
    items = parent.get(path[-1])
    if items is None:
        items = parent[path[-1]] = []
        if ".".join(("sandbox", *path)) not in created:
            created.append(".".join(("sandbox", *path)))
    elif not isinstance(items, list):
        key = ".".join(("sandbox", *path))
        raise InstallError(f"{key} is not a list", key=key, fix="repair the settings file")
    return items


def new_manifest(settings_file: str) -> dict[str, Any]:
    return {"version": 1, "settings_file": settings_file, "scalars": {}, "added": {},
            "created": [], "installed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def apply(data: dict[str, Any], manifest: dict[str, Any], deny_write: list[str],
          network_closed: bool, proxy_port: int | None = None) -> None:
    """Merge our sandbox settings into ``data`` (Claude Code's settings object), recording in
    ``manifest`` what was not there before. Applying twice changes nothing more."""
    created: list[str] = manifest["created"]
    sandbox = _section(data, ("sandbox",), created)
    for key, value in SCALARS.items():
        if key not in manifest["scalars"]:
            manifest["scalars"][key] = {"set": value,
                                        "previous": sandbox.get(key, ABSENT)}
        sandbox[key] = value
    added = manifest["added"]
    ours = added.setdefault(".".join(DENY_WRITE), [])
    paths = _list(data, DENY_WRITE, created)
    for path in deny_write:
        if path not in paths:
            paths.append(path)
            ours.append(path)
    set_network(data, manifest, network_closed)
    if proxy_port is not None:
        set_proxy(data, manifest, proxy_port)


def set_proxy(data: dict[str, Any], manifest: dict[str, Any], port: int) -> None:
    """Send sandboxed traffic to governance's proxy on ``port`` (``sandbox.proxy``), recording the
    user's previous values in ``manifest["proxy"]`` for ``remove``."""
    network = _section(data, ("sandbox", "network"), manifest["created"])
    record = manifest.setdefault("proxy", {})
    previous = record.setdefault("previous", {})
    for key in PROXY_KEYS:
        if key not in previous:
            previous[key] = network.get(key, ABSENT)
        network[key] = port
    record["port"] = port


def set_network(data: dict[str, Any], manifest: dict[str, Any], closed: bool) -> bool:
    """Close (``deniedDomains: ["*"]``) or reopen Claude Code's own proxy; True when ``data``
    changed. Governance's proxy (``sandbox.proxy``) carries the state's hosts: Claude Code lets
    ``deniedDomains`` win over ``allowedDomains``, and leaves the project's ``allowedDomains`` out
    while the user's ``strictAllowlist`` is on, so a project can open no host through its own
    proxy. The ``"*"`` refuses every host to a command whose proxy setting was taken away. Entries
    an earlier version added to ``allowedDomains`` are taken out. A ``"*"`` or host the user wrote
    is theirs: reopening never removes it."""
    changed = _set_entries(data, manifest, DENIED_DOMAINS, [EVERY_HOST] if closed else [])
    return _set_entries(data, manifest, ALLOWED_DOMAINS, []) or changed


def _set_entries(data: dict[str, Any], manifest: dict[str, Any], path: tuple[str, ...],
                 wanted: list[str]) -> bool:
    """Make our entries of the list at ``sandbox.PATH`` exactly ``wanted``, leaving the user's."""
    ours: list[str] = manifest["added"].setdefault(".".join(path), [])
    changed = False
    stale = [entry for entry in ours if entry not in wanted]
    if stale:
        node: Any = data.get("sandbox")
        for part in path:
            node = node.get(part) if isinstance(node, dict) else None
        for entry in stale:
            ours.remove(entry)
            if isinstance(node, list) and entry in node:
                node.remove(entry)
                changed = True
    if wanted:
        items = _list(data, path, manifest["created"])
        for entry in wanted:
            if entry not in items:
                items.append(entry)
                ours.append(entry)
                changed = True
    if changed:
        _prune(data, manifest)
    return changed


def network_closed(data: dict[str, Any]) -> bool:
    """Whether these settings refuse every host to sandboxed commands."""
    sandbox = data.get("sandbox")
    network = sandbox.get("network") if isinstance(sandbox, dict) else None
    domains = network.get("deniedDomains") if isinstance(network, dict) else None
    return isinstance(domains, list) and EVERY_HOST in domains


def allowed_hosts(data: dict[str, Any]) -> list[str]:
    """The hosts these settings let sandboxed commands reach without asking."""
    sandbox = data.get("sandbox")
    network = sandbox.get("network") if isinstance(sandbox, dict) else None
    hosts = network.get("allowedDomains") if isinstance(network, dict) else None
    return [h for h in hosts if isinstance(h, str)] if isinstance(hosts, list) else []


def remove(data: dict[str, Any], manifest: dict[str, Any]) -> list[str]:
    """Take back exactly what ``apply`` added; returns what was done, for the user. A key the
    user has changed since is theirs and stays."""
    done: list[str] = []
    sandbox = data.get("sandbox")
    if not isinstance(sandbox, dict):
        return done
    for key, record in manifest.get("scalars", {}).items():
        if key in sandbox and sandbox[key] == record["set"]:
            if record["previous"] == ABSENT:
                del sandbox[key]
                done.append(f"removed sandbox.{key}")
            else:
                sandbox[key] = record["previous"]
                done.append(f"restored sandbox.{key} to {record['previous']!r}")
    for dotted, entries in manifest.get("added", {}).items():
        node: Any = sandbox
        for part in dotted.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if isinstance(node, list):
            for entry in entries:
                if entry in node:
                    node.remove(entry)
            if entries:
                done.append(f"removed {len(entries)} entr{'y' if len(entries) == 1 else 'ies'} "
                            f"from sandbox.{dotted}")
    proxy = manifest.get("proxy")
    network = sandbox.get("network")
    if isinstance(proxy, dict) and isinstance(network, dict):
        for key, before in proxy.get("previous", {}).items():
            if network.get(key) == proxy.get("port"):
                if before == ABSENT:
                    del network[key]
                else:
                    network[key] = before
                done.append(f"removed sandbox.network.{key}")
    _prune(data, manifest)
    return done


def _prune(data: dict[str, Any], manifest: dict[str, Any]) -> None:
    """Drop the containers we created once they are empty (deepest first)."""
    for dotted in sorted(manifest.get("created", []), key=lambda d: -d.count(".")):
        parts = dotted.split(".")
        parent: Any = data
        for part in parts[:-1]:
            parent = parent.get(part) if isinstance(parent, dict) else None
        if isinstance(parent, dict) and parent.get(parts[-1]) in ({}, []):
            del parent[parts[-1]]


def owned_expectations(data: dict[str, Any], manifest: dict[str, Any],
                       protected: list[str]) -> list[list[Any]]:
    """What governance owns among these sandbox settings, as the seal's expectations: our
    scalars, every governance path in ``denyWrite``, the ``*`` of ``deniedDomains`` while the
    state closes the network, and ``allowedDomains`` as it is now: no host may join it (in the
    settings file or the local one) but through governance."""
    expect: list[list[Any]] = [["equals", ["sandbox", key], value] for key, value in SCALARS.items()]
    sandbox = data.get("sandbox")
    filesystem = sandbox.get("filesystem") if isinstance(sandbox, dict) else None
    listed = filesystem.get("denyWrite") if isinstance(filesystem, dict) else None
    ours = list(manifest.get("added", {}).get(".".join(DENY_WRITE), []))
    ours += [p for p in (listed if isinstance(listed, list) else []) if p in protected]
    expect += [["contains", ["sandbox", *DENY_WRITE], path] for path in dict.fromkeys(ours)]
    if EVERY_HOST in manifest.get("added", {}).get(".".join(DENIED_DOMAINS), []):
        expect.append(["contains", ["sandbox", *DENIED_DOMAINS], EVERY_HOST])
    hosts = allowed_hosts(data)
    expect += [["contains", ["sandbox", *ALLOWED_DOMAINS], host] for host in
               manifest.get("added", {}).get(".".join(ALLOWED_DOMAINS), []) if host in hosts]
    expect.append(["within", ["sandbox", *ALLOWED_DOMAINS], hosts])
    port = manifest.get("proxy", {}).get("port")
    if isinstance(port, int):
        expect += [["equals", ["sandbox", "network", key], port] for key in PROXY_KEYS]
    return expect
