"""``governance decisions record|review|query|show``: the project's decision memory."""

from __future__ import annotations

import argparse
import os
from typing import Any


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="decisions_command", metavar="ACTION")
    sub.required = True
    record = sub.add_parser("record", help="record a decision (no guardrail check; use "
                                           "pre-action for that)")
    record.add_argument("--json", required=True, metavar="FILE",
                        help="JSON action {description, category, stakes, confidence, reasons, "
                             "tags, pattern, context}; - reads standard input")
    record.add_argument("--agent", help="agent id (default: $GOVERNANCE_AGENT_ID, else 'claude')")
    review = sub.add_parser("review", help="record the outcome of a decision")
    review.add_argument("decision_id", metavar="ID")
    review.add_argument("--outcome", required=True,
                        choices=("success", "partial", "failure", "abandoned"))
    review.add_argument("--note", default="", help="what happened")
    query = sub.add_parser("query", help="find decisions by text (BM25) and filters")
    query.add_argument("text", nargs="?", help="words to search for (omit for newest first)")
    query.add_argument("--category")
    query.add_argument("--tag", action="append", default=[], help="required tag (repeatable)")
    query.add_argument("--outcome", choices=("success", "partial", "failure", "abandoned",
                                             "unreviewed"))
    query.add_argument("--agent")
    query.add_argument("--since", help="2026-05-01, 2026-05-01T12:00:00Z or an age like 7d")
    query.add_argument("--until", help="same forms as --since")
    query.add_argument("--limit", type=int, default=10)
    query.add_argument("--ranking", choices=("keyword", "hybrid"),
                       help="default: $GOVERNANCE_RANKING, else the ranking setting")
    show = sub.add_parser("show", help="show one decision")
    show.add_argument("decision_id", metavar="ID")
    for command in (review, query, show):
        command.add_argument("--json", dest="as_json", action="store_true", help="print JSON")
    for command in (record, review, query, show):
        command.add_argument("--project", help="project folder (default: found from the "
                                               "current one)")


def _print_decision(item: dict[str, Any]) -> None:
    outcome = item["outcome"] or "unreviewed"
    similarity = f"  similarity {item['similarity']:.2f}" if "similarity" in item else ""
    print(f"{item['id']}  {item['created_at']}  {item['category']}/{item['stakes']}  "
          f"confidence {item['confidence']:.2f}  {outcome}{similarity}")
    print(f"    {item['description']}")
    print(f"    pattern: {item['pattern'] or '-'}  tags: {', '.join(item['tags']) or '-'}")


def run(args: argparse.Namespace) -> int:
    import json

    from governance.decisions import fields
    from governance.decisions.guardrails import load_compiled
    from governance.decisions.pre_action import current_state, ranking_mode
    from governance.decisions.store import DecisionStore
    from governance.project import project_from_cli

    project = project_from_cli(args.project)
    command = args.decisions_command
    if command == "record":
        settings = load_compiled(project)["settings"]
        action = fields.action(fields.load_json(args.json), require_tags=False,
                               require_pattern=False)
        agent = fields.agent(args.agent or os.environ.get("GOVERNANCE_AGENT_ID",
                                                                  "claude"))
    store = DecisionStore.for_project(project)
    try:
        if command == "record":
            from governance.decisions.quality import complete

            filled, quality = complete(action, settings, store)
            result: Any = {**store.record(filled, agent, current_state(project)),
                           "quality": quality}
        elif command == "review":
            result = store.review(args.decision_id, args.outcome, args.note)
        elif command == "show":
            result = store.get(args.decision_id)
            if result is None:
                raise fields.DecisionInputError(
                    f"no decision with id {args.decision_id!r}.", key="ID",
                    fix="use an id from `governance decisions query`.")
        else:
            ranking = args.ranking or ranking_mode(load_compiled(project)["settings"])
            result = store.query(args.text, ranking=ranking, category=args.category, tags=args.tag,
                                 outcome=args.outcome, agent_id=args.agent,
                                 since=fields.moment(args.since, "--since"),
                                 until=fields.moment(args.until, "--until"),
                                 limit=max(1, args.limit))
    finally:
        store.close()
    if command == "record" or getattr(args, "as_json", False):
        print(json.dumps(result, indent=2))
    elif command == "query":
        for item in result:
            _print_decision(item)
        if not result:
            print("no matching decisions")
    else:
        _print_decision(result)
        if result["outcome_note"]:
            print(f"    note: {result['outcome_note']}")
    return 0
