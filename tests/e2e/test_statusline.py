"""The status line in an interactive Claude Code session (a pseudo-terminal), as installed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from claude_runner import ClaudeRunner
from fake_api import Text, ToolUse

REPO = Path(__file__).resolve().parents[2]


def _bin_with_cli(folder: Path) -> Path:
    """A bin folder as a venv has it: `python` and a `governance` that runs this checkout."""
    folder.mkdir()
    (folder / "python").symlink_to(sys.executable)
    shim = folder / "governance"
    shim.write_text(f'#!/bin/sh\nPYTHONPATH={REPO} exec {sys.executable} -m governance.commands.cli "$@"\n')
    shim.chmod(0o755)
    return folder


def test_status_line_shows_state_and_this_sessions_denials(
    claude: ClaudeRunner, project: Path, tmp_path: Path
) -> None:
    from governance.install import settings

    if shutil.which("tmux") is None:
        pytest.skip("e2e: the interactive session needs tmux (apt-get install tmux)")

    bindir = _bin_with_cli(tmp_path / "bin")
    governance = str(bindir / "governance")
    for args in (["install", "--project", str(project), "--statusline", "--no-sandbox"],
                 ["state", "set", "implementation-cycle/DO/WORK-064", "--project", str(project)]):
        subprocess.run([governance, *args], check=True, capture_output=True, timeout=60,
                       env=dict(os.environ))
    data = settings.load(settings.settings_path(str(project)))
    assert data["statusLine"]["command"].endswith("/statusline.py")  # written by install

    expected = "◆ DO · WORK-064 · 11 blocked · 1 denial this session"
    run = claude.run_interactive(project, "statusline scenario", [
        [ToolUse("WebFetch", {"url": "https://example.com", "prompt": "x"})],
        [Text("That was blocked.")],
    ], wait_for=expected)
    assert run.shows("◆ DO · WORK-064 · 11 blocked · 0 denials this session")  # at start
    assert run.found, run.screen[-3000:]
    (body, *_rest) = [b for b in run.log.message_requests() if b.get("tools")]
    assert "statusline scenario" in json.dumps(body["messages"])
