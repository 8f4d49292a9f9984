"""``governance install --http``: http handlers on the server, the token for Claude Code, the
seal that keeps them, ``doctor`` saying whether the server is up, and uninstall."""

from __future__ import annotations

import json
from pathlib import Path

from governance.install import settings
from tests.helpers import install
from tests.server.conftest import start_server, stop_server


def local(project: Path) -> dict[str, object]:
    return dict(json.loads((project / ".claude" / "settings.local.json").read_text()))


def test_http_handlers_carry_the_token_variable_and_the_failure_policy(project: Path) -> None:
    data = install(project, True, "--http", "--port", "9911")
    pre = data["hooks"]["PreToolUse"][0]["hooks"]
    assert pre == [{"type": "http", "url": "http://127.0.0.1:9911/hooks/PreToolUse?on_error=block",
                    "headers": {"Authorization": "Bearer ${GOVERNANCE_SERVER_TOKEN}"},
                    "allowedEnvVars": ["GOVERNANCE_SERVER_TOKEN"], "timeout": 30,
                    "onFailure": "block"}]
    post = data["hooks"]["PostToolUse"][0]["hooks"][0]
    assert post["url"] == "http://127.0.0.1:9911/hooks/PostToolUse" and "onFailure" not in post
    # Claude Code skips http SessionStart handlers: the briefing stays a command hook
    assert data["hooks"]["SessionStart"][0]["hooks"][0]["type"] == "command"
    assert data["hooks"]["UserPromptSubmit"][0]["hooks"][0]["type"] == "http"
    token = (project / ".claude" / "governance" / "server.token").read_text().strip()
    assert local(project)["env"] == {"GOVERNANCE_SERVER_TOKEN": token}


def test_reinstalling_switches_transports_without_duplicates(project: Path) -> None:
    install(project, False, "--http", "--port", "9911")
    data = install(project)
    handlers = [h for groups in data["hooks"].values() for g in groups for h in g["hooks"]]
    assert all(h["type"] == "command" for h in handlers)
    assert len(data["hooks"]["PreToolUse"]) == 1
    data = install(project, False, "--http", "--port", "9911")
    assert [g["hooks"][0]["type"] for g in data["hooks"]["PreToolUse"]] == ["http"]


def test_the_seal_puts_a_removed_http_handler_back(project: Path) -> None:
    from governance.hook import owned
    from governance.policy import seal

    install(project, False, "--http", "--port", "9911")
    path = project / ".claude" / "settings.json"
    data = json.loads(path.read_text())
    del data["hooks"]["PreToolUse"]
    path.write_text(json.dumps(data))
    entry = (seal.read(str(project)) or {})["settings"]
    assert owned.check(str(project), entry)
    owned.repair(entry)
    restored = json.loads(path.read_text())["hooks"]["PreToolUse"][0]["hooks"][0]
    assert restored["url"] == "http://127.0.0.1:9911/hooks/PreToolUse"


def test_is_ours_knows_our_urls_only() -> None:
    assert settings.is_ours({"type": "http", "url": "http://127.0.0.1:1/hooks/PreToolUse"})
    assert settings.is_ours({"type": "http",
                             "url": "http://localhost:1/hooks/PreToolUse?on_error=block"})
    assert not settings.is_ours({"type": "http", "url": "http://127.0.0.1:1/other/PreToolUse"})
    assert not settings.is_ours({"type": "http", "url": "http://x/hooks/PreToolUseX"})


def test_doctor_says_whether_the_server_is_up(project: Path, capsys: object) -> None:
    import pytest

    from governance.commands.cli import main

    assert isinstance(capsys, pytest.CaptureFixture)
    server = start_server(project)
    try:
        install(project, False, "--http", "--port", str(server.port))
        capsys.readouterr()
        assert main(["doctor", "--project", str(project)]) == 0
        said = capsys.readouterr().out
        assert f"the governance server is running at http://127.0.0.1:{server.port}" in said
        assert "live PreToolUse call over HTTP answered (200): [STATE: EXPLORE]" in said
    finally:
        stop_server(server)
    assert main(["doctor", "--project", str(project)]) == 1
    said = capsys.readouterr().out
    assert "the governance server is not running" in said
    assert f"governance serve --project {project} --detach" in said


def test_uninstall_removes_the_http_handlers(project: Path) -> None:
    from governance.commands.cli import main

    install(project, False, "--http", "--port", "9911")
    assert main(["uninstall", "--project", str(project)]) == 0
    data = json.loads((project / ".claude" / "settings.json").read_text())
    assert not settings.our_commands(data)
