"""``governance uninstall``: remove only our hooks from a project's settings."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("project_dir", nargs="?", help="the project (same as --project)")
    parser.add_argument("--project", help="the project folder (default: the current project)")
    parser.add_argument("--managed", action="store_true",
                        help="as root: take back exactly what `install --managed` added to Claude "
                             "Code's managed settings and beside them (no project needed)")


def run(args: argparse.Namespace) -> int:
    import os

    if getattr(args, "managed", False):   # a Namespace built by hand may lack it
        from governance.commands.managed import uninstall

        return uninstall(args)
    from governance.install import settings
    from governance.install.mcp_entry import uninstall_mcp
    from governance.install.session_entries import COMMANDS_DIR, remove_statusline, slash_commands
    from governance.project import project_from_cli

    project = project_from_cli(args.project or args.project_dir)
    from governance.install.registration import readable

    readable(project)
    path = settings.settings_path(project)
    data = settings.load(path)
    removed = settings.remove_ours(data)
    status = remove_statusline(data)
    hidden = settings.hide_hook_tool(data, False)
    if removed or status or hidden:
        from governance.sandbox import control

        control.seal_settings(project, data, control.load_manifest(project))
        backup = settings.save(path, data)
        print(f"Removed {removed} governance hook(s)" + (" and the status line" if status else "")
              + f" from {path} (backup: {backup}).")
    else:
        print(f"No governance hooks in {path}.")
    for name in slash_commands(None):
        command = os.path.join(project, COMMANDS_DIR, name)
        try:
            with open(command, encoding="utf-8") as fh:
                content = fh.read()
        except OSError:
            continue
        ours = "governance" in content and (" state set" in content or " state show" in content)
        if ours:
            os.unlink(command)
            print(f"Removed the slash command {command}")
    if uninstall_mcp(project):
        print(f"Removed the MCP server(s) from {os.path.join(project, '.mcp.json')}")
    local = settings.forget_local(project)
    if local:
        print(f"Removed the server token and MCP approval from {local}")
    from governance.sandbox.control import turn_off

    for note in turn_off(project):
        print(note)
    from governance.install.gitignore import remove as remove_ignores

    for note in remove_ignores(project):
        print(note)
    print("State and ledger in .claude/governance/ are kept.")
    return 0
