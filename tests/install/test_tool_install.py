"""Installed as a tool, the way a user installs it: the wheel ``uv build`` makes goes through
``uv tool install``, the repository through ``pipx install``, each into a temporary home. The hooks
the tool's own ``governance install`` registers answer recorded payloads, keep answering after a
forced reinstall and an upgrade, and after the tool moved ``doctor`` names the broken registration
and ``install --repair`` mends it. The tool names its version and runs the demo from its own files.

Everything runs the real uv and pipx (the dev extra installs both) with the current interpreter
(no Python downloads), one build per session. A missing uv or pipx, or a package index out of
reach, skips with the reason.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import PAYLOAD_DIR, REPO, recorded

DIST = "claude-governance"
# What a tool prints when it cannot reach the package index (uv, then pip).
OFFLINE = re.compile(
    r"failed to fetch|error sending request|dns error|tcp connect error|network is unreachable"
    r"|temporary failure in name resolution|max retries exceeded|newconnectionerror"
    r"|could not find a version that satisfies|no matching distribution found", re.IGNORECASE)
# The parts of the environment that would let a tool or the installed copy see this checkout,
# the developer's venv or the real home's tool settings.
LEAKY = ("UV_", "PIPX_", "PYTHON", "VIRTUAL_ENV", "CONDA_", "CLAUDE_", "GOVERNANCE_", "XDG_")
# The Claude Code events a plain `governance install` registers, with a recorded payload each.
EVENT_PAYLOADS = {
    "PreToolUse": "PreToolUse-Read.json",
    "PostToolUse": "PostToolUse-Read.json",
    "PostToolUseFailure": "PostToolUseFailure-Read.json",
    "SessionStart": "SessionStart.json",
    "UserPromptSubmit": "UserPromptSubmit.json",
}
DO_STATE = ["implementation-cycle", "DO", "WORK-7"]  # a state whose matrix blocks web-fetch


# --- running the tools -----------------------------------------------------------------------
def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """This process's environment without anything pointing at the checkout or the real home;
    HOME, the XDG folders and uv's cache under ``home``; Python builds never downloaded."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(LEAKY)}
    for name, sub in (("HOME", ""), ("XDG_CACHE_HOME", ".cache"), ("XDG_CONFIG_HOME", ".config"),
                      ("XDG_DATA_HOME", ".local/share"), ("XDG_STATE_HOME", ".local/state"),
                      ("XDG_BIN_HOME", ".local/bin")):
        env[name] = str(home / sub) if sub else str(home)
    env.update(UV_PYTHON_DOWNLOADS="never", UV_NO_PROGRESS="1", PIPX_DEFAULT_PYTHON=sys.executable,
               GOVERNANCE_SANDBOX_PROXY_IDLE="20")   # a sandbox proxy install starts stops
    env.update(extra)
    return env


def run(argv: list[str], env: dict[str, str], what: str, cwd: Path,
        expect: int | None = 0) -> subprocess.CompletedProcess[str]:
    """Run ``argv``; when it fails for want of the package index, skip, naming it; when it fails
    otherwise (or ``expect`` differs), fail with its output."""
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=600,
                          check=False)
    output = done.stdout + done.stderr
    if done.returncode != 0 and OFFLINE.search(output):
        lines = [line for line in output.splitlines() if OFFLINE.search(line)]
        pytest.skip(f"{what} needs the package index, which is out of reach here: {lines[0].strip()}")
    if expect is not None and done.returncode != expect:
        pytest.fail(f"{what} exited {done.returncode} (expected {expect}):\n{output[-4000:]}")
    return done


def uv_binary() -> str:
    try:
        from uv import find_uv_bin  # the `uv` package of the dev extra
    except ImportError:
        found = shutil.which("uv")
    else:
        try:
            found = find_uv_bin()
        except FileNotFoundError:
            found = shutil.which("uv")
    if not found:
        pytest.skip("uv is not installed (the dev extra installs it: pip install '.[dev]')")
    return found


def pipx_argv() -> list[str]:
    import importlib.util

    if importlib.util.find_spec("pipx") is not None:
        return [sys.executable, "-m", "pipx"]
    found = shutil.which("pipx")
    if not found:
        pytest.skip("pipx is not installed (the dev extra installs it: pip install '.[dev]')")
    return [found]


@dataclass(frozen=True)
class Build:
    """The source tree as a clean copy (a build writes build/ and *.egg-info into its source,
    and a stale build/ would put deleted modules into the wheel), and what ``uv build`` made."""

    source: Path
    wheel: Path
    home: Path
    cache: Path
    uv: str


def copy_source(target: Path) -> Path:
    """The files of this checkout that git would commit (tracked or new, not ignored)."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=REPO, capture_output=True, check=False)
    if listed.returncode != 0:
        pytest.skip(f"the source is copied with git ls-files, which failed here: {listed.stderr!r}")
    for name in sorted(set(listed.stdout.decode().split("\0")) - {""}):
        origin = REPO / name
        if origin.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(origin, target / name)
    return target


@pytest.fixture(scope="session")
def build(tmp_path_factory: pytest.TempPathFactory) -> Build:
    """``uv build`` once per session: the sdist, then the wheel built from the sdist (so a file
    the sdist leaves out is missing from the wheel too)."""
    uv = uv_binary()
    root = tmp_path_factory.mktemp("tool-build")
    source = copy_source(root / "source")
    home, cache = root / "home", root / "uv-cache"
    env = clean_env(home, UV_CACHE_DIR=str(cache))
    run([uv, "build", "--python", sys.executable, "--out-dir", str(root / "dist"), str(source)],
        env, "uv build", cwd=root)
    (wheel,) = (root / "dist").glob("*.whl")
    return Build(source=source, wheel=wheel, home=home, cache=cache, uv=uv)


@dataclass(frozen=True)
class Tool:
    """A tool install: its ``governance`` executable, the folder its venv lives in, the
    environment it was installed with."""

    governance: Path
    venvs: Path
    env: dict[str, str]

    def cli(self, *args: str, cwd: Path, expect: int | None = 0) -> subprocess.CompletedProcess[str]:
        return run([str(self.governance), *args], self.env, f"governance {args[0]}", cwd=cwd,
                   expect=expect)


def uv_tool(build: Build, root: Path) -> Tool:
    """``uv tool install`` of the built wheel with its venvs and executables under ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    env = clean_env(build.home, UV_CACHE_DIR=str(build.cache), UV_TOOL_DIR=str(root / "tools"),
                    UV_TOOL_BIN_DIR=str(root / "bin"))
    run([build.uv, "tool", "install", "--python", sys.executable, str(build.wheel)], env,
        "uv tool install", cwd=root)
    return Tool(governance=root / "bin" / "governance", venvs=root / "tools", env=env)


@pytest.fixture(scope="session")
def uv_installed(build: Build, tmp_path_factory: pytest.TempPathFactory) -> Tool:
    return uv_tool(build, tmp_path_factory.mktemp("uv-tool"))


@pytest.fixture(scope="session")
def pipx_installed(build: Build, tmp_path_factory: pytest.TempPathFactory) -> Tool:
    """``pipx install`` of the repository (its clean copy) with pip, pipx's own backend (uv's is
    what the uv tests cover), everything under a temporary PIPX_HOME."""
    pipx = pipx_argv()
    root = tmp_path_factory.mktemp("pipx-tool")
    env = clean_env(build.home, PIPX_HOME=str(root / "pipx"), PIPX_BIN_DIR=str(root / "bin"),
                    PIPX_MAN_DIR=str(root / "man"), PIPX_DEFAULT_BACKEND="pip")
    run([*pipx, "install", "--python", sys.executable, str(build.source)], env, "pipx install",
        cwd=root)
    return Tool(governance=root / "bin" / "governance", venvs=root / "pipx" / "venvs", env=env)


# --- the project and its hooks ---------------------------------------------------------------
def settings_of(project: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((project / ".claude" / "settings.json").read_text())
    return data


def our_commands(project: Path) -> dict[str, list[str]]:
    """The hook commands governance registered, by event."""
    found: dict[str, list[str]] = {}
    for event, groups in settings_of(project).get("hooks", {}).items():
        for group in groups:
            for handler in group.get("hooks", []):
                command = handler.get("command", "")
                if handler.get("type") == "command" and "hookscripts" in command:
                    found.setdefault(event, []).append(command)
    return found


def hook(command: str, payload: dict[str, Any], env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    """The command exactly as Claude Code runs it: through ``sh -c``, JSON on stdin."""
    return subprocess.run(["sh", "-c", command], input=json.dumps(payload).encode(), env=env,
                          cwd="/", capture_output=True, timeout=60, check=False)


def answer(done: subprocess.CompletedProcess[bytes]) -> dict[str, Any]:
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    assert b"Traceback" not in done.stdout + done.stderr
    if not done.stdout.strip():
        return {}
    out: dict[str, Any] = json.loads(done.stdout)
    assert "NOT checked" not in out.get("systemMessage", ""), out  # no internal error
    return out


def governed_project(tool: Tool, parent: Path) -> tuple[Path, str]:
    """A project whose hooks the tool's `governance install` registered, in a state where
    web-fetch is blocked; returns it and its PreToolUse command."""
    project = parent / "shop-api"
    (project / ".claude").mkdir(parents=True)
    tool.cli("install", "--project", str(project), cwd=parent)
    tool.cli("state", "set", "--project", str(project), *DO_STATE, cwd=parent)
    (pre,) = our_commands(project)["PreToolUse"]
    return project, pre


def assert_hooks_answer(project: Path, pre: str, env: dict[str, str]) -> None:
    """A WebFetch is denied by the matrix's DO rule, a Read is allowed (granting nothing)."""
    denied = answer(hook(pre, recorded("PreToolUse-WebFetch.json", project), env))
    specific = denied["hookSpecificOutput"]
    assert specific["hookEventName"] == "PreToolUse" and specific["permissionDecision"] == "deny"
    assert "rules.web-fetch.DO" in specific["permissionDecisionReason"]
    assert specific["additionalContext"].startswith("[STATE: DO] Blocked: ")
    allowed = answer(hook(pre, recorded("PreToolUse-Read.json", project), env))["hookSpecificOutput"]
    assert "permissionDecision" not in allowed
    assert allowed["additionalContext"].startswith("[STATE: DO] Blocked: ")


def assert_runs_from(tool: Tool, project: Path) -> None:
    """Every registered command runs the tool's interpreter on the tool's own hook scripts."""
    commands = [command for listed in our_commands(project).values() for command in listed]
    assert commands
    venvs = str(tool.venvs.resolve())
    for command in commands:
        python, *flags, script = shlex.split(command)[:4]
        assert python.startswith(venvs + os.sep) and flags == ["-I", "-S"], command
        assert script.startswith(venvs + os.sep) and os.path.isfile(script), command
    imported = subprocess.run([python, "-I", "-c", "import governance; print(governance.__file__)"],
                              env=tool.env, capture_output=True, text=True, check=True).stdout
    assert imported.startswith(venvs + os.sep), imported  # the tool's copy, not this checkout


# --- the wheel -------------------------------------------------------------------------------
def test_the_wheel_holds_every_module_hook_script_and_packaged_file(build: Build) -> None:
    """Everything the installed hooks and CLI read: every file of the governance package as it
    is in the source, the hook scripts as governance/hookscripts, the default configs as
    governance/defaults; nothing else (no tests, no stale build output)."""
    names = set(zipfile.ZipFile(build.wheel).namelist())
    package = {name for name in names if not name.startswith("claude_governance-")}
    source = build.source
    expected = {path.relative_to(source).as_posix() for path in (source / "governance").rglob("*")
                if path.is_file() and "__pycache__" not in path.parts}
    expected |= {f"governance/hookscripts/{path.name}" for path in (source / "hooks").glob("*.py")}
    expected |= {f"governance/defaults/{path.name}" for path in (source / "config").glob("*.yaml")}
    assert package == expected
    for needed in ("governance/hookscripts/pre_tool_use.py", "governance/hookscripts/bootstrap.py",
                   "governance/hookscripts/post_tool_use.py", "governance/hookscripts/session_start.py",
                   "governance/hookscripts/user_prompt_submit.py",
                   "governance/hookscripts/statusline.py", "governance/defaults/activity_matrix.yaml",
                   "governance/defaults/guardrails.yaml", "governance/server/openapi.json"):
        assert needed in names
    entry_points = zipfile.ZipFile(build.wheel).read(
        next(name for name in names if name.endswith(".dist-info/entry_points.txt"))).decode()
    assert "governance = governance.commands.cli:main" in entry_points


# --- uv tool install -------------------------------------------------------------------------
def test_uv_tool_hooks_answer_every_recorded_event(uv_installed: Tool, tmp_path: Path) -> None:
    project, pre = governed_project(uv_installed, tmp_path)
    assert_runs_from(uv_installed, project)
    assert_hooks_answer(project, pre, uv_installed.env)
    registered = our_commands(project)
    assert set(EVENT_PAYLOADS) <= set(registered)
    for event, name in EVENT_PAYLOADS.items():
        assert (PAYLOAD_DIR / name).is_file()
        for command in registered[event]:
            answer(hook(command, recorded(name, project), uv_installed.env))
    # what the hooks recorded is intact, read by the tool's own CLI
    uv_installed.cli("ledger", "verify", "--project", str(project), cwd=tmp_path)


def test_uv_tool_names_its_version_and_tours_from_packaged_files(uv_installed: Tool, build: Build,
                                                                 tmp_path: Path) -> None:
    """The README's quick start for a tool user: the version, then the demo (its own temporary
    project, built from the files the wheel carries)."""
    version = build.wheel.name.split("-")[1]
    assert uv_installed.cli("--version", cwd=tmp_path).stdout.split() == ["governance", version]
    tour = uv_installed.cli("demo", cwd=tmp_path).stdout
    assert "deny" in tour and "governance install --project" in tour


def test_a_forced_reinstall_and_an_upgrade_keep_the_hooks_working(build: Build, tmp_path: Path) -> None:
    tool = uv_tool(build, tmp_path / "tool")
    project, pre = governed_project(tool, tmp_path)
    assert_hooks_answer(project, pre, tool.env)
    marker = tool.venvs / DIST / "made-before-the-reinstall"
    marker.write_text("")
    run([build.uv, "tool", "install", "--force", "--python", sys.executable, str(build.wheel)],
        tool.env, "uv tool install --force", cwd=tmp_path)
    assert not marker.exists()  # the tool's venv was made anew
    assert_hooks_answer(project, pre, tool.env)
    for flags in ([], ["--reinstall"]):
        run([build.uv, "tool", "upgrade", *flags, DIST], tool.env, "uv tool upgrade", cwd=tmp_path)
        assert_hooks_answer(project, pre, tool.env)
    assert our_commands(project)["PreToolUse"] == [pre]


def test_after_the_tool_moved_doctor_names_the_broken_hooks_and_repair_mends_them(
        build: Build, tmp_path: Path) -> None:
    first = uv_tool(build, tmp_path / "first")
    project, pre = governed_project(first, tmp_path)
    assert_hooks_answer(project, pre, first.env)
    gone = shlex.split(pre)[0]
    run([build.uv, "tool", "uninstall", DIST], first.env, "uv tool uninstall", cwd=tmp_path)
    assert not os.path.exists(gone)
    broken = hook(pre, recorded("PreToolUse-WebFetch.json", project), first.env)
    assert broken.returncode == 127  # Claude Code would run the call ungoverned

    second = uv_tool(build, tmp_path / "second")
    doctor = second.cli("doctor", "--project", str(project), cwd=tmp_path, expect=None)
    assert doctor.returncode != 0
    failures = [line for line in doctor.stdout.splitlines() if line.lstrip().startswith("FAIL")]
    assert any("PreToolUse" in line and gone in line for line in failures), doctor.stdout

    second.cli("install", "--repair", "--project", str(project), cwd=tmp_path)
    assert_runs_from(second, project)
    (repaired,) = our_commands(project)["PreToolUse"]
    assert_hooks_answer(project, repaired, second.env)  # the state survived the repair
    healthy = second.cli("doctor", "--project", str(project), cwd=tmp_path, expect=None)
    assert str(first.venvs) not in healthy.stdout and healthy.returncode == 0, healthy.stdout


# --- pipx install ----------------------------------------------------------------------------
def test_pipx_install_of_the_repository_registers_hooks_that_answer(pipx_installed: Tool,
                                                                    tmp_path: Path) -> None:
    project, pre = governed_project(pipx_installed, tmp_path)
    assert_runs_from(pipx_installed, project)
    assert_hooks_answer(project, pre, pipx_installed.env)
    for command in our_commands(project)["PostToolUse"]:
        answer(hook(command, recorded("PostToolUse-Read.json", project), pipx_installed.env))
    pipx_installed.cli("ledger", "verify", "--project", str(project), cwd=tmp_path)

