"""``governance intent list|show|select|clear|new``: the declared intents
(``.orchestration/active_intents.yaml``) and which one is active."""

from __future__ import annotations

import argparse
import json
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from governance.intent.spec import Intent


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="intent_command", metavar="ACTION")
    sub.required = True
    listing = sub.add_parser("list", help="the declared intents, and which one is active")
    show = sub.add_parser("show", help="one intent (default: the active one)")
    show.add_argument("intent_id", nargs="?", metavar="ID")
    select = sub.add_parser("select", help="make an active intent the selected one")
    select.add_argument("intent_id", metavar="ID")
    clear = sub.add_parser("clear", help="clear the selection")
    new = sub.add_parser("new", help="declare an intent in .orchestration/active_intents.yaml")
    new.add_argument("intent_id", metavar="ID")
    new.add_argument("--title", required=True)
    new.add_argument("--scope", action="append", required=True,
                     help="an owned path glob, gitignore-style (repeatable)")
    new.add_argument("--constraints", default="", help="text shown to the model")
    new.add_argument("--criterion", action="append", default=[],
                     help="an acceptance criterion (repeatable)")
    new.add_argument("--status", choices=("active", "done", "blocked"), default="active")
    for command in (listing, show, select, clear, new):
        command.add_argument("--project", help="project folder (default: found from the "
                                               "current one)")
    for command in (listing, show, select, clear):
        command.add_argument("--session", default="",
                             help="for this Claude Code session only (default: the project)")
    for command in (listing, show):
        command.add_argument("--json", dest="as_json", action="store_true", help="print JSON")


def run(args: argparse.Namespace) -> int:
    from governance.errors import GovernanceError
    from governance.intent import selection, spec
    from governance.policy import matrix as matrix_module
    from governance.policy.state import read_state
    from governance.project import project_from_cli

    project = project_from_cli(args.project)
    intents = spec.load(project)
    action = args.intent_command
    if action == "new":
        return _new(project, args, intents)
    if action == "clear":
        selection.choose(project, None, args.session)
        print("Cleared the selection" + (f" of session {args.session}" if args.session else ""))
        return 0
    if action == "select":
        intent = spec.find(intents, args.intent_id)
        if intent is None:
            raise GovernanceError(f"no intent {args.intent_id!r} in {spec.path(project)}",
                                  fix="see `governance intent list`, or declare it with "
                                      "`governance intent new`")
        if intent.status != "active":
            raise GovernanceError(f"{intent.id} is {intent.status}, not active",
                                  file=spec.path(project), key=f"{intent.id}.status",
                                  fix="set its status to active first")
        selection.choose(project, intent.id, args.session)
        print(f"Selected {intent.id}: {intent.title}"
              + (f" (session {args.session})" if args.session else " (every session without "
                                                                    "its own selection)"))
        return 0
    view = read_state(project, matrix_module.load(project))
    active_id, source = selection.selected(project, args.session, view.work_item)
    if source == "work item" and spec.find(intents, active_id) is None:
        active_id, source = "", ""
    if action == "list":
        if args.as_json:
            print(json.dumps({"active": active_id or None, "source": source or None,
                              "intents": [i.as_json() for i in intents]}, indent=2))
            return 0
        if not intents:
            print(f"No intents are declared ({spec.path(project)}). Declare one with: "
                  "governance intent new ID --title TEXT --scope GLOB")
        for intent in intents:
            mark = "*" if intent.id == active_id else " "
            print(f"{mark} {intent.id:<12} {intent.status:<8} {intent.title}   "
                  f"[{', '.join(intent.owned_scope)}]")
        if active_id:
            print(f"active: {active_id} (by {source})")
        return 0
    wanted = args.intent_id or active_id
    intent = spec.find(intents, wanted) if wanted else None
    if intent is None:
        raise GovernanceError(f"no intent {wanted!r}" if wanted else "no intent is active",
                              fix="see `governance intent list`")
    if args.as_json:
        print(json.dumps({**intent.as_json(), "active": intent.id == active_id}, indent=2))
        return 0
    print(f"{intent.id}: {intent.title} ({intent.status}"
          + (", active" if intent.id == active_id else "") + ")")
    print(f"owned scope: {', '.join(intent.owned_scope)}")
    if intent.constraints:
        print(f"constraints:\n{intent.constraints}")
    for criterion in intent.acceptance_criteria:
        print(f"  - [ ] {criterion}")
    return 0


def _new(project: str, args: argparse.Namespace, intents: list[Intent]) -> int:
    from governance.intent import spec

    entry = {"id": args.intent_id, "title": args.title, "status": args.status,
             "owned_scope": args.scope, "constraints": args.constraints,
             "acceptance_criteria": args.criterion}
    where = spec.path(project)
    spec.parse([*[i.as_json() for i in intents], entry], where)   # checks the new one, and ids
    import yaml

    try:
        with open(where, encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        text = ""
    data = yaml.safe_load(text) if text.strip() else None
    block = yaml.safe_dump([entry], sort_keys=False, allow_unicode=True, width=100)
    if isinstance(data, dict) or (not text.strip()):
        if not text.strip():
            text = ("# Intents: what may be changed, under which task (docs/intents.md).\n"
                    "intents:\n")
        text = text.rstrip("\n") + "\n" + "".join(f"  {line}\n" for line in block.splitlines())
    else:   # a top-level list
        text = text.rstrip("\n") + "\n" + block
    os.makedirs(os.path.dirname(where), exist_ok=True)
    spec.parse(yaml.safe_load(text), where)
    with open(where, "w", encoding="utf-8") as fh:
        fh.write(text)
    print(f"Declared {args.intent_id} in {where}")
    return 0
