"""``governance guardrails check|list``: check a decision against the guardrails, or list them."""

from __future__ import annotations

import argparse
import os

BLOCKED_EXIT = 3


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="guardrails_command", metavar="ACTION")
    sub.required = True
    check = sub.add_parser("check", help="check an action {category, stakes, confidence, "
                                         "context, ...}; exit 3 when blocked")
    check.add_argument("--json", required=True, metavar="FILE",
                       help="JSON action object; - reads standard input")
    check.add_argument("--agent", help="requesting agent (default: $GOVERNANCE_AGENT_ID)")
    listing = sub.add_parser("list", help="list the active guardrails (validates the files)")
    for command in (check, listing):
        command.add_argument("--project", help="project folder (default: found from the "
                                               "current one)")


def run(args: argparse.Namespace) -> int:
    import json

    from governance.decisions.fields import DecisionInputError, load_json
    from governance.decisions.guardrails import check_guardrails, load_compiled
    from governance.project import project_from_cli

    project = project_from_cli(args.project)
    if args.guardrails_command == "list":
        compiled = load_compiled(project)
        for rule in compiled["rules"]:
            where = " (also in the PreToolUse hook)" if rule["tool_call"] else ""
            print(f"{rule['id']:36} {rule['severity']:5} {rule['name']}{where}")
        print(f"settings: {json.dumps(compiled['settings'], sort_keys=True)}")
        return 0
    action = load_json(args.json)
    if not isinstance(action, dict):
        raise DecisionInputError(f"expected a JSON object, got {action!r}.", key="action",
                                 file=args.json)
    agent = args.agent or os.environ.get("GOVERNANCE_AGENT_ID", "claude")
    result = check_guardrails(action, project, agent)
    print(json.dumps(result, indent=2))
    return 0 if result["allowed"] else BLOCKED_EXIT
