"""``governance install``: register our hooks in a project's ``.claude/settings.json``."""

from __future__ import annotations

import argparse
import json
import os

from governance.errors import InstallError

GITIGNORE = """# Local governance data: state, ledger, caches. Commit activity_matrix.yaml if you override it.
.cache/
*.lock
*.tmp
errors.log
ledger*
state.json
decisions.db*
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("project_dir", nargs="?", help="the project (same as --project)")
    parser.add_argument("--project", help="the project folder (default: the current project)")
    parser.add_argument("--fail-closed", action="store_true",
                        help="deny tool calls when governance fails (hook arg --on-error block and "
                             "Claude Code's onFailure: block)")
    parser.add_argument("--python", help="interpreter for the hook command (default: this one)")
    parser.add_argument("--dry-run", action="store_true", help="print the new settings only")


def run(args: argparse.Namespace) -> int:
    from governance import settings
    from governance.project import governance_dir, project_from_cli

    project = project_from_cli(args.project or args.project_dir)
    if not os.path.isdir(project):
        raise InstallError(f"no such project folder {project!r}", fix="pass an existing folder")
    python = os.path.abspath(args.python) if args.python else settings.interpreter()
    if not os.access(python, os.X_OK):
        raise InstallError(f"the interpreter {python!r} is not executable",
                           fix="pass --python with the venv's python")
    entries: dict[str, list[dict[str, object]]] = {}
    for event, script in settings.EVENTS.items():
        script_path = os.path.join(settings.hook_scripts_dir(), script)
        if not os.path.isfile(script_path):
            raise InstallError(f"the hook script {script_path} is missing",
                               fix="reinstall claude-governance (pip install .)")
        entries[event] = [settings.handler(script, python, args.fail_closed)]
    path = settings.settings_path(project)
    data = settings.load(path)
    before = json.dumps(data, sort_keys=True)
    settings.remove_ours(data, list(entries))
    settings.add_ours(data, entries)
    if args.dry_run:
        print(json.dumps(data, indent=2))
        return 0
    if json.dumps(data, sort_keys=True) == before:
        print(f"Already installed in {path}; nothing changed.")
    else:
        backup = settings.save(path, data)
        print(f"Installed governance hooks in {path}" + (f" (backup: {backup})" if backup else ""))
    gov = governance_dir(project)
    os.makedirs(gov, mode=0o700, exist_ok=True)
    ignore = os.path.join(gov, ".gitignore")
    if not os.path.exists(ignore):
        with open(ignore, "w", encoding="utf-8") as fh:
            fh.write(GITIGNORE)
    for event, handlers in entries.items():
        print(f"  {event}: {handlers[0]['command']}")
    mode = "fail-closed (deny on governance failure)" if args.fail_closed else \
        "fail-open (a governance failure lets the call through and says so)"
    print(f"Mode: {mode}. Check it with: governance doctor --project {project}")
    return 0
