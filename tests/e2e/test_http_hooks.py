"""Hooks over HTTP in the real Claude Code: the hooks go to `governance serve`, the DO denial
reaches the model with its reason, the token reaches the server through the local settings'
`env`, and a server that is down is Claude Code's failure policy: fail-open by default,
every call denied with `--fail-closed`.

The client runs in its own network namespace, so the server listens on a unix socket and the
runner bridges 127.0.0.1:PORT beside the client to it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from claude_runner import ClaudeRunner
from fake_api import Text, ToolUse
from test_scenarios import (
    DO,
    REPO,
    assert_web_denied_bash_ran,
    denied_ids,
    governance,
    tool_use_ids,
    web_then_bash,
)

PORT = 18765


@pytest.fixture
def socket_path() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="gov-", dir="/tmp"))   # unix socket paths are short
    yield folder / "server.sock"
    for item in folder.iterdir():
        item.unlink()
    folder.rmdir()


def serve(project: Path, socket_path: Path) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        [sys.executable, "-m", "governance.commands", "serve", "--project", str(project),
         "--socket", str(socket_path)], cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while not socket_path.exists():
        assert process.poll() is None and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    return process


def stop(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGTERM)
    assert process.wait(20) == 0


def http_governed(project: Path, *flags: str) -> None:
    governance("install", "--project", str(project), "--http", "--port", str(PORT),
               "--no-sandbox", *flags)
    governance("state", "set", DO, "--project", str(project))
    hooks = json.loads((project / ".claude" / "settings.json").read_text())["hooks"]
    assert hooks["PreToolUse"][0]["hooks"][0]["type"] == "http"


def test_do_denial_over_http_reaches_the_model(claude: ClaudeRunner, project: Path,
                                               socket_path: Path) -> None:
    http_governed(project)
    server = serve(project, socket_path)
    try:
        run = claude.run(project, "http hooks scenario", web_then_bash("http-marker"),
                         bridge=(PORT, socket_path))
    finally:
        stop(server)
    assert_web_denied_bash_ran(run, project, "http-marker")


@pytest.mark.parametrize("flags, denied", [((), False), (("--fail-closed",), True)],
                         ids=["fail-open", "fail-closed"])
def test_server_down_is_claude_codes_failure_policy(claude: ClaudeRunner, project: Path,
                                                    socket_path: Path, flags: tuple[str, ...],
                                                    denied: bool) -> None:
    """Nobody answers: by default Claude Code lets the call run; with --fail-closed the handler's
    onFailure: block denies it."""
    http_governed(project, *flags)
    run = claude.run(project, "server down", [
        [ToolUse("Bash", {"command": "touch down-marker", "description": "work"})],
        [Text("done")],
    ], bridge=(PORT, socket_path))
    assert run.returncode == 0, run.stderr[-2000:]
    (bash,) = tool_use_ids(run, "Bash")
    assert (bash in denied_ids(run)) is denied
    assert (project / "down-marker").exists() is not denied
