"""``governance uninstall``: remove only our hooks from a project's settings."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("project_dir", nargs="?", help="the project (same as --project)")
    parser.add_argument("--project", help="the project folder (default: the current project)")


def run(args: argparse.Namespace) -> int:
    from governance import settings
    from governance.project import project_from_cli

    project = project_from_cli(args.project or args.project_dir)
    path = settings.settings_path(project)
    data = settings.load(path)
    removed = settings.remove_ours(data)
    if not removed:
        print(f"No governance hooks in {path}; nothing changed.")
        return 0
    backup = settings.save(path, data)
    print(f"Removed {removed} governance hook(s) from {path} (backup: {backup}). "
          "State and ledger in .claude/governance/ are kept.")
    return 0
