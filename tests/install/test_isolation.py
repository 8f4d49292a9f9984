"""Every interpreter governance registers or spawns runs isolated: nothing the agent writes in the
project (or puts on Python's search path through the environment Claude Code passes on) is imported.

The attack: the agent writes a ``governance/`` package, ``sitecustomize.py``, ``usercustomize.py``, a
``PYTHONSTARTUP`` script, a ``yaml.py`` and a ``.pth`` file into the project (and the user site), and
waits for the next session, when Claude Code starts our servers and hooks with the project as their
working folder. Each entry is started exactly as installed (its command read from
``.claude/settings.json``, ``.mcp.json``, the slash command files and the plugin's ``hooks.json``),
with and without ``PYTHONPATH``/``PYTHONSTARTUP``/``PYTHONHOME``/``PYTHONUSERBASE`` pointing into the
project; each must answer as it should and no planted file may run.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.helpers import REPO, install, recorded, run_command

PLANTED = ("governance/__init__.py", "governance/commands/__init__.py",
           "governance/decisions/__init__.py", "governance/server/__init__.py",
           "sitecustomize.py", "usercustomize.py", "startup.py", "yaml.py", "bootstrap.py")
USER_SITE = f"lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"
VARIANTS = ("plain", "python-env")


class Attack:
    """A project with planted files; ``marks`` is where any of them that runs leaves its name."""

    def __init__(self, project: Path, variant: str) -> None:
        self.project = project
        self.marks = project.parent / "marks"
        self.marks.mkdir()
        home = Path(os.environ["HOME"])
        for relative in PLANTED:
            self._plant(project / relative, relative)
        for base, where in ((home / ".local", "home"), (project / ".userbase", "userbase")):
            site = base / USER_SITE
            self._plant(site / "usercustomize.py", f"{where}-usercustomize")
            self._plant(site / "sitecustomize.py", f"{where}-sitecustomize")
            (site / "planted.pth").write_text(f"import os; {self._mark(where + '-pth')}\n")
        self.env: dict[str, str] = {"CLAUDE_PROJECT_DIR": str(project)}
        if variant == "python-env":   # what Claude Code passes on from its own environment
            self.env.update(PYTHONPATH=f"{project}{os.pathsep}.", PYTHONHOME=str(project),
                            PYTHONSTARTUP=str(project / "startup.py"),
                            PYTHONUSERBASE=str(project / ".userbase"), PYTHONINSPECT="",
                            PYTHONSAFEPATH="")

    def _mark(self, name: str) -> str:
        return f"open(os.path.join({str(self.marks)!r}, {name.replace('/', '.')!r}), 'w').close()"

    def _plant(self, path: Path, name: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"import os\n{self._mark(name)}\n")

    def ran(self) -> list[str]:
        return sorted(p.name for p in self.marks.iterdir())

    def environ(self, **extra: str) -> dict[str, str]:
        env = {**os.environ, **self.env}
        for name in ("PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PYTHONUSERBASE"):
            if name not in self.env:
                env.pop(name, None)
        return {**env, **extra}


@pytest.fixture(params=VARIANTS)
def attack(request: pytest.FixtureRequest, project: Path) -> Attack:
    return Attack(project, str(request.param))


def _settings(project: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((project / ".claude" / "settings.json").read_text())
    return data


def _commands(project: Path) -> dict[str, str]:
    """event (or ``statusLine``) -> the command install registered for it."""
    data = _settings(project)
    found = {event: groups[0]["hooks"][0]["command"] for event, groups in data["hooks"].items()
             if groups[0]["hooks"][0].get("type", "command") == "command"}
    found["statusLine"] = data["statusLine"]["command"]
    return found


def _payload(event: str, project: Path) -> str:
    name = {"PreToolUse": "PreToolUse-Read.json", "PostToolUse": "PostToolUse-Read.json",
            "PostToolUseFailure": "PostToolUseFailure-Read.json"}.get(event, f"{event}.json")
    return json.dumps(recorded(name, project))


def _answers_as_a_hook(event: str, out: bytes) -> None:
    """A PreToolUse hook always answers; the others answer when they have something to say."""
    if event != "PreToolUse" and not out.strip():
        return
    answer = json.loads(out)
    if event == "PreToolUse":
        assert answer["hookSpecificOutput"]["hookEventName"] == "PreToolUse", answer
    assert "could not start" not in json.dumps(answer), answer


COMMAND_ENTRIES = ("PreToolUse", "PostToolUse", "PostToolUseFailure", "SessionStart",
                   "UserPromptSubmit", "statusLine")


@pytest.mark.parametrize("entry", COMMAND_ENTRIES)
def test_command_entries_import_nothing_from_the_project(attack: Attack, entry: str) -> None:
    project = attack.project
    install(project, False, "--statusline")
    command = _commands(project)[entry]
    stdin = (json.dumps({"session_id": "s", "cwd": str(project), "workspace": {
        "current_dir": str(project), "project_dir": str(project)}}) if entry == "statusLine"
        else _payload(entry, project))
    done = run_command(command, stdin, env=attack.environ(), cwd=str(project))
    assert done.returncode == 0, done.stderr
    if entry == "statusLine":
        line = done.stdout.decode()
        assert "EXPLORE" in line and "unavailable" not in line, line
    else:
        _answers_as_a_hook(entry, done.stdout)
    assert attack.ran() == []


def _initialize(argv: list[str], cwd: Path, env: dict[str, str]) -> list[str]:
    """Start a stdio MCP server as Claude Code does and list its tools."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=argv[0], args=argv[1:], cwd=str(cwd), env=env)
    tools: list[str] = []

    async def main() -> None:
        with anyio.fail_after(60):
            async with stdio_client(params) as (read, write), \
                    ClientSession(read, write) as session:
                await session.initialize()
                tools.extend(tool.name for tool in (await session.list_tools()).tools)

    anyio.run(main)
    return tools


@pytest.mark.parametrize(("server", "flag", "tool"), [
    ("governance", "--mcp", "select_active_intent"),
    ("governance-hooks", "--mcp-hooks", "decide_tool_call")])
def test_mcp_servers_import_nothing_from_the_project(attack: Attack, server: str, flag: str,
                                                     tool: str) -> None:
    project = attack.project
    install(project, False, flag)
    entry = json.loads((project / ".mcp.json").read_text())["mcpServers"][server]
    tools = _initialize([entry["command"], *entry["args"]], project,
                        attack.environ(**entry["env"]))
    assert tool in tools
    assert attack.ran() == []


@pytest.mark.parametrize("name", ["cycle.md", "governance-state.md"])
def test_slash_commands_import_nothing_from_the_project(attack: Attack, name: str) -> None:
    project = attack.project
    install(project, False, "--slash-commands")
    text = (project / ".claude" / "commands" / name).read_text()
    line = next(line for line in text.splitlines() if line.startswith("!`"))
    command = line[2:].rstrip("`").replace("$ARGUMENTS", "implementation-cycle/DO/WORK-7")
    done = run_command(command, "", env=attack.environ(), cwd=str(project))
    assert done.returncode == 0, done.stdout + done.stderr
    assert b"DO" in done.stdout
    assert attack.ran() == []


def _plugin_entries() -> list[tuple[str, list[str]]]:
    data = json.loads((REPO / "hooks" / "hooks.json").read_text())
    return [(event, [handler["command"], *handler.get("args", [])])
            for event, groups in data["hooks"].items() for group in groups
            for handler in group["hooks"]]


@pytest.mark.parametrize(("event", "argv"), _plugin_entries(), ids=[e for e, _ in _plugin_entries()])
def test_plugin_hooks_import_nothing_from_the_project(attack: Attack, tmp_path: Path, event: str,
                                                      argv: list[str]) -> None:
    """The plugin's hooks run ``python3`` from PATH (here, this venv's interpreter)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} \"$@\"\n")
    (bin_dir / "python3").chmod(0o755)
    words = [word.replace("${CLAUDE_PLUGIN_ROOT}", str(REPO)) for word in argv]
    env = attack.environ(CLAUDE_PLUGIN_ROOT=str(REPO),
                         PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run(words, input=_payload(event, attack.project).encode(), env=env,
                          cwd=str(attack.project), capture_output=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    _answers_as_a_hook(event, done.stdout)
    assert attack.ran() == []


def _cli(attack: Attack, *args: str) -> subprocess.CompletedProcess[str]:
    """``governance ARGS`` typed by the user in the project folder (the CLI itself from this
    checkout; what it starts is under test)."""
    code = ("import sys; sys.path.insert(0, sys.argv.pop(1)); "
            "from governance.commands.cli import main; raise SystemExit(main(sys.argv[1:]))")
    return subprocess.run([sys.executable, "-I", "-c", code, str(REPO), *args],
                          cwd=str(attack.project), env=attack.environ(), capture_output=True,
                          text=True, timeout=120, check=False)


def _stop(project: Path) -> None:
    record = project / ".claude" / "governance" / "server.json"
    try:
        os.kill(int(json.loads(record.read_text())["pid"]), signal.SIGTERM)
    except (OSError, ValueError, KeyError):
        pass


def test_the_detached_server_imports_nothing_from_the_project(attack: Attack) -> None:
    project = attack.project
    install(project)
    try:
        done = _cli(attack, "serve", "--project", str(project), "--port", "0", "--detach")
        assert done.returncode == 0, done.stdout + done.stderr
        assert "Server up at" in done.stdout
        status = _cli(attack, "serve", "--project", str(project), "--status")
        assert status.returncode == 0 and "running at" in status.stdout
    finally:
        _stop(project)
    assert attack.ran() == []


def test_the_demo_imports_nothing_from_the_folder_it_is_run_in(attack: Attack) -> None:
    done = _cli(attack, "demo")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "governance state set" in done.stdout
    assert attack.ran() == []


def test_a_hook_started_without_isolation_still_imports_only_ours(attack: Attack) -> None:
    """``python3 hooks/pre_tool_use.py`` (no ``-I``, as a hand-written registration might run it)
    with the project as working folder and on PYTHONPATH: the bootstrap drops both from
    ``sys.path`` before importing, so the project's ``governance/`` and ``yaml.py`` never run (what
    the interpreter itself loads at start-up, like ``sitecustomize.py``, only ``-I`` keeps out)."""
    project = attack.project
    install(project)
    env = attack.environ(PYTHONPATH=f"{project}{os.pathsep}.")
    env.pop("PYTHONHOME", None)
    done = subprocess.run([sys.executable, "-S", str(REPO / "hooks" / "pre_tool_use.py")],
                          input=_payload("PreToolUse", project).encode(), env=env,
                          cwd=str(project), capture_output=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    _answers_as_a_hook("PreToolUse", done.stdout)
    assert not [name for name in attack.ran() if name.startswith(("governance", "yaml"))]


def test_a_governance_imported_before_ours_is_refused(project: Path, tmp_path: Path) -> None:
    """A ``sitecustomize.py`` on PYTHONPATH that imports the project's ``governance`` first: the
    hook does not run that package's code as ours; a fail-closed PreToolUse denies."""
    (project / "governance").mkdir()
    (project / "governance" / "__init__.py").write_text("")
    (project / "sitecustomize.py").write_text("import governance\n")
    install(project, True)
    done = subprocess.run([sys.executable, str(REPO / "hooks" / "pre_tool_use.py"),
                           "--on-error", "block"],
                          input=_payload("PreToolUse", project).encode(),
                          env={**os.environ, "PYTHONPATH": str(project)}, cwd=str(project),
                          capture_output=True, timeout=60, check=False)
    answer = json.loads(done.stdout)
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert f"a governance package at {project}" in answer["systemMessage"]


def test_doctor_names_registrations_without_isolation_and_repair_isolates_them(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``.mcp.json``, the slash commands and the status line as earlier versions wrote them
    (``python -m MODULE``, the ``governance`` console script): doctor names each, ``install
    --repair`` writes them isolated."""
    from governance.commands.cli import main

    install(project, False, "--mcp", "--slash-commands", "--statusline")
    python = sys.executable
    path = project / ".mcp.json"
    data = json.loads(path.read_text())
    data["mcpServers"]["governance"]["args"] = ["-m", "governance.decisions.mcp_server",
                                                "--project", str(project)]
    path.write_text(json.dumps(data))
    console = str(Path(python).parent / "governance")
    for name in ("cycle.md", "governance-state.md"):
        command = project / ".claude" / "commands" / name
        text = command.read_text()
        command.write_text(text.replace(
            text.split("!`")[1].split(" state")[0], shlex.quote(console)))
    settings_path = project / ".claude" / "settings.json"
    settings = json.loads(settings_path.read_text())
    settings["statusLine"]["command"] = f"{python} {REPO}/hooks/statusline.py"
    settings_path.write_text(json.dumps(settings))

    capsys.readouterr()
    assert main(["doctor", "--project", str(project)]) == 1
    said = capsys.readouterr().out
    for where in ("MCP server 'governance' in .mcp.json", "slash command /cycle",
                  "slash command /governance-state", "status line"):
        assert f"the {where} starts python without -I" in said, where
    assert main(["install", "--repair", "--project", str(project)]) == 0
    capsys.readouterr()
    main(["doctor", "--project", str(project)])
    assert "without -I" not in capsys.readouterr().out
    entry = json.loads(path.read_text())["mcpServers"]["governance"]
    assert entry["args"][0] == "-I"
    assert f"{python} -I " in (project / ".claude" / "commands" / "cycle.md").read_text()
