"""``governance trace verify|show|intent``: the Agent Trace of the changes made under intents
(``.orchestration/agent_trace.jsonl``)."""

from __future__ import annotations

import argparse
import json

from governance.commands.options import project_option


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="trace_command", metavar="ACTION")
    sub.required = True
    verify = sub.add_parser("verify", help="every record complete and the chain unbroken")
    show = sub.add_parser("show", help="which intent, session and call wrote a file's lines, "
                                       "and whether they are unchanged")
    show.add_argument("target", metavar="FILE[:LINE]")
    intent = sub.add_parser("intent", help="every file and range an intent touched")
    intent.add_argument("intent_id", metavar="ID")
    project_option(verify, show, intent, as_json=True)


def run(args: argparse.Namespace) -> int:
    from governance.intent import provenance, trace
    from governance.ledger.redaction import redact
    from governance.project import project_from_cli

    project = project_from_cli(args.project)
    if args.trace_command == "verify":
        good, problems = provenance.verify(project)
        if args.as_json:
            print(json.dumps({"ok": not problems, "records": good, "problems": problems},
                             indent=2))
        else:
            for problem in problems:
                print(f"{trace.path(project)}: {problem}")
            print(f"{'INVALID' if problems else 'OK'}: {good} record(s) verify"
                  + (f", {len(problems)} problem(s)" if problems else ""))
        return 1 if problems else 0
    if args.trace_command == "show":
        name, _, line = args.target.rpartition(":") if ":" in args.target else (
            args.target, "", "")
        if not line.isdigit():
            name, line = args.target, ""
        found = provenance.show(project, name, int(line) if line else None)
    else:
        found = provenance.by_intent(project, args.intent_id)
    if args.as_json:
        print(json.dumps(found, indent=2))
        return 0
    if not found:
        print("No traced change matches.")
    for item in found:
        state = ("unchanged" if item["unchanged"] else "changed since") if "unchanged" in item \
            else ""
        print(f"{item['path']}:{item['start_line']}-{item['end_line']}  intent "
              f"{item.get('intent') or '-'}  session {redact(str(item['session']))}  "
              f"{item['tool']}  {item['timestamp']}  {state}".rstrip())
    return 0
