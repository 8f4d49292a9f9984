"""Turning the sandbox backstop on and off for a project, and keeping its network rule in step with
the cycle state.

The manifest (``.claude/governance/sandbox.json``) says the sandbox is part of governance: the hook
denies ``dangerouslyDisableSandbox`` while it exists, ``governance state set`` closes or opens the
network with it, and ``off`` (or ``uninstall``) takes back exactly what ``on`` added.
"""

from __future__ import annotations

import json
import os
from typing import Any

from governance.errors import InstallError
from governance.install import settings as settings_file
from governance.policy import seal
from governance.project import sandbox_manifest_path, temp_path
from governance.sandbox import config
from governance.sandbox.probe import Probe, probe

CLOSING_ACTIONS = ("block", "redirect")


def network_rule(matrix: dict[str, Any], state: str) -> dict[str, Any]:
    """What the sandbox does with Bash's network in ``state`` (the compiled ``sandbox_network``):
    ``closed``, ``closed_by`` (the network acts the state blocks or asks), ``allow`` (the hosts the
    acts it allows need) and ``opened_by``. A matrix compiled without it closes where web-fetch is
    blocked, as before."""
    rule = matrix.get("sandbox_network", {}).get(state)
    if isinstance(rule, dict):
        return rule
    entry = matrix["decide"].get(state, {}).get("web-fetch")
    closed = (entry[0] if entry else matrix["default_action"]) in CLOSING_ACTIONS
    return {"closed": closed, "closed_by": ["web-fetch"] if closed else [], "allow": [],
            "opened_by": []}


def closes_network(matrix: dict[str, Any], state: str) -> bool:
    """A state closes the network to sandboxed commands where it blocks, asks or redirects an act
    that reaches the network (``sandbox_network`` in the matrix)."""
    return bool(network_rule(matrix, state)["closed"])


def _apply_rule(data: dict[str, Any], manifest: dict[str, Any], rule: dict[str, Any]) -> bool:
    return config.set_network(data, manifest, bool(rule["closed"]))


def describe_rule(rule: dict[str, Any]) -> str:
    """One line: what the sandbox does with Bash's network under ``rule`` (governance's proxy
    decides each connection by it)."""
    if not rule["closed"]:
        return "open (every host)"
    why = f"closed (the state blocks or asks {', '.join(rule['closed_by'])})"
    if not rule["allow"]:
        return why + ", every host refused"
    return why + f", except {', '.join(rule['allow'])} (for {', '.join(rule['opened_by'])})"


def load_manifest(project: str) -> dict[str, Any] | None:
    path = sandbox_manifest_path(project)
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise InstallError(f"the sandbox manifest cannot be read ({exc})", file=path,
                           fix="run `governance sandbox on` to write it again") from None
    if not isinstance(data, dict) or data.get("version") != 1:
        raise InstallError("the sandbox manifest is not one this version wrote", file=path,
                           fix="run `governance sandbox on` to write it again")
    return data


def _save_manifest(project: str, manifest: dict[str, Any]) -> None:
    path = sandbox_manifest_path(project)
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    tmp = temp_path(path)
    with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w",
              encoding="utf-8") as fh:
        json.dump(manifest, fh, indent=2)
        fh.write("\n")
    os.replace(tmp, path)


def seal_settings(project: str, data: dict[str, Any], manifest: dict[str, Any] | None) -> None:
    """Record what governance owns in ``data`` (the settings about to be saved) as accepted.

    Call it *before* saving: a hook that checks in between sees either more than the seal asks
    (harmless) or less, which it puts back, and the save that follows writes ``data`` anyway."""
    expect = settings_file.owned_expectations(data)
    if manifest is not None:
        expect += config.owned_expectations(data, manifest, config.protected_paths(project))
    seal.accept_settings(project, settings_file.files_to_watch(project), expect,
                         manifest is not None)


def turn_on(project: str, state: str, matrix: dict[str, Any], python: str | None = None,
            checked: Probe | None = None) -> list[str]:
    """Make the sandbox part of governance; refuses (InstallError with the fix) where it cannot
    start, because a sandbox that falls back protects nothing and one that cannot start stops
    Claude Code from starting."""
    verdict = checked or probe()
    if not verdict.ok:
        raise InstallError(f"Claude Code's sandbox cannot start on this machine: "
                           f"{'; '.join(verdict.problems)}", fix="; ".join(verdict.fixes)
                           + "; then run `governance sandbox on` again")
    path = settings_file.settings_path(project)
    data = settings_file.load(path)
    manifest = load_manifest(project) or config.new_manifest(path)
    before = json.dumps(data, sort_keys=True)
    from governance.ledger import anchor

    try:   # denied as a folder that exists (the hooks, outside the sandbox, write in it)
        os.makedirs(anchor.folder(), mode=0o700, exist_ok=True)
    except OSError:
        pass   # a home that cannot be written: the path is denied all the same
    rule = network_rule(matrix, state)
    port = manifest.get("proxy", {}).get("port") or _free_port()
    from governance.sandbox import proxy_process

    manifest.setdefault("proxy", {})["command"] = [
        *settings_file.module_command("governance.sandbox.proxy", python), "--project", project,
        "--port", str(port)]
    manifest["proxy"]["log"] = proxy_process.paths(project)[1]
    config.apply(data, manifest, config.protected_paths(project, python), bool(rule["closed"]),
                 proxy_port=port)
    notes = [f"Sandbox on ({verdict.platform}): Bash commands run confined, never outside it; "
             f"{len(manifest['added'].get('.'.join(config.DENY_WRITE), []))} governance path(s) "
             "are read-only inside it.",
             f"Network for sandboxed commands in {state}: {describe_rule(rule)}"]
    _save_manifest(project, manifest)  # first: the hook denies escapes from now on
    seal_settings(project, data, manifest)
    if json.dumps(data, sort_keys=True) != before:
        backup = settings_file.save(path, data)
        notes.append(f"Wrote the sandbox settings to {path}" + (f" (backup: {backup})"
                                                                 if backup else ""))
    notes.append(_start_proxy(project, manifest))
    return notes


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start_proxy(project: str, manifest: dict[str, Any]) -> str:
    """Start governance's proxy for sandboxed traffic (``sandbox.proxy``) and say where it is."""
    from governance.sandbox import proxy_process

    proxy = manifest["proxy"]
    if not proxy_process.start(project, int(proxy["port"]), list(proxy["command"])) and \
            not proxy_process.wait(project, int(proxy["port"])):
        log = proxy_process.paths(project)[1]
        return (f"WARNING: the sandbox proxy did not start on 127.0.0.1:{proxy['port']}, so "
                f"sandboxed commands reach no host until it runs (see {log}; every session "
                "start tries again)")
    return (f"Sandbox proxy on 127.0.0.1:{proxy['port']}: it decides each connection of a "
            "sandboxed command by the state in force")


def turn_off(project: str) -> list[str]:
    """Remove exactly what ``turn_on`` added; the user's own sandbox settings stay."""
    manifest = load_manifest(project)
    if manifest is None:
        return []
    from governance.sandbox import proxy_process

    stopped = proxy_process.stop(project)
    path = settings_file.settings_path(project)
    data = settings_file.load(path)
    done = config.remove(data, manifest)
    seal_settings(project, data, None)
    if done:
        settings_file.save(path, data)
    os.unlink(sandbox_manifest_path(project))
    return [f"Sandbox settings taken back from {path}: " + ", ".join(done or ["nothing left"]),
            stopped[0].upper() + stopped[1:] + "."]


def meet(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    """The network rule that is as strict as both: closed where either is, open only to the
    hosts both open. A state change writes it before the state file, and the new state's own
    rule after, so no moment exists where the sandbox allows what either state forbids."""
    if not first["closed"] or not second["closed"]:
        return second if first["closed"] is False else first
    allow = [host for host in first["allow"] if host in second["allow"]]
    return {"closed": True, "closed_by": list(dict.fromkeys(first["closed_by"]
                                                            + second["closed_by"])),
            "allow": allow, "opened_by": [p for p in first["opened_by"]
                                          if p in second["opened_by"]]}


def follow_state(project: str, matrix: dict[str, Any], state: str,
                 rule: dict[str, Any] | None = None) -> bool | None:
    """Set the network for ``state`` (or to ``rule``, e.g. the ``meet`` of two states); None when
    the sandbox is not part of governance, else whether the network is now closed."""
    manifest = load_manifest(project)
    if manifest is None:
        return None
    path = settings_file.settings_path(project)
    data = settings_file.load(path)
    rule = rule or network_rule(matrix, state)
    if _apply_rule(data, manifest, rule):
        seal_settings(project, data, manifest)
        settings_file.save(path, data)
        _save_manifest(project, manifest)
    return bool(rule["closed"])


def states_report(matrix: dict[str, Any]) -> list[dict[str, Any]]:
    """Per state: what the sandbox closes (governance writes, the network with its allowlist) and
    what it leaves to the hook (the tools, which run outside it, and the acts the state blocks or
    asks that no network rule closes)."""
    out: list[dict[str, Any]] = []
    for state in matrix["states"]:
        rule = network_rule(matrix, state)
        summary = matrix["summary"][state]
        closed = set(rule["closed_by"]) if rule["closed"] else set()
        left = [p for p in [*summary["blocked"], *summary["asked"]] if p not in closed]
        out.append({"state": state, "network": rule,
                    "network_text": describe_rule(rule),
                    "closes": ["writes to governance files (state, seal, ledger, caches, "
                               "settings)"] + ([f"network ({', '.join(sorted(closed))})"]
                                               if closed else []),
                    "hook": sorted(left)})
    return out


def status(project: str, matrix: dict[str, Any], state: str,
           checked: Probe | None = None) -> dict[str, Any]:
    """What doctor and ``sandbox status`` report."""
    manifest = load_manifest(project)
    data = settings_file.load(settings_file.settings_path(project))
    found = data.get("sandbox")
    sandbox: dict[str, Any] = found if isinstance(found, dict) else {}
    drift = [f"sandbox.{key} is {sandbox.get(key)!r}, not {value!r}"
             for key, value in config.SCALARS.items()
             if manifest is not None and sandbox.get(key) != value]
    rule = network_rule(matrix, state)
    proxy: dict[str, Any] = {}
    if manifest is not None:
        expected = json.loads(json.dumps(data))
        if config.set_network(expected, json.loads(json.dumps(manifest)), bool(rule["closed"])):
            drift.append(f"the network rule does not match the state {state}: run "
                         "`governance sandbox on` to set it again")
        from governance.sandbox import proxy_process

        port = manifest.get("proxy", {}).get("port")
        proxy = {"port": port, "running": isinstance(port, int) and proxy_process.running(port)}
        found_network = sandbox.get("network")
        network: dict[str, Any] = found_network if isinstance(found_network, dict) else {}
        if port is None or any(network.get(k) != port for k in config.PROXY_KEYS):
            drift.append("sandboxed commands do not go through governance's proxy: run "
                         "`governance sandbox on` to set it again")
        elif not proxy["running"]:
            drift.append(f"governance's proxy is not running on 127.0.0.1:{port}, so sandboxed "
                         "commands reach no host: it starts with the next session, or run "
                         "`governance sandbox on`")
    verdict = checked or probe()
    return {"governed": manifest is not None, "enabled": sandbox.get("enabled") is True,
            "drift": drift, "can_start": verdict.ok, "platform": verdict.platform,
            "why_not": verdict.explain() if not verdict.ok else "",
            "network": ("open only to the state's hosts" if rule["closed"] and rule["allow"]
                        and proxy else "closed" if config.network_closed(data) else "open"),
            "allowed_hosts": list(rule["allow"]) if rule["closed"] else [],
            "proxy": proxy, "state_closes_network": bool(rule["closed"]),
            "network_rule": describe_rule(rule), "states": states_report(matrix)}
