"""``governance statusline``: the one line, the incremental denial count, the cheap imports."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from governance.session.statusline import count_denials, main
from tests.helpers import REPO, accept


def _line(data: dict[str, Any] | str) -> str:
    out = io.StringIO()
    raw = data if isinstance(data, str) else json.dumps(data)
    assert main([], io.BytesIO(raw.encode()), out) == 0
    text = out.getvalue()
    assert text.endswith("\n") and text.count("\n") == 1
    return text.strip()


def _status(project: Path, session: str = "s1") -> dict[str, Any]:
    return {"session_id": session, "cwd": str(project), "model": {"id": "m", "display_name": "M"},
            "workspace": {"current_dir": str(project), "project_dir": str(project)}}


def _append(project: Path, *records: dict[str, Any]) -> None:
    path = project / ".claude" / "governance" / "ledger.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as fh:
        for record in records:
            fh.write(json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n")


def _deny(session: str) -> dict[str, Any]:
    return {"event": "PreToolUse", "session": session, "decision": "deny", "tool": "WebFetch"}


def test_line_shows_state_work_item_blocked_and_denials(
    project: Path, set_state: Callable[..., None]
) -> None:
    set_state("implementation-cycle", "DO", "WORK-064")
    _append(project, _deny("s1"), _deny("s1"), _deny("other"),
            {"event": "PreToolUse", "session": "s1", "decision": "none", "tool": "Read"})
    assert _line(_status(project)) == "◆ DO · WORK-064 · 2 blocked · 2 denials this session"


def test_line_without_state_or_session(project: Path) -> None:
    data = _status(project)
    del data["session_id"]
    assert _line(data) == "◇ EXPLORE (no state set) · 0 blocked"


def test_singular_denial(project: Path, set_state: Callable[..., None]) -> None:
    set_state("implementation-cycle", "DO")
    _append(project, _deny("s1"))
    assert _line(_status(project)).endswith("· 1 denial this session")


def test_denials_are_counted_incrementally(project: Path) -> None:
    _append(project, _deny("s1"))
    assert count_denials(str(project), "s1") == 1
    cache = project / ".claude" / "governance" / "sessions" / "s1.status"
    saved = json.loads(cache.read_text())
    ledger = project / ".claude" / "governance" / "ledger.jsonl"
    assert saved == {"offset": ledger.stat().st_size, "denials": 1}
    _append(project, _deny("s1"), _deny("s2"))
    assert count_denials(str(project), "s1") == 2
    # A half-written last line is left for the next call.
    with ledger.open("a") as fh:
        fh.write('{"decision":"deny","event":"PreToolUse","session":"s1"')
    assert count_denials(str(project), "s1") == 2
    with ledger.open("a") as fh:
        fh.write(',"tool":"Bash"}\n')
    assert count_denials(str(project), "s1") == 3


def test_a_replaced_ledger_is_counted_again(project: Path) -> None:
    _append(project, _deny("s1"), _deny("s1"), _deny("s1"))
    assert count_denials(str(project), "s1") == 3
    (project / ".claude" / "governance" / "ledger.jsonl").unlink()
    _append(project, _deny("s1"))
    assert count_denials(str(project), "s1") == 1


def test_broken_matrix_gives_a_short_line(project: Path) -> None:
    override = project / ".claude" / "governance" / "activity_matrix.yaml"
    override.parent.mkdir(parents=True)
    override.write_text("rules: [broken\n")
    accept(project)  # accepted, then unreadable (as after an upgrade)
    line = _line(_status(project))
    assert line.startswith("◇ governance: ") and line.endswith("(run `governance doctor`)")


def test_garbage_input_still_prints_a_line(project: Path, monkeypatch: Any) -> None:
    assert _line("not json").startswith("◇ governance: ")
    # No cwd in the input: the project comes from CLAUDE_PROJECT_DIR, never the process's cwd.
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project))
    assert _line("[1, 2]") == "◇ EXPLORE (no state set) · 0 blocked"


STATUS_LEAK = re.compile(r"\b[A-Z][A-Za-z]*(Error|Exception|Iteration)\b|Traceback")


@pytest.mark.parametrize(("raw", "said"), [
    (b"", "no status-line input on stdin (Claude Code sends it to the statusLine command)"),
    (b"  \n", "no status-line input on stdin"),
    (b"{bad", "the status-line input is not JSON: Expecting property name enclosed in double "
              "quotes at char 1"),
    (b'{"a":1,}', "the status-line input is not JSON: Expecting property name"),
    (b"\xff{}", "the status-line input is not UTF-8 (byte 0)"),
    (b"[" * 100_000, "the status-line input is JSON nested too deep to read"),
    (b"[1, 2]", "the status-line input is a JSON list, not an object"),
    (b'{"cwd": "/nonexistent/governance-test/no-such-folder"}',
     "no project to show: the status-line input names no existing "
                                 "folder (cwd, workspace.project_dir) and CLAUDE_PROJECT_DIR is "
                                 "not set"),
])
def test_bad_input_gives_a_sentence_not_an_exception(raw: bytes, said: str) -> None:
    out = io.StringIO()
    assert main([], io.BytesIO(raw), out) == 0
    line = out.getvalue()
    assert line.count("\n") == 1 and line.startswith(f"◇ governance: {said}"), line
    assert line.rstrip().endswith("(run `governance doctor`)")
    assert not STATUS_LEAK.search(line), line


def test_the_cli_with_no_input_prints_a_sentence() -> None:
    """``governance statusline </dev/null`` from a terminal: a usable line, exit 0."""
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    for argv in ([sys.executable, "-m", "governance.commands.cli", "statusline"],
                 [sys.executable, "-I", "-S", str(REPO / "hooks" / "statusline.py")]):
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              cwd=str(REPO), env=env, check=False)
        assert (done.returncode, done.stderr) == (0, ""), done.stderr
        assert done.stdout.startswith("◇ governance: no status-line input on stdin"), done.stdout
        assert not STATUS_LEAK.search(done.stdout)


def test_bad_input_still_shows_the_project_named_by_the_environment(
        project: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project))
    for raw in ("", "{bad", "[1, 2]"):
        assert _line(raw) == "◇ EXPLORE (no state set) · 0 blocked"
