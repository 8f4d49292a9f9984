"""``governance sandbox on|off|status``: Claude Code's Bash sandbox as part of governance."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from governance.sandbox.probe import Probe


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    on = sub.add_parser("on", help="confine every Bash command in the OS sandbox; the network "
                                   "follows the cycle state (refuses where it cannot start)")
    on.add_argument("--python", help="the interpreter our hooks run with (default: this one)")
    sub.add_parser("off", help="take back exactly the sandbox settings `on` added")
    show = sub.add_parser("status", help="configured? can it start here? the network rule now, "
                                         "and per state what the sandbox closes and what it "
                                         "leaves to the hook")
    show.add_argument("--json", action="store_true")
    for p in sub.choices.values():
        p.add_argument("--project", help="the project folder (default: the current project)")


def current(project: str) -> tuple[dict[str, object], str]:
    """The project's compiled matrix and the state in use."""
    from governance.policy import matrix as matrix_module
    from governance.policy.state import read_state

    matrix = matrix_module.load(project)
    return matrix, read_state(project, matrix).state


def turn_on(project: str, python: str | None = None, checked: Probe | None = None) -> list[str]:
    from governance.sandbox import control

    matrix, state = current(project)
    return control.turn_on(project, state, matrix, python, checked)


def run(args: argparse.Namespace) -> int:
    from governance.project import project_from_cli
    from governance.sandbox import control

    project = project_from_cli(args.project)
    if args.action == "on":
        for note in turn_on(project, args.python):
            print(note)
        return 0
    if args.action == "off":
        notes = control.turn_off(project)
        print("\n".join(notes) if notes else "The sandbox is not part of governance here; "
                                             "nothing to take back.")
        return 0
    matrix, state = current(project)
    report = control.status(project, matrix, state)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(describe(report, state))
    return 0 if report["governed"] and report["can_start"] and not report["drift"] else 1


def describe(report: dict[str, Any], state: str) -> str:
    lines = [f"Sandbox part of governance: {'yes' if report['governed'] else 'no'}"
             + ("" if report["governed"] else " (turn it on: governance sandbox on)"),
             f"Sandbox can start here: {'yes' if report['can_start'] else 'no'} "
             f"({report['platform']})"]
    if report["why_not"]:
        lines.append(f"  why not: {report['why_not']}")
    lines.append(f"Network for sandboxed commands now: {report['network']}"
                 + (f" ({', '.join(report['allowed_hosts'])})" if report["allowed_hosts"]
                    and report["network"] != "closed" else "")
                 + f"; the state {state} asks: {report['network_rule']}")
    proxy = report.get("proxy") or {}
    if proxy:
        lines.append(f"Governance's proxy for sandboxed commands: 127.0.0.1:{proxy['port']}, "
                     + ("running" if proxy["running"] else "not running (it starts with the next "
                        "session; until then sandboxed commands reach no host)"))
    lines.append("Per state (the sandbox confines Bash only; Write, Edit, WebFetch and MCP tools "
                 "run outside it and stay with the hook):")
    for row in report["states"]:
        mark = "*" if row["state"] == state else " "
        lines.append(f" {mark}{row['state']}: closes {'; '.join(row['closes'])}")
        lines.append(f"    network: {row['network_text']}")
        lines.append(f"    left to the hook: {', '.join(row['hook']) or 'nothing more'}")
    for item in report["drift"]:
        lines.append(f"  changed since `sandbox on`: {item}")
    return "\n".join(lines)
