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
from typing import NoReturn

from governance.errors import GovernanceError

# name -> (module, one-line help). Add a command by adding one line here.
COMMANDS: dict[str, tuple[str, str]] = {
    "status": ("governance.commands.status", "where governance stands in a project, in a few "
                                             "lines (start here)"),
    "demo": ("governance.commands.demo", "a tour of governed tool calls in a temporary project"),
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
    "explain": ("governance.commands.explain", "the decision and result of one tool call (by "
                                               "its id), or how a Bash command is decided"),
    "stats": ("governance.commands.stats", "ledger counts, denials and hook durations"),
    "report": ("governance.commands.report", "one self-contained HTML page of decisions, "
                                             "denials, knowledge, intents and the ledger's state"),
    "export": ("governance.commands.export", "send the ledger's records to an OpenTelemetry "
                                             "collector (OTLP), once or as they are written"),
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
    "db": ("governance.commands.db", "the decision store's engine and schema: status, migrate "
                                     "(PostgreSQL)"),
    "secrets": ("governance.commands.secrets", "the secrets and egress hosts in force, tainted "
                                               "sessions; end a taint"),
    "bypass": ("governance.commands.bypass", "let strict knowledge show without blocking, for a "
                                             "while"),
    "token": ("governance.commands.token", "per-agent tokens of the server: add (printed "
                                           "once), list, revoke"),
    "org": ("governance.commands.org", "the organisation layer: pull its signed bundle, keygen, "
                                       "sign, status"),
    "reference": ("governance.commands.reference", "write the reference pages (matrix format, CLI) "
                                                   "generated from the code"),
}

# Commands (and their actions; None: every action) that write governance files into the project.
# They refuse a folder where governance is not installed instead of creating them there.
WRITES: dict[str, set[str] | None] = {
    "state": None, "accept": None, "validate": None, "bypass": None, "pre-action": None,
    "intent": {"select", "clear", "new"}, "memory": {"add", "rm", "import"},
    "decisions": {"record", "review"}, "sandbox": {"on", "off"}, "knowledge": {"reindex"},
    "secrets": {"clear"},
}


class Parser(argparse.ArgumentParser):
    """argparse, with the nearest names suggested for a command it does not know."""

    def error(self, message: str) -> NoReturn:
        for action in self._actions:
            name = argparse._get_action_name(action)
            if (isinstance(action, argparse._SubParsersAction)
                    and message.startswith(f"argument {name}: invalid choice: ")):
                word = message.split("invalid choice: ", 1)[1].split("'")[1]
                noun = "command" if name == "COMMAND" else "action"
                message = unknown_command(word, list(action.choices), self.prog, noun)
        super().error(message)


def unknown_command(word: str, names: list[str], prog: str, noun: str = "command") -> str:
    """A sentence naming the unknown ``word`` and the nearest of ``names`` (close spellings
    first, then names that start with or contain it)."""
    import difflib

    near = difflib.get_close_matches(word, names, n=3, cutoff=0.6)
    near += [name for name in names if name not in near and len(word) >= 3
             and (name.startswith(word) or word in name)][: 3 - len(near)]
    hint = f"; did you mean {' or '.join(f'`{prog} {n}`' for n in near)}?" if near else ""
    return f"unknown {noun} {word!r}{hint} (`{prog} --help` lists them all)"


class _Version(argparse.Action):
    """``--version``, looked up only when asked for (importlib.metadata is not free)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS,
                 default: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        from governance.project import installed_version

        print(f"{parser.prog} {installed_version()}")
        parser.exit()


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser; with ``only``, just that command's module is imported (a CLI call stays fast)."""
    parser = Parser(
        prog="governance",
        description="Governance layer for Claude Code: cycle state, activity matrix, hooks.",
        epilog="Start with `governance status`; `governance demo` shows a tour.",
    )
    parser.add_argument("--version", action=_Version, help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
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


def require_installed(args: argparse.Namespace) -> None:
    """Raise when ``args`` asks a command to write governance files into a folder where
    governance is not installed (no ``.claude`` folder there or above; the home folder's
    ``.claude`` is user configuration, not a project)."""
    import os

    from governance.project import project_from_cli

    if args.command not in WRITES or getattr(args, "file", None):  # validate --file only reads
        return
    actions = WRITES[args.command]
    action = next((value for key, value in vars(args).items()
                   if key == "action" or key.endswith("_command")), None)
    if actions is not None and action not in actions:
        return
    project = project_from_cli(getattr(args, "project", None))
    home = os.path.realpath(os.path.expanduser("~"))
    if os.path.isdir(os.path.join(project, ".claude")) and project != home:
        return
    words = " ".join(str(w) for w in (args.command, action) if w)
    raise GovernanceError(
        f"governance is not installed in {project} (no .claude folder there or above it), so "
        f"`governance {words}` would create its files in a folder that is not a governed "
        "project; nothing was changed",
        fix=f"install it with `governance install --project {project}`, or pass --project "
            "with the folder of a governed project")


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    if words[:1] == ["statusline"]:  # as fast as a hook: no parser, no other command module
        from governance.session.statusline import main as statusline

        return statusline(words[1:])
    # Only the named command's module is imported; for anything else (--help, --version, an
    # unknown word) the command names and their one-line help are enough.
    only = words[0] if words and words[0] in COMMANDS else ""
    args = build_parser(only).parse_args(words)
    try:
        require_installed(args)
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
