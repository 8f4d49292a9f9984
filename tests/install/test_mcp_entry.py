from __future__ import annotations

import json
from pathlib import Path

import pytest

from governance.errors import InstallError
from governance.install.mcp_entry import install_mcp, uninstall_mcp

PY = "/opt/venv/bin/python"


def read(path: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads(path.read_text())
    return data


def test_install_creates_the_file(tmp_path: Path) -> None:
    path = Path(install_mcp(str(tmp_path), PY))
    assert path == tmp_path / ".mcp.json"
    assert read(path) == {"mcpServers": {"governance": {
        "type": "stdio", "command": PY,
        "args": ["-m", "governance.decisions.mcp_server", "--project", str(tmp_path.resolve())],
        "env": {}}}}
    assert not (tmp_path / ".mcp.json.bak").exists()


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
    assert json.loads((tmp_path / ".mcp.json.bak").read_text()) == original


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
