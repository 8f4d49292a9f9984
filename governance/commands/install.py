"""``governance install``: register our hooks in a project's ``.claude/settings.json``."""

from __future__ import annotations

import argparse
import json
import os

from governance.errors import InstallError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("project_dir", nargs="?", help="the project (same as --project)")
    parser.add_argument("--project", help="the project folder (default: the current project)")
    parser.add_argument("--fail-closed", action="store_true",
                        help="deny tool calls when governance fails (hook arg --on-error block and "
                             "Claude Code's onFailure: block)")
    parser.add_argument("--session-hooks", action=argparse.BooleanOptionalAction, default=True,
                        help="SessionStart briefing and UserPromptSubmit state-change line "
                             "(default: on)")
    parser.add_argument("--statusline", action="store_true",
                        help="register the governance status line (keeps one you already have)")
    parser.add_argument("--replace-statusline", action="store_true",
                        help="register the status line even over an existing one")
    parser.add_argument("--slash-commands", action="store_true",
                        help="write /cycle and /governance-state into .claude/commands/")
    parser.add_argument("--mcp", action="store_true",
                        help="register the decision-intelligence MCP server in .mcp.json")
    parser.add_argument("--sandbox", action=argparse.BooleanOptionalAction, default=None,
                        help="make Claude Code's Bash sandbox part of governance (--sandbox "
                             "refuses where it cannot start; --no-sandbox leaves it out, or takes "
                             "it back). Default: on where it can start, for a project governance "
                             "is not installed in yet; an installed project keeps what it has")
    parser.add_argument("--http", action="store_true",
                        help="hooks over HTTP on the resident server (`governance serve`) instead "
                             "of a process per call; the token goes to .claude/settings.local.json")
    parser.add_argument("--mcp-hooks", action="store_true",
                        help="hooks through MCP: Claude Code's mcp_tool hooks call our stdio MCP "
                             "server, which it keeps running for the session (no daemon)")
    parser.add_argument("--port", type=int, default=None,
                        help="with --http: the server's port (default: the running server's, "
                             "else 8765)")
    parser.add_argument("--python", help="interpreter for the hook command (default: this one)")
    parser.add_argument("--repair", action="store_true",
                        help="write every registration again for this interpreter (after the tool "
                             "moved), with the transport and options the project already has")
    parser.add_argument("--dry-run", action="store_true", help="print the new settings only")
    parser.add_argument("--managed", action="store_true",
                        help="as root: register the hooks for every user of this machine in Claude "
                             "Code's managed settings, with the sandbox backstop and a starter "
                             "organisation matrix (no project needed; `uninstall --managed` takes "
                             "it back). Honours --fail-closed, --session-hooks, --sandbox, --python")
    parser.add_argument("--managed-only", action=argparse.BooleanOptionalAction, default=None,
                        help="with --managed: set allowManagedHooksOnly (Claude Code then runs only "
                             "managed hooks); --no-managed-only takes back the one we set")
    parser.add_argument("--org-key", metavar="FILE",
                        help="with --managed: install the organisation's Ed25519 public key (PEM), "
                             "which `governance org pull` checks bundles with")


def _warm_caches(project: str) -> None:
    """Validate and compile the configuration now, so the first tool call is as fast as the rest
    and a broken config shows up here rather than in the middle of a session."""
    from governance.decisions import guardrails
    from governance.errors import GovernanceError
    from governance.policy import matrix

    for name, load in (("activity matrix", matrix.load), ("guardrails", guardrails.load_compiled)):
        try:
            load(project)
        except GovernanceError as exc:
            print(f"WARNING: the {name} is invalid, so every tool call will report it until it is "
                  f"fixed: {exc.render()}")


def _server_url(project: str, port: int | None) -> str:
    from governance.server import daemon

    if port is None:
        running = daemon.read_record(project) or {}
        port = running.get("port") if isinstance(running.get("port"), int) else None
    return daemon.Listen(port=daemon.DEFAULT_PORT if port is None else port).url()


def _http_notes(project: str, fail_closed: bool) -> list[str]:
    """Give Claude Code the server's token (``env`` of the local settings, which are not
    committed) and say what happens while the server is down."""
    from governance.install import settings
    from governance.server import credential, daemon

    token = credential.load_or_create(project)
    local = settings.local_settings_path(project)
    data = settings.load(local)
    env = data.setdefault("env", {})
    if not isinstance(env, dict):
        raise InstallError("the env key is not an object", file=local, key="env",
                           fix="repair the file")
    notes = []
    if env.get(settings.TOKEN_ENV) != token:
        env[settings.TOKEN_ENV] = token
        settings.save(local, data)
        notes.append(f"Wrote the server token to {local} (env.{settings.TOKEN_ENV}).")
    up = daemon.status(project)
    notes.append("The server is running." if up["running"] else
                 f"The server is not running: start it with `governance serve --project "
                 f"{project} --detach` before Claude Code.")
    notes.append("While the server is down, Claude Code "
                 + ("denies every tool call (onFailure: block)." if fail_closed else
                    "lets tool calls through ungoverned (fail-open); add --fail-closed to deny "
                    "them instead."))
    return notes


def _mcp_hooks_notes(project: str, python: str, fail_closed: bool) -> list[str]:
    """Register the hooks' MCP server and approve it in the local settings."""
    from governance.install import settings
    from governance.install.mcp_entry import install_mcp
    from governance.policy.layer import HOOK_SERVER

    notes = [f"Registered the MCP server {HOOK_SERVER!r} in "
             f"{install_mcp(project, python, HOOK_SERVER)}"]
    local = settings.local_settings_path(project)
    data = settings.load(local)
    if settings.approve_hooks_server(data, True):
        settings.save(local, data)
        notes.append(f"Approved it in {local} (enabledMcpjsonServers).")
    notes.append("Claude Code starts it with each session and waits for it before the first hook; "
                 "if it cannot start, Claude Code "
                 + ("denies every tool call (onFailure: block)." if fail_closed else
                    "lets tool calls through ungoverned (fail-open); add --fail-closed to deny "
                    "them instead."))
    return notes


def _as_installed(project: str, args: argparse.Namespace) -> None:
    """For ``--repair``: take the options the project was installed with (its transport, port,
    failure mode, session hooks, status line, slash commands, MCP server, sandbox), so that
    install writes the same registrations again for this interpreter."""
    from governance.install import settings
    from governance.install.registration import installed_options
    from governance.project import cache_file

    found = installed_options(project, settings.load(settings.settings_path(project)))
    args.http, args.mcp_hooks = found["http"], found["mcp_hooks"]
    args.port = args.port if args.port is not None else found["port"]
    args.fail_closed = args.fail_closed or found["fail_closed"]
    args.session_hooks = found["session_hooks"]
    args.statusline = args.statusline or found["statusline"]
    for name in ("slash_commands", "mcp", "sandbox"):   # --repair keeps the project's sandbox
        setattr(args, name, getattr(args, name) or found[name])
    import shutil

    # compiled configs record where the installation was (the fence): compile them again
    shutil.rmtree(os.path.dirname(cache_file(project, "x")), ignore_errors=True)


def _managed_hooks_note(managed_events: dict[str, list[str]]) -> str:
    from governance.project import managed_settings_path

    return (f"Not registered in the project: the managed settings ({managed_settings_path()}) "
            f"already run governance's hooks for {', '.join(managed_events)}, and a second copy "
            "would decide and record every call twice.")


def run(args: argparse.Namespace) -> int:
    from governance.install import settings
    from governance.project import governance_dir, project_from_cli

    if getattr(args, "managed", False):   # a Namespace built by hand may lack it
        from governance.commands.managed import install

        return install(args)
    if getattr(args, "managed_only", None) is not None or getattr(args, "org_key", None):
        raise InstallError("--managed-only and --org-key go with --managed",
                           fix="run `governance install --managed ...` as root")
    if args.http and args.mcp_hooks:
        raise InstallError("--http and --mcp-hooks both carry the hooks; choose one",
                           fix="install with --http (a resident server you start) or with "
                               "--mcp-hooks (a server Claude Code starts per session)")
    project = project_from_cli(args.project or args.project_dir)
    if not os.path.isdir(project):
        raise InstallError(f"no such project folder {project!r}", fix="pass an existing folder")
    if args.repair:
        _as_installed(project, args)
    python = os.path.abspath(args.python) if args.python else settings.interpreter()
    if not os.access(python, os.X_OK):
        raise InstallError(f"the interpreter {python!r} is not executable",
                           fix="pass --python with the venv's python")
    checked = None
    if args.sandbox:  # before anything is written: a sandbox that cannot start is refused whole
        from governance.sandbox.probe import probe

        checked = probe()
        if not checked.ok:
            raise InstallError("Claude Code's sandbox cannot start on this machine: "
                               + "; ".join(checked.problems),
                               fix="; ".join(checked.fixes) + "; or install with --no-sandbox")
    entries: dict[str, list[dict[str, object]]] = {}
    for event, script in settings.EVENTS.items():
        script_path = os.path.join(settings.hook_scripts_dir(), script)
        if not os.path.isfile(script_path):
            raise InstallError(f"the hook script {script_path} is missing",
                               fix="reinstall claude-governance (pip install .)")
        entries[event] = [settings.handler(script, python, args.fail_closed)]
    from governance.install import session_entries

    notes: list[str] = []
    if args.session_hooks:
        entries.update(session_entries.session_hook_entries(python))
    if args.http:
        base = _server_url(project, args.port)
        for event in entries:   # fail-closed only where a hook can deny: PreToolUse
            if event in settings.HTTP_EVENTS:
                entries[event] = [settings.http_handler(base, event, args.fail_closed and
                                                        event == "PreToolUse")]
    if args.mcp_hooks:
        for event in entries:
            if event in settings.MCP_EVENTS:
                entries[event] = [settings.mcp_tool_handler(event, args.fail_closed and
                                                            event == "PreToolUse")]
    from governance.install import managed
    from governance.install.registration import readable

    managed_events = managed.our_hooks()
    if managed_events and (args.http or args.mcp_hooks):
        raise InstallError("the managed settings already run governance's hooks as commands for "
                           f"every project ({', '.join(managed_events)}), so hooks over "
                           f"{'HTTP' if args.http else 'MCP'} would decide every call twice",
                           fix="install without --http/--mcp-hooks, or ask the administrator "
                               "to run `governance uninstall --managed`")
    readable(project)
    path = settings.settings_path(project)
    data = settings.load(path)
    before = json.dumps(data, sort_keys=True)
    from governance.sandbox import default as sandbox_default

    installed = bool(settings.our_commands(data)) or bool(
        managed_events and os.path.isdir(governance_dir(project)))
    sandbox = sandbox_default.choose(project, args.sandbox, installed, checked)
    settings.remove_ours(data, list(entries) + (
        [] if args.session_hooks else list(session_entries.SESSION_EVENTS)))
    if managed_events:   # no second copy: each call would be decided and recorded twice
        settings.remove_ours(data, list(managed_events))
        entries = {event: handlers for event, handlers in entries.items()
                   if event not in managed_events}
        notes.append(_managed_hooks_note(managed_events))
    settings.add_ours(data, entries)
    settings.hide_hook_tool(data, args.mcp_hooks)
    if args.statusline or args.replace_statusline:
        notes.append(session_entries.merge_statusline(
            data, session_entries.statusline_entry(python), replace=args.replace_statusline)[1])
    if args.dry_run:
        print(json.dumps(data, indent=2))
        return 0
    from governance.policy import seal
    from governance.sandbox import control

    first_seal = seal.accepts_nothing(seal.read(project))   # a seal of built files only: none
    control.seal_settings(project, data, control.load_manifest(project))
    if json.dumps(data, sort_keys=True) == before:
        print(f"{'No change to' if managed_events else 'Already installed in'} {path}; nothing "
              "changed.")
    else:
        backup = settings.save(path, data)
        print(f"{'Updated' if managed_events else 'Installed governance hooks in'} {path}"
              + (f" (backup: {backup})" if backup else ""))
    os.makedirs(governance_dir(project), mode=0o700, exist_ok=True)
    from governance.install import gitignore

    notes.extend(gitignore.write(project))
    moved = settings.tidy_old_backups(project)
    if moved:
        notes.append(f"Moved {len(moved)} old backup(s) into {os.path.dirname(moved[0])}.")
    for event, handlers in entries.items():
        print(f"  {event}: {next(iter(settings.identity(handlers[0]).values()))}")
    if args.http and not args.dry_run:
        notes.extend(_http_notes(project, args.fail_closed))
    if args.mcp_hooks:
        notes.extend(_mcp_hooks_notes(project, python, args.fail_closed))
    else:   # hooks no longer through MCP: its server goes too
        from governance.install.mcp_entry import uninstall_mcp
        from governance.policy.layer import HOOK_SERVER

        if uninstall_mcp(project, HOOK_SERVER):
            notes.append(f"Removed the MCP server {HOOK_SERVER!r} (the hooks no longer go "
                         "through MCP).")
        local = settings.local_settings_path(project)
        approvals = settings.load(local)
        if settings.approve_hooks_server(approvals, False):
            settings.save(local, approvals)
    if args.slash_commands:
        for written in session_entries.write_slash_commands(project, python):
            notes.append(f"Wrote the slash command {written}")
    if args.mcp:
        from governance.install.mcp_entry import install_mcp

        notes.append(f"Registered the MCP server in {install_mcp(project, python)}")
    for note in notes:
        print(note)
    _warm_caches(project)
    if first_seal:  # from now on a change that bypasses governance is noticed
        from governance.commands.accept import accept_matrix, accept_state, state_problem
        from governance.policy import matrix as matrix_module

        accepted, lines = accept_matrix(project)
        print("\n".join(lines) if not accepted else lines[-1])
        if not accepted:
            print("WARNING: the project's activity matrix is invalid, so governance uses the "
                  "packaged default until you fix it and run `governance validate`.")
        problem = state_problem(project, matrix_module.load(project))
        print(accept_state(project) if problem is None else f"WARNING: {problem}")
    if sandbox.on:
        from governance.commands.sandbox import turn_on

        for note in turn_on(project, python, sandbox.checked):
            print(note)
    elif args.sandbox is False:
        for note in control.turn_off(project):
            print(note)
    if sandbox.note:
        print(sandbox.note)
    mode = "fail-closed (deny on governance failure)" if args.fail_closed else \
        "fail-open (a governance failure lets the call through and says so)"
    print(f"Mode: {mode}. Check it with: governance doctor --project {project}")
    return 0
