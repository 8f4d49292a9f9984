"""``governance statusline``: print the status line for Claude Code (status-line JSON on stdin).

The work is in ``governance.session.statusline`` (standard library only), which the CLI can also call
before building its parser, to keep this command as fast as a hook.
"""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Read Claude Code's status-line JSON on stdin and print one line: state, "
                          "work item, blocked primitives and this session's denials.")


def run(args: argparse.Namespace) -> int:
    from governance.session.statusline import main

    return main([])
