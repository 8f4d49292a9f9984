"""``governance doctor``: is governance really working in this project? Each problem with its fix."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

    from governance.install.registration import Broken


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("project_dir", nargs="?", help="the project (same as --project)")
    parser.add_argument("--project", help="the project folder (default: the current project)")


class Report:
    """The findings, one line each: ``ok``, ``note``, or ``FAIL`` with its one fix on the same
    line. A finding that only repeats one already printed (two checks that reach the same cause)
    is not printed again."""

    def __init__(self) -> None:
        self.problems = 0
        self.seen: list[str] = []

    def ok(self, text: str) -> None:
        print(f"  ok    {_one_line(text)}")

    def bad(self, text: str, fix: str) -> None:
        """A problem and its fix ("" when the text already ends with the fix to run)."""
        text = _one_line(text)
        if self.covers(text):   # e.g. a check that stopped at a file already reported
            return
        self.seen.append(text)
        self.problems += 1
        print(f"  FAIL  {text.rstrip('.')}; fix: {fix}" if fix else f"  FAIL  {text}")

    def covers(self, text: str) -> bool:
        """True when ``text`` only repeats a problem already reported."""
        text = _one_line(text)
        return any(seen in text for seen in self.seen)

    def note(self, text: str) -> None:
        print(f"  note  {_one_line(text)}")

    def each(self, found: Iterable[tuple[bool | None, str, str]]) -> None:
        """Checks as (ok, what, fix): None a note, True ok, False a problem."""
        for ok, what, fix in found:
            if ok is None:
                self.note(what)
            elif ok:
                self.ok(what)
            else:
                self.bad(what, fix)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def run(args: argparse.Namespace) -> int:
    from governance.install import settings
    from governance.install.registration import broken
    from governance.project import installed_version, project_from_cli

    project = project_from_cli(args.project or args.project_dir)
    report = Report()
    print(f"Project: {project}")
    print(f"Governance: {installed_version()} (python {sys.executable})")
    data = _settings_or_none(project)
    gone = broken(project, data or {})
    from governance.install import managed

    central = managed.our_hooks()
    _registration(project, report, gone, central)
    _managed(data, report)
    from governance.policy.derived import audit  # before anything here builds them again

    for problem in audit(project):
        report.bad(problem, "")
    matrix = _matrix(project, report)
    if matrix is not None:
        _state(project, matrix, report)
    _ledger(project, report)
    _sops(project, report)
    _git_ignores(project, report)
    _decisions(project, report)
    commands = {**central, **settings.our_commands(data or {})}   # the project's, else managed
    broken_where = {item.where for item in gone}
    if commands.get("PreToolUse", [""])[0].startswith(("http://", "https://")):
        _server(project, commands["PreToolUse"][0], report)
    elif commands.get("PreToolUse", [""])[0].startswith("mcp:"):
        _mcp_hooks(project, report)
    elif commands.get("PreToolUse") and "PreToolUse hook" not in broken_where:
        _live(project, commands["PreToolUse"][0], report)
    from governance.install.mcp_entry import check as check_mcp

    for ok, what, fix in check_mcp(project, broken_where):
        if ok:
            report.ok(what)
        else:
            report.bad(what, fix)
    if data is not None:
        from governance.install.session_entries import check

        for ok, what, fix in check(project, _with_managed_hooks(data), broken_where):
            if ok:
                report.ok(what)
            else:
                report.note(f"{what} (optional: {fix})")
    if matrix is not None:
        _sandbox(project, matrix, report)
        _fence(project, matrix)
    print("All checks passed." if not report.problems else f"{report.problems} problem(s) found.")
    return 0 if not report.problems else 1


def _managed(data: dict[str, object] | None, report: Report) -> None:
    """The managed layer, installed by an administrator for every user: its hooks, who installed
    them, allowManagedHooksOnly, the sandbox backstop, the organisation's matrix and key."""
    from governance.install import managed_check, settings

    report.each(managed_check.check(settings.our_commands(data or {})))


def _with_managed_hooks(data: dict[str, object]) -> dict[str, object]:
    """The project's settings with the managed settings' hooks added (Claude Code runs both), for
    the checks that ask whether a hook is registered at all."""
    from governance.errors import InstallError
    from governance.install import managed

    try:
        central = managed.read_settings().get("hooks")
    except InstallError:
        return data
    own = data.get("hooks")
    hooks: dict[str, list[object]] = {}
    for source in (own, central):
        for event, groups in (source.items() if isinstance(source, dict) else []):
            hooks.setdefault(event, []).extend(groups if isinstance(groups, list) else [])
    return {**data, "hooks": hooks}


def _decisions(project: str, report: Report) -> None:
    """The decision settings in force: fail-open or fail-closed, and the quality rule."""
    from governance.decisions.failure_policy import deployment_summary

    ok, what, fix = deployment_summary(project)
    if ok:
        report.ok(what)
    else:
        report.bad(what, fix)


def _git_ignores(project: str, report: Report) -> None:
    """Git ignores every local or secret file governance wrote, and none a team shares."""
    from governance.install.gitignore import check

    report.each(check(project))


def _sops(project: str, report: Report) -> None:
    """Each SOP that does not parse: the hook skips it, so its knowledge never reaches the model."""
    from governance.knowledge.validation import sop_problems

    for path, problem, fix in sop_problems(project):
        report.bad(f"SOP skipped, it does not parse: {path}: {problem}", fix)


def _sandbox(project: str, matrix: dict[str, object], report: Report) -> None:
    from governance.errors import GovernanceError
    from governance.policy.state import read_state
    from governance.sandbox import control

    state = read_state(project, matrix).state
    try:
        found = control.status(project, matrix, state)
    except GovernanceError as exc:
        report.bad(f"the sandbox settings cannot be checked: {exc.render()}",
                   "repair the file named, then run `governance sandbox on`")
        return
    from governance.sandbox.protection import EVIDENT, level

    reached = level(found)
    (report.note if reached.name == EVIDENT else report.ok)(f"protection level: {reached.line()}")
    if not found["governed"]:
        where = "it can start here" if found["can_start"] else f"it cannot start here: " \
            f"{found['why_not']}"
        report.note(f"the OS sandbox is not part of governance ({where}; optional: "
                    "governance sandbox on)")
        return
    if found["can_start"]:
        report.ok(f"the OS sandbox is part of governance and can start ({found['platform']})")
    else:
        report.bad(f"the OS sandbox is part of governance but cannot start here, so Claude Code "
                   f"will refuse to start: {found['why_not']}",
                   "fix the machine as said, or `governance sandbox off`")
    for item in found["drift"]:
        report.bad(f"sandbox settings changed since `sandbox on`: {item}",
                   "run `governance sandbox on` to write them again")
    if not found["drift"]:
        left = next(row["hook"] for row in found["states"] if row["state"] == state)
        report.ok(f"network for sandboxed commands in {state}: {found['network_rule']}; left "
                  f"to the hook: the file, web and MCP tools (outside the sandbox) and "
                  f"{', '.join(left) or 'nothing more'}")


def _fence(project: str, matrix: dict[str, object]) -> None:
    """Every place the hooks keep the agent from changing, through any tool."""
    from governance.policy.layer import GovernanceLayer

    places = GovernanceLayer(project, matrix).protected_places()
    print(f"Protected from the agent ({len(places)} places; writes are governance-admin):")
    for place in places:
        print(f"        {place}")


def _settings_or_none(project: str) -> dict[str, object] | None:
    from governance.errors import InstallError
    from governance.install import settings

    try:
        return settings.load(settings.settings_path(project))
    except InstallError:
        return None


def _registration(project: str, report: Report, gone: list[Broken],
                  central: dict[str, list[str]]) -> None:
    """Our hooks for the tool events are registered once each (in the project or in the managed
    settings, ``central``: the managed layer's lines report both at once), and every registration
    of ours (``gone``: those whose interpreter or script is missing) can run."""
    from governance.errors import InstallError
    from governance.install import settings

    path = settings.settings_path(project)
    try:
        data = settings.load(path)
    except InstallError as exc:
        report.bad(f"{exc.file}: {exc.message}", f"repair the JSON, then run: governance install "
                                                 f"--project {project}")
        return
    found = settings.our_commands(data)
    missing = {item.where: item for item in gone}
    for event in settings.EVENTS:
        commands = found.get(event, [])
        if not commands and central.get(event):
            report.ok(f"{event} hook registered in the managed settings: {central[event][0]}")
            continue
        if not commands:
            report.bad(f"{event} hook not registered in {path}",
                       f"run: governance install --project {project}")
            continue
        if len(commands) > 1:
            report.bad(f"{event} hook registered {len(commands)} times in {path}",
                       f"run: governance install --project {project} (it de-duplicates)")
        elsewhere = settings.served_elsewhere(commands[0])
        if elsewhere is not None:
            report.ok(f"{event} hook registered {elsewhere}")
        elif f"{event} hook" not in missing:
            report.ok(f"{event} hook registered: {commands[0]}")
    for item in gone:   # the tool moved or was uninstalled: Claude Code gets exit 127
        report.bad(f"the {item.where} runs {item.missing}, which is gone, so it cannot run "
                   f"(command: {item.command})",
                   f"governance install --repair --project {project}")
    from governance.install.registration import exposed

    for found_exposed in exposed(project, data):   # written by an earlier version
        if found_exposed.where not in missing:
            report.bad(f"the {found_exposed.where} starts python without -I, so a governance/ "
                       "folder, sitecustomize.py or PYTHONPATH in the project would run in place "
                       f"of governance (command: {found_exposed.command})",
                       f"governance install --repair --project {project}")


def _matrix(project: str, report: Report) -> dict[str, object] | None:
    from governance.errors import GovernanceError
    from governance.policy import matrix as matrix_module

    try:
        matrix = matrix_module.load(project)
    except GovernanceError as exc:
        report.bad(f"activity matrix invalid: {exc.render()}", "run: governance validate")
        return None
    if matrix.get("unaccepted"):   # the text ends with its fix (`governance validate`)
        report.bad(str(matrix["unaccepted"]), "")
    report.ok("the activity matrix accepted last is in force and valid" if matrix.get("unaccepted")
              else f"activity matrix in force is valid ({', '.join(matrix['files'])})")
    if matrix.get("org_file"):
        _org_layer(project, matrix, report)
    return matrix


def _org_layer(project: str, matrix: dict[str, object], report: Report) -> None:
    """Both layers, and every project cell the organisation's floor overrules (as ``validate``
    lists them)."""
    from governance.policy import matrix as matrix_module
    from governance.policy.compiler import compile_matrix

    org = matrix_module.org_source()
    if org is None:
        return
    default, override, config_hash = matrix_module.accepted_sources(
        project, matrix.get("seal"))  # type: ignore[arg-type]
    _compiled, problems = compile_matrix(default, override, config_hash, org)
    ignored = [p for p in problems if p.level == "warning" and p.file != org[0]
               and "organisation" in p.message]
    report.ok(f"layers: the organisation's {org[0]} is a floor over the project's "
              f"{override[0] if override else 'packaged default'}; "
              f"{len(ignored)} project setting(s) it overrules")
    for problem in ignored:
        report.note(f"warning: {problem.file}: at key {problem.key}: {problem.message}")


def _state(project: str, matrix: dict[str, object], report: Report) -> None:
    from governance.policy.state import read_state

    view = read_state(project, matrix)
    if view.source == "sealed":
        report.bad(view.note, "set the state from a terminal (governance state set), or accept "
                              "the file as it is (governance accept)")
    elif view.source == "fallback":
        from governance.policy import remedy

        report.bad(view.note, f"set the state: {remedy.state_set(project)}")
    elif view.source == "unset":
        report.note(view.note)
    else:
        report.ok(f"state {view.state} ({view.label})")


def _ledger(project: str, report: Report) -> None:
    from governance.project import governance_dir

    folder = governance_dir(project)
    probe = os.path.join(folder, f".doctor-{os.getpid()}")
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        with open(probe, "w") as fh:
            fh.write("ok")
        os.unlink(probe)
        report.ok(f"ledger folder writable ({folder})")
    except OSError as exc:
        report.bad(f"cannot write in {folder} ({exc.strerror}): decisions cannot be recorded",
                   "make the folder writable by the user who runs Claude Code")
    _anchor(folder, report)


def _anchor(folder: str, report: Report) -> None:
    """The ledger against its anchors outside the project (cheap: the few records they name)."""
    from governance.ledger.witness import FIX, check

    for found in check(folder):
        if found.failed:
            report.bad(found.line(), FIX)
        elif found.state == "none":
            report.note(found.line())
        else:
            report.ok(found.line())
        for note in found.notes:
            report.note(note)


def _server(project: str, url: str, report: Report) -> None:
    """Hooks over HTTP: is the server up, and does it answer a PreToolUse call with the token
    Claude Code will send?"""
    from governance.install import settings
    from governance.server import credential, daemon

    found = daemon.status(project)
    if not found["running"]:
        report.bad(f"the hooks go to {url}, but the governance server is not running "
                   f"({found['why']}): Claude Code's failure policy decides every tool call",
                   f"governance serve --project {project} --detach")
        return
    report.ok(f"the governance server is running at {found['url']} (pid {found['pid']})")
    local = settings.load(os.path.join(project, ".claude", "settings.local.json"))
    token = credential.load_or_create(project)
    env = local.get("env") if isinstance(local.get("env"), dict) else {}
    if not isinstance(env, dict) or env.get(settings.TOKEN_ENV) != token:
        report.bad(f"Claude Code does not have the server's token (env.{settings.TOKEN_ENV} in "
                   f".claude/settings.local.json), so every hook call gets 401",
                   f"governance install --http --project {project}")
    payload = {"session_id": "governance-doctor", "cwd": project, "hook_event_name": "PreToolUse",
               "tool_name": "Read", "tool_input": {"file_path": os.path.join(project, "README.md")},
               "tool_use_id": "doctor", "transcript_path": "", "permission_mode": "default"}
    base, _, path = url.partition("/hooks/")
    try:
        code, body = daemon.request(base, "/hooks/" + path, token=token,
                                    body=json.dumps(payload).encode(), timeout=10)
        context = json.loads(body)["hookSpecificOutput"]["additionalContext"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        report.bad(f"the server did not answer a PreToolUse call at {url} ({exc})",
                   f"governance serve --project {project} --stop, then start it again")
        return
    report.ok(f"live PreToolUse call over HTTP answered ({code}): {context.splitlines()[0]}")


def _mcp_hooks(project: str, report: Report) -> None:
    """Hooks through MCP: start the server the way Claude Code will (its ``.mcp.json`` entry) and
    make one PreToolUse call on it."""
    from governance.errors import InstallError
    from governance.install.mcp_entry import load_servers
    from governance.policy.layer import HOOK_SERVER, HOOK_TOOL

    try:
        entry = load_servers(project).get(HOOK_SERVER)
    except InstallError as exc:
        report.bad(exc.render(), f"repair it, then run: governance install --mcp-hooks "
                                 f"--project {project}")
        return
    if not isinstance(entry, dict) or not entry.get("command"):
        report.bad(f"the hooks go to the MCP server {HOOK_SERVER!r}, which .mcp.json does "
                   "not register: Claude Code's failure policy decides every tool call",
                   f"governance install --mcp-hooks --project {project}")
        return
    arguments: dict[str, object] = {
        "event": "PreToolUse", "session_id": "governance-doctor", "cwd": project,
        "tool_name": "Read", "tool_use_id": "doctor", "permission_mode": "default",
        "tool_input": {"file_path": os.path.join(project, "README.md")}}
    try:
        text = _call_stdio_tool([str(entry["command"]), *map(str, entry.get("args") or [])],
                                {**{str(k): str(v) for k, v in (entry.get("env") or {}).items()}},
                                project, HOOK_TOOL, arguments)
        context = json.loads(text)["hookSpecificOutput"]["additionalContext"]
    except Exception as exc:   # whatever went wrong is the finding
        report.bad(f"the MCP server {HOOK_SERVER!r} did not answer a PreToolUse call "
                   f"({type(exc).__name__}: {exc})",
                   f"governance install --mcp-hooks --project {project}, then doctor again")
        return
    report.ok(f"live PreToolUse call through MCP answered: {context.splitlines()[0]}")


def _call_stdio_tool(argv: list[str], env: dict[str, str], cwd: str, tool: str,
                     arguments: dict[str, object]) -> str:
    """Start a stdio MCP server, call one tool, return its text (30 s at most)."""
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def call() -> str:
        params = StdioServerParameters(command=argv[0], args=argv[1:], cwd=cwd,
                                       env={**os.environ, **env})
        with anyio.fail_after(30):
            async with stdio_client(params) as (read, write), \
                    ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool(tool, arguments)
        text = "".join(getattr(block, "text", "") for block in result.content)
        if result.is_error:
            raise RuntimeError(text)
        return text

    return anyio.run(call)


def _live(project: str, command: str, report: Report) -> None:
    payload = {"session_id": "governance-doctor", "cwd": project, "hook_event_name": "PreToolUse",
               "tool_name": "Read", "tool_input": {"file_path": os.path.join(project, "README.md")},
               "tool_use_id": "doctor", "transcript_path": "", "permission_mode": "default"}
    try:
        done = subprocess.run(command, shell=True, input=json.dumps(payload), text=True,
                              capture_output=True, timeout=30, cwd="/",
                              env={**os.environ, "CLAUDE_PROJECT_DIR": project})
    except subprocess.TimeoutExpired:
        report.bad("the PreToolUse hook did not answer within 30 s", "run governance doctor again")
        return
    try:
        answer = json.loads(done.stdout)
        context = answer["hookSpecificOutput"]["additionalContext"]
    except (ValueError, KeyError, TypeError):
        report.bad(f"the PreToolUse hook answered exit {done.returncode} with {done.stdout[:200]!r}"
                   f" {done.stderr[:200]!r}", "run: governance install, then doctor again")
        return
    said = str(answer.get("systemMessage", "")).removeprefix("Governance:").strip()
    if said and not report.covers(said):
        from governance.project import governance_dir

        named = "`governance " in said or "Fix:" in said or "fix:" in said
        report.bad(f"the PreToolUse hook reports: {said}", "" if named else
                   f"read {os.path.join(governance_dir(project), 'errors.log')} for the cause, "
                   "then run `governance validate`")
    else:
        report.ok(f"live PreToolUse call answered: {context.splitlines()[0]}"
                  + (" (with the problem reported above)" if said else ""))
