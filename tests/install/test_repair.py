"""When the tool moves, the interpreter every registration names is gone: ``doctor`` names each
broken registration, ``install --repair`` writes them all again for the current interpreter with the
transport and options the project chose, and the exact command written runs again."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from governance.commands.cli import build_parser, main
from governance.errors import InstallError
from governance.install import settings
from tests.helpers import hook_command, install, recorded, run_command, set_state

OTHER = {"env": {"FOO": "1"}, "permissions": {"allow": ["Bash(npm test)"]},
         "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify.sh"}]}]}}


def make_venv(where: Path) -> str:
    """A real venv (no pip) that sees this environment's packages through a .pth file: an
    interpreter the tests can delete, as a tool uninstall does."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    python = where / "bin" / "python"
    purelib = subprocess.run([str(python), "-c", "import sysconfig; "
                              "print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    Path(purelib, "parent.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return str(python)


def settings_of(project: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((project / ".claude" / "settings.json").read_text())
    return data


def answers(command: str, project: Path) -> dict[str, object]:
    """Run the exact registered command on a recorded WebFetch call (a DO deny)."""
    done = run_command(command, json.dumps(recorded("PreToolUse-WebFetch.json", project)))
    assert done.returncode == 0, done.stderr
    answer: dict[str, object] = json.loads(done.stdout)
    return answer


def doctor(project: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["doctor", "--project", str(project)])
    return code, capsys.readouterr().out


def test_doctor_names_each_broken_registration_and_repair_mends_them(
        project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / ".claude" / "settings.json").write_text(json.dumps(OTHER))
    venv = tmp_path / "tool-venv"
    old = make_venv(venv)
    install(project, True, "--python", old, "--statusline", "--mcp", "--slash-commands")
    set_state(project, "implementation-cycle/DO/WORK-1")
    command = hook_command(project)
    assert shlex.split(command)[0] == old
    assert answers(command, project)["hookSpecificOutput"]["permissionDecision"] == "deny"  # type: ignore[index]

    shutil.rmtree(venv)   # the tool is uninstalled
    assert run_command(command, "{}").returncode == 127
    code, said = doctor(project, capsys)
    assert code == 1
    fix = f"; fix: governance install --repair --project {project}"
    broken = [line for line in said.splitlines() if line.startswith("  FAIL") and str(venv) in line]
    for where in ("PreToolUse hook", "PostToolUse hook", "PostToolUseFailure hook",
                  "SessionStart hook", "UserPromptSubmit hook", "status line",
                  "MCP server 'governance' in .mcp.json", "slash command /cycle",
                  "slash command /governance-state"):
        (line,) = [line for line in broken if f"the {where} runs " in line]
        assert line.endswith(fix) and "which is gone" in line
    assert f"(command: {command})" in said

    capsys.readouterr()
    assert main(["install", "--repair", "--project", str(project)]) == 0
    data = settings_of(project)
    assert {key: data[key] for key in ("env", "permissions")} == {
        "env": OTHER["env"], "permissions": OTHER["permissions"]}
    assert data["hooks"]["Stop"] == OTHER["hooks"]["Stop"]  # type: ignore[index]
    now = settings.interpreter()
    repaired = hook_command(project)
    assert shlex.split(repaired)[0] == now and repaired.endswith("--on-error block")
    pre = data["hooks"]["PreToolUse"]  # type: ignore[index]
    assert len(pre) == 1 and pre[0]["hooks"][0]["onFailure"] == "block"
    assert shlex.split(data["statusLine"]["command"])[0] == now  # type: ignore[index]
    servers = json.loads((project / ".mcp.json").read_text())["mcpServers"]
    assert servers["governance"]["command"] == now
    assert f"!`{shlex.join(settings.module_command('governance.commands', now))} state set" in (
        project / ".claude" / "commands" / "cycle.md").read_text()
    # the state and the seal survived: the repaired hook denies in DO as before
    assert answers(repaired, project)["hookSpecificOutput"]["permissionDecision"] == "deny"  # type: ignore[index]
    code, said = doctor(project, capsys)
    assert code == 0 and old not in said, said


@pytest.mark.parametrize("transport", ["--http", "--mcp-hooks"])
def test_repair_keeps_the_transport(project: Path, tmp_path: Path, transport: str) -> None:
    venv = tmp_path / "tool-venv"
    old = make_venv(venv)
    extra = [transport, "--port", "9911"] if transport == "--http" else [transport]
    before = install(project, False, "--python", old, *extra)
    shutil.rmtree(venv)
    assert main(["install", "--repair", "--project", str(project)]) == 0
    after = settings_of(project)
    hooks = after["hooks"]
    assert hooks["PreToolUse"] == before["hooks"]["PreToolUse"]  # type: ignore[index]
    session = hooks["SessionStart"][0]["hooks"][0]["command"]  # type: ignore[index]
    assert shlex.split(session)[0] == settings.interpreter()
    if transport == "--mcp-hooks":
        servers = json.loads((project / ".mcp.json").read_text())["mcpServers"]
        assert servers["governance-hooks"]["command"] == settings.interpreter()


def test_a_reinstall_at_the_same_path_keeps_the_hooks_working(
        project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    venv = tmp_path / "tool-venv"
    install(project, False, "--python", make_venv(venv))
    shutil.rmtree(venv)
    make_venv(venv)   # uv tool install --force: the same path again
    command = hook_command(project)
    assert "hookSpecificOutput" in answers(command, project)
    code, said = doctor(project, capsys)
    assert code == 0 and "which is gone" not in said, said


def test_repair_needs_an_installation(project: Path) -> None:
    from governance.commands.install import run

    args = build_parser("install").parse_args(["install", "--repair", "--project", str(project)])
    with pytest.raises(InstallError, match="nothing to repair") as caught:
        run(args)
    assert f"governance install --project {project}" in caught.value.render()
