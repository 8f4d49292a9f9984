"""``governance explain TOOL_USE_ID | 'COMMAND'``: the decision on one tool call, the rule, the
state, the config hash and the result of the call, from the ledger; or, given a Bash command
rather than an id, how that command is analysed and decided (what ``explain-command`` prints).
The ledger's archived segments are read where they are on this machine."""

from __future__ import annotations

import argparse

ID_PREFIX = "toolu_"  # Claude Code's tool_use_id


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("call", metavar="TOOL_USE_ID|COMMAND",
                        help="a tool call's id (toolu_..., see `governance log`), or a Bash "
                             "command in quotes")
    parser.add_argument("--project", help="the project folder (default: the current project)")
    parser.add_argument("--state", help="for a Bash command: decide in this state instead of "
                                        "the current one")
    parser.add_argument("--json", action="store_true", help="print the records (or the analysis) "
                                                            "as JSON")


def looks_like_id(text: str) -> bool:
    """An id is one word; Claude Code's start with ``toolu_``."""
    return text.startswith(ID_PREFIX) and not any(c.isspace() for c in text)


def run(args: argparse.Namespace) -> int:
    import json
    import sys

    from governance.ledger.reader import explain
    from governance.ledger.report import explain_text
    from governance.project import governance_dir, project_from_cli

    text: str = args.call
    found = None
    if text.strip() and not any(c.isspace() for c in text):  # an id is one word
        found = explain(governance_dir(project_from_cli(args.project)), text)
    if found is not None and (found["decisions"] or found["results"]):
        if args.json:
            print(json.dumps(found, indent=2, ensure_ascii=False, sort_keys=True))
        else:
            print(explain_text(found))
        return 0
    if looks_like_id(text) or not text.strip():
        print(f"governance: no ledger record has tool_use_id {text!r}: `governance log` lists the "
              "recent calls with their ids", file=sys.stderr)
        away = _archived_away(governance_dir(project_from_cli(args.project)))
        if away:
            print(f"note: {away} archived segment(s) are not on this machine (see "
                  "ledger.archive.json); the call may be in them", file=sys.stderr)
        return 1
    print(f"note: {text!r} is not the id of a recorded tool call, so it is explained as a Bash "
          f"command (as `governance explain-command` does)", file=sys.stderr)
    from governance.commands import explain_command

    return explain_command.run(argparse.Namespace(
        shell_command=text, project=args.project, state=args.state, cwd=None, json=args.json))


def _archived_away(gov_dir: str) -> int:
    """How many archived segments are not on this machine (their records cannot be explained)."""
    from governance.ledger import archive

    try:
        return sum(1 for part in archive.chain_parts(gov_dir) if part.path is None)
    except ValueError:
        return 0
