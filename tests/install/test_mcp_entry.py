from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from governance.errors import InstallError
from governance.install.mcp_entry import check, install_mcp, uninstall_mcp
from governance.install.settings import hook_scripts_dir

PY = "/opt/venv/bin/python"
LAUNCHER = os.path.join(hook_scripts_dir(), "launch.py")


def read(path: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads(path.read_text())
    return data


def test_install_creates_the_file(tmp_path: Path) -> None:
    path = Path(install_mcp(str(tmp_path), PY))
    assert path == tmp_path / ".mcp.json"
    assert read(path) == {"mcpServers": {"governance": {
        "type": "stdio", "command": PY,
        "args": ["-I", LAUNCHER, "governance.decisions.mcp_server", "--project",
                 str(tmp_path.resolve())],
        "env": {}}}}
    assert not (tmp_path / ".mcp.json.bak").exists()
    assert not (tmp_path / ".claude" / "governance" / "backups" / "mcp.json.bak").exists()


def test_install_keeps_other_servers_backs_up_and_never_duplicates(tmp_path: Path) -> None:
    path = tmp_path / ".mcp.json"
    original = {"mcpServers": {"memory": {"command": "npx", "args": ["memory"]},
                               "old-gov": {"command": "/usr/bin/python3",
                                           "args": ["-m", "governance.decisions.mcp_server"]}},
                "other": 1}
    path.write_text(json.dumps(original))
    install_mcp(str(tmp_path), PY)
    install_mcp(str(tmp_path), PY)  # idempotent
    data = read(path)
    servers = data["mcpServers"]
    assert isinstance(servers, dict)
    assert set(servers) == {"memory", "governance"}
    assert data["other"] == 1
    # the one backup is local, under .claude/governance (which git ignores), not beside the file
    backup = tmp_path / ".claude" / "governance" / "backups" / "mcp.json.bak"
    assert json.loads(backup.read_text()) == original
    assert not (tmp_path / ".mcp.json.bak").exists()


def test_install_updates_the_interpreter(tmp_path: Path) -> None:
    install_mcp(str(tmp_path), PY)
    install_mcp(str(tmp_path), "/new/python")
    servers = read(tmp_path / ".mcp.json")["mcpServers"]
    assert isinstance(servers, dict) and servers["governance"]["command"] == "/new/python"


def test_uninstall(tmp_path: Path) -> None:
    assert uninstall_mcp(str(tmp_path)) is False
    install_mcp(str(tmp_path), PY)
    assert uninstall_mcp(str(tmp_path)) is True
    assert not (tmp_path / ".mcp.json").exists()  # nothing else was in it
    path = tmp_path / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": {"memory": {"command": "npx"}}}))
    install_mcp(str(tmp_path), PY)
    assert uninstall_mcp(str(tmp_path)) is True
    assert read(path) == {"mcpServers": {"memory": {"command": "npx"}}}
    assert uninstall_mcp(str(tmp_path)) is False


@pytest.mark.parametrize("text", ["{not json", "[]", '{"mcpServers": []}'])
def test_invalid_file_is_an_error_and_untouched(tmp_path: Path, text: str) -> None:
    path = tmp_path / ".mcp.json"
    path.write_text(text)
    with pytest.raises(InstallError) as caught:
        install_mcp(str(tmp_path), PY)
    assert caught.value.file == str(path) and caught.value.fix
    assert path.read_text() == text


def _old_registration(tmp_path: Path) -> Path:
    """``.mcp.json`` as an earlier version wrote it, before the server moved into ``decisions/``."""
    path = tmp_path / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": {
        "memory": {"command": "npx", "args": ["memory"]},
        "governance": {"type": "stdio", "command": PY,
                       "args": ["-m", "governance.mcp_server", "--project", str(tmp_path)],
                       "env": {}}}}))
    return path


def test_doctor_names_a_registration_of_the_old_module(tmp_path: Path) -> None:
    _old_registration(tmp_path)
    [(ok, what, fix)] = check(str(tmp_path))
    assert not ok
    assert "governance.mcp_server" in what and "governance.decisions.mcp_server" in what
    assert fix == f"run: governance install --mcp --project {tmp_path}"


def test_install_rewrites_a_registration_of_the_old_module(tmp_path: Path) -> None:
    path = _old_registration(tmp_path)
    install_mcp(str(tmp_path), PY)
    servers = read(path)["mcpServers"]
    assert isinstance(servers, dict) and set(servers) == {"memory", "governance"}
    assert servers["governance"]["args"][:3] == ["-I", LAUNCHER, "governance.decisions.mcp_server"]
    assert check(str(tmp_path)) == [(True, "MCP server 'governance' registered "
                                           "(governance.decisions.mcp_server)", "")]


def test_uninstall_removes_an_old_registration_too(tmp_path: Path) -> None:
    path = _old_registration(tmp_path)
    assert uninstall_mcp(str(tmp_path)) is True
    assert set(read(path)["mcpServers"]) == {"memory"}  # type: ignore[arg-type]


def test_doctor_is_quiet_without_a_registration(tmp_path: Path) -> None:
    [(ok, what, _fix)] = check(str(tmp_path))
    assert ok and "no governance MCP server registered" in what


def test_the_registered_module_starts(tmp_path: Path) -> None:
    import subprocess
    import sys

    install_mcp(str(tmp_path), sys.executable)
    entry = read(tmp_path / ".mcp.json")["mcpServers"]["governance"]  # type: ignore[index]
    done = subprocess.run([entry["command"], *entry["args"], "--help"], cwd=str(tmp_path),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "--project" in done.stdout


def test_the_launcher_runs_only_our_modules(tmp_path: Path) -> None:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-I", LAUNCHER, "http.server"], cwd=str(tmp_path),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "one of governance's modules" in done.stderr
