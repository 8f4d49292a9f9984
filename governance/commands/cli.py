"""The ``governance`` command: a thin argparse layer over plain functions.

Each subcommand lives in its own module under ``governance.commands`` exposing
``add_arguments(parser)`` and ``run(args) -> int``. Modules keep heavy imports inside ``run`` so that
building the parser stays cheap. Hooks never import this module.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from governance.errors import GovernanceError

# name -> (module, one-line help). Add a command by adding one line here.
COMMANDS: dict[str, tuple[str, str]] = {
    "state": ("governance.commands.state", "read, set or advance the cycle state"),
    "validate": ("governance.commands.validate", "validate the activity matrix (and accept it)"),
    "accept": ("governance.commands.accept", "accept the state, matrix and owned settings as "
                                             "they are now"),
    "install": ("governance.commands.install", "register the hooks in a project"),
    "uninstall": ("governance.commands.uninstall", "remove our hooks from a project"),
    "sandbox": ("governance.commands.sandbox", "Claude Code's Bash sandbox as part of governance"),
    "doctor": ("governance.commands.doctor", "check that governance works in a project"),
    "check": ("governance.commands.check", "decide a tool call as the PreToolUse hook would"),
    "statusline": ("governance.commands.statusline", "print the status line for Claude Code"),
    "ledger": ("governance.commands.ledger", "verify the audit ledger's records and chain"),
    "log": ("governance.commands.log", "recent ledger records, filtered, as a table or JSON"),
    "explain": ("governance.commands.explain", "the decision and result of one tool call"),
    "stats": ("governance.commands.stats", "ledger counts, denials and hook durations"),
    "pre-action": ("governance.commands.pre_action", "check, recall and record a decision at once"),
    "decisions": ("governance.commands.decisions", "record, review, query or show decisions"),
    "calibration": ("governance.commands.calibration", "confidence calibration from outcomes"),
    "guardrails": ("governance.commands.guardrails", "check an action against the guardrails"),
    "explain-command": ("governance.commands.explain_command", "show how a Bash command is analysed"),
    "memory": ("governance.commands.memory", "add, list, show, remove, import or export memories"),
    "knowledge": ("governance.commands.knowledge", "what knowledge a call gets and why; stats; "
                                                   "reindex"),
    "intent": ("governance.commands.intent", "list, show, select, clear or declare intents"),
    "trace": ("governance.commands.trace", "verify the trace of changes, show who wrote lines"),
    "serve": ("governance.commands.serve", "the resident server: CSTP for agents, hooks over HTTP"),
    "bypass": ("governance.commands.bypass", "let strict knowledge show without blocking, for a "
                                             "while"),
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser; with ``only``, just that command's module is imported (a CLI call stays fast)."""
    parser = argparse.ArgumentParser(
        prog="governance",
        description="Governance layer for Claude Code: cycle state, activity matrix, hooks.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, (module_name, help_text) in COMMANDS.items():
        if only is not None and name != only:
            sub.add_parser(name, help=help_text, add_help=False)
            continue
        module = importlib.import_module(module_name)
        command_parser = sub.add_parser(name, help=help_text, description=help_text)
        module.add_arguments(command_parser)
        command_parser.set_defaults(_run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    if words[:1] == ["statusline"]:  # as fast as a hook: no parser, no other command module
        from governance.session.statusline import main as statusline

        return statusline(words[1:])
    only = words[0] if words and words[0] in COMMANDS else None
    args = build_parser(only).parse_args(words)
    try:
        code: int = args._run(args)
    except GovernanceError as exc:
        print(f"governance: error: {exc.render()}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # output piped into head and the like
        return 0
    return code


if __name__ == "__main__":
    raise SystemExit(main())
