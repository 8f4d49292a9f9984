"""``governance status``: where governance stands in a project, in a few lines.

The hooks, the cycle state, the matrix layers in force (and whether the override is the accepted
one), the sandbox and the protection level it gives, the resident server, the ledger's health
(against its anchor too) and the intents, with the version.
Each part is read on its own: a part that cannot be read says why in its line and the others are
still shown. It changes nothing (reading the matrix may refresh its compiled cache), and it stays
quick: the ledger is judged by its head and its last record, never by reading the whole chain
(``governance ledger verify`` does that).
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from typing import Any

from governance.commands.options import project_option
from governance.errors import GovernanceError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    project_option(parser, as_json=True)


def run(args: argparse.Namespace) -> int:
    from governance.project import installed_version, project_from_cli

    project = project_from_cli(args.project)
    report: dict[str, Any] = {"version": installed_version(), "project": project}
    if not os.path.isdir(os.path.join(project, ".claude")):
        report["installed"] = False
        report["fix"] = f"governance install --project {project}"
        if args.as_json:
            print(json.dumps(report, indent=2))
        else:
            print(f"governance {report['version']}: governance is not installed in {project} (it "
                  f"has no .claude folder); install it with `governance install --project "
                  f"{project}`, or pass --project DIR.")
        return 1
    report["installed"] = True
    matrix: dict[str, Any] | None = None

    def read_matrix() -> dict[str, Any]:
        nonlocal matrix
        from governance.policy import matrix as matrix_module

        matrix = matrix_module.load(project)
        return _layers(project, matrix)

    parts: list[tuple[str, Callable[[], dict[str, Any]]]] = [
        ("hooks", lambda: _hooks(project)),
        ("matrix", read_matrix),
        ("state", lambda: _state(project, matrix)),
        ("sandbox", lambda: _sandbox(project)),
        ("protection", lambda: _protection(project, matrix)),
        ("server", lambda: _server(project)),
        ("ledger", lambda: _ledger(project)),
        ("intents", lambda: _intents(project, matrix)),
    ]
    for name, read in parts:
        try:
            report[name] = read()
        except (GovernanceError, OSError, ValueError) as exc:
            text = exc.render() if isinstance(exc, GovernanceError) else str(exc)
            report[name] = {"error": text, "line": f"cannot be read: {text}"}
    if args.as_json:
        print(json.dumps({k: ({kk: vv for kk, vv in v.items() if kk != "line"}
                              if isinstance(v, dict) else v) for k, v in report.items()},
                         indent=2))
    else:
        print(f"governance {report['version']} in {project}")
        for name, _ in parts:
            print(f"  {name + ':':<9} {report[name]['line']}")
        print("Every check with its fix: `governance doctor`.")
    return 0


def _hooks(project: str) -> dict[str, Any]:
    from governance.install import settings

    path = settings.settings_path(project)
    events = sorted(settings.our_commands(settings.load(path)))
    if not events:
        return {"registered": [], "line": f"not registered in {_rel(project, path)}: "
                                          f"`governance install --project {project}`"}
    return {"registered": events, "line": "registered for " + ", ".join(events)}


def _layers(project: str, matrix: dict[str, Any]) -> dict[str, Any]:
    from governance.project import override_matrix_path

    files = [str(f) for f in matrix.get("files") or ()]
    unaccepted = str(matrix.get("unaccepted") or "")
    override = override_matrix_path(project)
    layers = [{"file": f, "layer": "default" if i == 0 else "override"}
              for i, f in enumerate(files)]
    if unaccepted:
        line = (f"{' + '.join(_rel(project, f) for f in files)} in force; "
                f"{_rel(project, override)} changed without being accepted "
                "(`governance validate` checks and accepts it)")
    elif len(files) > 1:
        line = f"packaged default + {_rel(project, files[-1])} (accepted)"
    else:
        line = ("packaged default (no project override)" if not os.path.exists(override)
                else f"packaged default; {_rel(project, override)} is not in force")
    return {"layers": layers, "override_accepted": len(files) > 1 and not unaccepted,
            "unaccepted": unaccepted or None, "line": line}


def _state(project: str, matrix: dict[str, Any] | None) -> dict[str, Any]:
    from governance.policy.state import read_state

    if matrix is None:
        raise GovernanceError("the matrix cannot be read, so neither can the state")
    view = read_state(project, matrix)
    line = view.state + (f" ({view.label})" if view.label != view.state else "")
    if view.note:
        line += f"; {view.note}"
    return {"state": view.state, "label": view.label, "note": view.note or None, "line": line}


def _sandbox(project: str) -> dict[str, Any]:
    from governance.sandbox import control

    on = control.load_manifest(project) is not None
    return {"on": on, "line": "on (Claude Code's Bash sandbox is part of governance)" if on
            else "off (`governance sandbox on` confines every Bash command)"}


def _protection(project: str, matrix: dict[str, Any] | None) -> dict[str, Any]:
    from governance.policy.state import read_state
    from governance.sandbox import control
    from governance.sandbox.protection import level

    if matrix is None:
        raise GovernanceError("the matrix cannot be read, so neither can the sandbox's network "
                              "rule")
    reached = level(control.status(project, matrix, read_state(project, matrix).state))
    return {**reached.as_json(), "line": reached.line()}


def _server(project: str) -> dict[str, Any]:
    from governance.server import daemon

    found = daemon.status(project)
    line = (f"running at {found['url']} (pid {found['pid']})" if found["running"]
            else f"not running ({found['why']}); optional: `governance serve`")
    return {"running": bool(found["running"]), "url": found.get("url"), "line": line}


def _ledger(project: str) -> dict[str, Any]:
    from governance.ledger import chain
    from governance.project import governance_dir

    gov = governance_dir(project)
    path = os.path.join(gov, chain.LEDGER)
    head = chain.read_head(gov)
    try:
        size = os.path.getsize(path)
    except FileNotFoundError:
        from governance.ledger.witness import check

        gone = [found for found in check(gov) if found.failed]
        return {"records": 0, "anchors": [found.as_json() for found in gone],
                "line": "; ".join(found.line() for found in gone) or "no records yet"}
    with open(path, "rb") as handle:
        last, _ = chain.last_record(handle.fileno(), size)
    if last is None:
        return {"records": 0, "line": f"{_rel(project, path)} holds no complete record "
                                      "(`governance ledger verify` says why)"}
    consistent = (head is not None and head.get("seq") == last.get("seq")
                  and head.get("hash") == last.get("hash")
                  and last.get("hash") == chain.record_hash(last))
    records = int(last.get("seq") or 0)
    from governance.ledger.witness import check

    anchors = check(gov)
    line = (f"{records:,} records, the last at {last.get('ts', '?')}; "
            + ("its last record matches the chain's head" if consistent
               else "its last record does not match the chain's head")
            + "".join(f"; {found.line()}" for found in anchors if found.state != "matches")
            + ("; it matches its anchor" if anchors and all(found.state == "matches"
                                                            for found in anchors) else "")
            + " (full check: `governance ledger verify`)")
    return {"records": records, "last": last.get("ts"), "tail_matches_head": consistent,
            "anchors": [found.as_json() for found in anchors], "line": line}


def _intents(project: str, matrix: dict[str, Any] | None) -> dict[str, Any]:
    from governance.project import intents_path

    required = bool(matrix and matrix.get("settings", {}).get("require_intent"))
    rule = "required for changes" if required else "not required (settings.require_intent)"
    if not os.path.exists(intents_path(project)):
        return {"declared": 0, "active": None, "required": required,
                "line": f"none declared; {rule}"}
    from governance.intent import selection, spec
    from governance.policy.state import read_state

    intents = spec.load(project)
    work = read_state(project, matrix).work_item if matrix else ""
    active, source = selection.selected(project, "", work)
    if source == "work item" and spec.find(intents, active) is None:
        active, source = "", ""
    line = (f"{len(intents)} declared, "
            + (f"{active} active (by {source})" if active else "none active") + f"; {rule}")
    return {"declared": len(intents), "active": active or None, "required": required,
            "line": line}


def _rel(project: str, path: str) -> str:
    return os.path.relpath(path, project) if path.startswith(project + os.sep) else path
