"""``governance pre-action --json FILE|-``: the one call before a significant decision.

Input: ``{"agent_id": ..., "action": {...}, "options": {...}}``. Output: the pre-action result as
JSON. Exit 0 when the action is allowed, 3 when a guardrail blocks it, 2 on bad input.
"""

from __future__ import annotations

import argparse
import os

BLOCKED_EXIT = 3


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", required=True, metavar="FILE",
                        help="JSON request {agent_id, action, options}; - reads standard input")
    parser.add_argument("--agent", help="agent id when the request has none "
                                        "(default: $GOVERNANCE_AGENT_ID, else 'claude')")
    parser.add_argument("--project", help="project folder (default: found from the current one)")


def run(args: argparse.Namespace) -> int:
    import json

    from governance.decisions.fields import DecisionInputError, load_json
    from governance.decisions.pre_action import pre_action
    from governance.project import project_from_cli

    request = load_json(args.json)
    if not isinstance(request, dict) or "action" not in request:
        raise DecisionInputError("expected an object with 'action' (and optional 'agent_id', "
                                 "'options').", key="request", file=args.json)
    unknown = sorted(set(request) - {"agent_id", "action", "options"})
    if unknown:
        raise DecisionInputError(f"unknown field(s) {unknown}.", key="request", file=args.json,
                                 fix="send only agent_id, action and options.")
    agent = request.get("agent_id") or args.agent or os.environ.get("GOVERNANCE_AGENT_ID",
                                                                    "claude")
    result = pre_action(project_from_cli(args.project), agent, request["action"],
                        request.get("options"))
    print(json.dumps(result, indent=2))
    return 0 if result["allowed"] else BLOCKED_EXIT
