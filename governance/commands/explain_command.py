"""``governance explain-command '<cmd>'``: how one Bash command is analysed and decided.

Prints every simple command the parser found, the acts the shell patterns produced (primitive,
segment, reason) and, when a project is available, the action each act gets in the current (or a
given) state and the decision for the whole call. Useful when writing ``shell.commands`` patterns.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("shell_command", metavar="COMMAND", help="the Bash command, quoted")
    parser.add_argument("--project", help="the project folder (default: the current project)")
    parser.add_argument("--state", help="decide in this state instead of the current one")
    parser.add_argument("--cwd", help="the command's working folder (default: the project)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


def run(args: argparse.Namespace) -> int:
    from governance.errors import GovernanceError
    from governance.shell.analysis import analyse_command
    from governance.shell.parser import LimitError, ParseError, parse

    command: str = args.shell_command
    layer, problem = _layer(args)
    if layer is not None:
        from governance.policy.matrix import load_shell

        shell = load_shell(layer.project_dir, layer.matrix) or {}
        cwd = args.cwd or layer.project_dir
        acts, _ = layer.acts_for("Bash", {"command": command}, cwd)
    else:
        from governance.shell.schema import load_default_shell

        shell = load_default_shell()
        acts = analyse_command(command, shell, is_protected=_no_project_protection,
                               cwd=args.cwd)
    try:
        limits = shell.get("limits") or {}
        segments = [c.segment for c in parse(command, limits.get("max_nesting", 48),
                                             limits.get("max_words", 4000))]
    except (ParseError, LimitError, RecursionError) as exc:
        segments = [f"(not parsed: {exc})"]
    result: dict[str, Any] = {
        "command": command, "segments": segments,
        "acts": [_act(a) for a in acts],
    }
    if layer is not None:
        try:
            decision = layer.decide("Bash", {"command": command}, args.cwd or layer.project_dir)
        except GovernanceError as exc:
            problem = exc.render()
        else:
            result["state"] = decision.state.state
            result["acts"] = decision.acts
            result["decision"] = {"action": decision.action, "primitive": decision.primitive,
                                  "segment": decision.segment, "message": decision.message,
                                  "rule": f"{decision.rule_key} in {decision.rule_file}"}
    if problem:
        result["note"] = problem
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _print(result)
    return 0


def _layer(args: argparse.Namespace) -> tuple[Any, str]:
    """The project's GovernanceLayer, or None and why (acts are then shown without actions)."""
    from governance.errors import GovernanceError, PayloadError
    from governance.policy.layer import GovernanceLayer
    from governance.policy.state import StateView
    from governance.project import project_from_cli

    project = project_from_cli(args.project)
    if not os.path.isdir(os.path.join(project, ".claude")):  # compiling would write a cache there
        return None, (f"no decision: {project} is not a governed project (no .claude folder), so "
                      "the acts are shown without actions; pass --project DIR for a project's "
                      "decision")
    try:
        layer = GovernanceLayer(project)
    except (GovernanceError, ValueError, OSError) as exc:
        text = exc.render() if isinstance(exc, GovernanceError) else str(exc)
        return None, f"no decision: the project's matrix cannot be loaded ({text})"
    if args.state:
        if args.state not in layer.matrix["states"]:
            raise PayloadError(f"unknown state {args.state!r}",
                               fix=f"use one of {', '.join(layer.matrix['states'])}")
        layer._state = StateView(args.state, source="given")
    return layer, ""


def _act(act: Any) -> dict[str, Any]:
    found: dict[str, Any] = {"primitive": act.primitive, "segment": act.segment,
                             "reason": act.reason}
    for key in ("secrets", "hosts"):      # the taint flow: which secret goes to which host
        if getattr(act, key, None) is not None:
            found[key] = getattr(act, key)
    return found


def _no_project_protection(path: str) -> bool:
    norm = os.path.normpath(path)
    return norm.startswith((".claude/settings", os.path.join(".claude", "governance")))


def _print(result: dict[str, Any]) -> None:
    print(f"Command:   {result['command']}")
    print("Segments:")
    for segment in result["segments"]:
        print(f"  {segment}")
    print("Acts:")
    for act in result["acts"]:
        action = f"{act['action']:<8} " if "action" in act else ""
        print(f"  {act['primitive']:<18} {action}{act['segment']}")
        if act.get("reason"):
            print(f"  {'':<18} {'':<{len(action)}}({act['reason']})")
        if act.get("secrets"):
            print(f"  {'':<18} {'':<{len(action)}}secrets: {', '.join(act['secrets'])}")
        if act.get("hosts"):
            print(f"  {'':<18} {'':<{len(action)}}hosts:   {', '.join(act['hosts'])}")
    decision = result.get("decision")
    if decision:
        print(f"State:     {result['state']}")
        print(f"Decision:  {decision['action']} ({decision['primitive']}: {decision['segment']})")
        print(f"Rule:      {decision['rule']}")
        if decision["message"]:
            print(f"Message:   {decision['message']}")
    if result.get("note"):
        print(f"Note:      {result['note']}")
