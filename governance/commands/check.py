"""``governance check``: decide a tool call exactly as the PreToolUse hook would, and show why."""

from __future__ import annotations

import argparse
import json
import sys

from governance.errors import PayloadError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("tool", nargs="?", help="tool name, e.g. WebFetch, Bash, mcp__memory__store")
    parser.add_argument("--input", default="{}", help="tool_input as JSON (default {})")
    parser.add_argument("--payload", help="a whole PreToolUse payload file, or - for stdin")
    parser.add_argument("--state", help="decide in this state instead of the current one")
    parser.add_argument("--project", help="the project folder (default: the current project)")
    parser.add_argument("--json", action="store_true", help="print the hook answer as JSON only")


def run(args: argparse.Namespace) -> int:
    from governance.hook import answer as hook_answer
    from governance.policy import matrix as matrix_module
    from governance.policy.layer import GovernanceLayer
    from governance.policy.state import StateView
    from governance.project import project_from_cli

    if args.payload:
        if args.payload == "-":
            text = sys.stdin.read()
        else:
            with open(args.payload, encoding="utf-8") as fh:
                text = fh.read()
        data = json.loads(text)
        tool, tool_input, cwd = data.get("tool_name"), data.get("tool_input") or {}, data.get("cwd")
    else:
        tool, cwd = args.tool, None
        try:
            tool_input = json.loads(args.input)
        except ValueError as exc:
            raise PayloadError(f"--input is not JSON ({exc})") from None
    if not isinstance(tool, str) or not tool or not isinstance(tool_input, dict):
        raise PayloadError("name a tool and give --input as a JSON object",
                           fix="e.g. governance check WebFetch --input '{\"url\": \"https://x\"}'")
    layer = GovernanceLayer(project_from_cli(args.project))
    if args.state:
        if args.state not in layer.matrix["states"]:
            raise PayloadError(f"unknown state {args.state!r}",
                               fix=f"use one of {', '.join(layer.matrix['states'])}")
        layer._state = StateView(args.state, source="given")
    decision = layer.decide(tool, tool_input, cwd)
    decision.tool = tool
    state = decision.state.state
    answer = hook_answer.pre_tool_use(decision, layer.blocked_primitives(state),
                                 matrix_module.allowed_states(layer.matrix, decision.primitive),
                                 bool(layer.matrix["settings"]["grant_on_allow"]),
                                 project=layer.project_dir)
    if args.json:
        print(json.dumps(answer, indent=2))
        return 0
    print(f"Tool:      {tool}")
    print(f"State:     {state} ({decision.state.label})")
    print(f"Primitive: {decision.primitive}  (mapped by {decision.map_rule})")
    for act in decision.acts:
        if act.get("segment"):
            print(f"  act: {act['primitive']:<18} {act['action']:<8} {act['segment']}")
    print(f"Action:    {decision.action}  (rule {decision.rule_key} in {decision.rule_file})")
    if decision.message:
        print(f"Message:   {decision.message}")
    print("Hook answer:")
    print(json.dumps(answer, indent=2))
    return 0
