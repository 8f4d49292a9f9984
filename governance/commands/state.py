"""``governance state get|set|next|show``: the cycle state from a terminal."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

ORDER = {"block": 0, "redirect": 0, "ask": 1, "warn": 2, "allow": 3}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    get = sub.add_parser("get", help="print cycle/PHASE/WORK (or the state in use)")
    get.add_argument("--json", action="store_true", help="print the state as JSON")
    setter = sub.add_parser("set", help="set the state: CYCLE/PHASE[/WORK-ID] (or CYCLE PHASE [WORK])")
    setter.add_argument("spec", nargs="+", metavar="SPEC",
                        help="CYCLE/PHASE[/WORK-ID], or CYCLE PHASE [WORK-ID], or a phase of "
                             "the current cycle")
    sub.add_parser("next", help="move to the next phase of the current cycle")
    show = sub.add_parser("show", help="the state and what is allowed, warned and blocked in it")
    show.add_argument("--json", action="store_true", help="print the state and its rules as "
                                                          "JSON")
    for p in (get, setter, sub.choices["next"], show):
        p.add_argument("--project", help="the project folder (default: the current project)")


def _record(project: str, old: str, new: Any, matrix: dict[str, Any]) -> None:
    from governance.ledger import chain
    from governance.policy.seal import who
    from governance.project import governance_dir

    chain.append(governance_dir(project), {
        "event": "StateChange", "from": old, "to": new.label, **new.as_record(),
        "actor": who(), "config_hash": matrix["config_hash"],
    }, max_bytes=matrix["settings"]["ledger_max_bytes"])


def run(args: argparse.Namespace) -> int:
    from governance.policy import matrix as matrix_module
    from governance.policy import state as state_module
    from governance.project import project_from_cli

    project = project_from_cli(args.project)
    matrix = matrix_module.load(project)
    current = state_module.read_state(project, matrix)
    if matrix.get("unaccepted"):
        print(matrix["unaccepted"], file=sys.stderr)
    if args.action == "get":
        if args.json:
            print(json.dumps({"label": current.label, **current.as_record(), "note": current.note}))
        else:
            print(current.label)
            if current.note:
                print(current.note, file=sys.stderr)
        return 0
    if args.action == "show":
        return _show(project, matrix, current, args.json)
    if args.action == "set":
        spec = args.spec
        if len(spec) == 1:
            cycle, phase, work = state_module.parse_spec(spec[0])
            if not cycle and current.cycle and phase in matrix["cycles"].get(current.cycle, ()):
                cycle, work = current.cycle, current.work_item  # `/cycle DO`: same cycle, next phase
        else:
            cycle, phase, work = [*spec, ""][:3]
            if len(spec) > 3:
                from governance.errors import StateError

                raise StateError(f"too many parts in {' '.join(spec)!r}",
                                 fix="use CYCLE PHASE [WORK-ID]")
    else:
        cycle, work = current.cycle, current.work_item
        phase = state_module.next_phase(matrix, current)
    new = _set_with_sandbox(project, matrix, cycle, phase, work)
    _record(project, current.label if current.source == "file" else "", new, matrix)
    print(f"{new.label} (state {new.state})")
    return 0


def _set_with_sandbox(project: str, matrix: dict[str, Any], cycle: str, phase: str,
                      work: str) -> Any:
    """Write the state, with the sandbox's network rule in step: before the state file, the rule
    as strict as both the old and the new state (``control.meet``: what closes is closed first),
    after it the new state's own rule (what opens is opened last), so no moment exists where a
    state forbids the network and the sandbox allows it. (Claude Code applies a settings change
    about a second after the file is written: docs/sandbox.md.)"""
    from governance.policy.state import read_state, resolve, set_state
    from governance.sandbox import control

    target = resolve(matrix, cycle, phase)  # None for an unknown phase: set_state says so
    if target is not None:
        current = read_state(project, matrix).state
        control.follow_state(project, matrix, target, control.meet(
            control.network_rule(matrix, current), control.network_rule(matrix, target)))
    new = set_state(project, matrix, cycle, phase, work)
    control.follow_state(project, matrix, new.state)
    return new


def _show(project: str, matrix: dict[str, Any], current: Any, as_json: bool) -> int:
    table = matrix["decide"].get(current.state, {})
    rows = sorted(((prim, entry[0], entry[1], entry[4]) for prim, entry in table.items()),
                  key=lambda r: (ORDER[r[1]], r[0]))
    if as_json:
        print(json.dumps({"label": current.label, **current.as_record(), "note": current.note,
                          "default_action": matrix["default_action"],
                          "rules": [{"primitive": p, "action": a, "message": m, "rule": k}
                                    for p, a, m, k in rows]}, indent=2))
        return 0
    print(f"State: {current.state}   ({current.label})   project: {project}")
    if current.note:
        print(f"Note: {current.note}")
    print(f"Matrix: {', '.join(matrix['files'])}")
    width = max([len(r[0]) for r in rows] + [9])
    print(f"\n{'PRIMITIVE'.ljust(width)}  {'ACTION'.ljust(8)}  MESSAGE")
    for prim, action, message, _key in rows:
        print(f"{prim.ljust(width)}  {action.ljust(8)}  {message}")
    print(f"{'(other)'.ljust(width)}  {matrix['default_action'].ljust(8)}  default_action")
    summary = matrix["summary"][current.state]
    print(f"\nBlocked: {', '.join(summary['blocked']) or 'none'}")
    print(f"Ask:     {', '.join(summary['asked']) or 'none'}")
    print(f"Warned:  {', '.join(summary['warned']) or 'none'}")
    print(f"Network: {_network_rule(project, matrix, current.state)}")
    return 0


def _network_rule(project: str, matrix: dict[str, Any], state: str) -> str:
    from governance.sandbox import control

    if control.load_manifest(project) is None:
        return ("the sandbox is not part of governance, so only the tools' rules apply "
                "(`governance sandbox on` confines Bash commands too)")
    text = control.describe_rule(control.network_rule(matrix, state))
    return f"{text.replace('closed', 'closed to sandboxed commands', 1)}"
