"""``governance statusline``: one line for Claude Code's status bar.

Claude Code runs the command with its status-line JSON on stdin (``session_id``, ``cwd``,
``workspace.project_dir``, ...) and shows what it prints, e.g.
``◆ DO · WORK-064 · 5 blocked · 2 denials this session``.

It runs after every assistant message, so it is as lean as a hook: ``json``, ``os`` and our small
modules only. Denials are counted from the ledger incrementally: the byte offset reached and the
count so far are kept per session in ``<project>/.claude/governance/sessions/<id>.status``, so
each run reads only the records appended since the last one.
"""

from __future__ import annotations

import os
import sys

from governance import jsoncodec
from governance.errors import GovernanceError
from governance.project import ensure_dir, find_project, governance_dir, temp_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

LEDGER = "ledger.jsonl"  # governance.ledger.chain.LEDGER, without importing the writer
SESSIONS_DIR = "sessions"
SET = "◆"
UNSET = "◇"


def _session(raw: object) -> str:
    if not isinstance(raw, str):
        return ""
    return "".join(ch for ch in raw[:128] if ch.isalnum() or ch in "-_")


def _project(data: dict[str, Any]) -> str:
    workspace = data.get("workspace")
    candidates = []
    if isinstance(workspace, dict):
        candidates += [workspace.get("project_dir"), workspace.get("current_dir")]
    candidates.append(data.get("cwd"))
    for candidate in candidates:
        if isinstance(candidate, str) and candidate:
            try:
                return find_project(candidate)
            except ValueError:
                continue
    try:
        return find_project(None)
    except ValueError:
        raise NoProject("no project to show: the status-line input names no existing folder "
                        "(cwd, workspace.project_dir) and CLAUDE_PROJECT_DIR is not set") from None


class NoProject(ValueError):
    """Neither the input nor the environment names a project folder."""


def count_denials(project: str, session: str) -> int:
    """PreToolUse denials this session, reading only what was appended since the last call."""
    gov = governance_dir(project)
    ledger_path = os.path.join(gov, LEDGER)
    cache_path = os.path.join(gov, SESSIONS_DIR, f"{session}.status")
    offset, count = 0, 0
    try:
        with open(cache_path, encoding="utf-8") as fh:
            cached = jsoncodec.loads(fh.read())
        offset, count = int(cached["offset"]), int(cached["denials"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    try:
        size = os.path.getsize(ledger_path)
    except OSError:
        return 0
    if size < offset:  # the ledger was replaced: count again from the start
        offset, count = 0, 0
    if size == offset:
        return count
    needle = f'"session":"{session}"'.encode()
    with open(ledger_path, "rb") as fh:
        fh.seek(offset)
        chunk = fh.read(size - offset)
    complete = chunk.rfind(b"\n") + 1  # a line still being written is read next time
    for line in chunk[:complete].splitlines():
        if b'"deny"' not in line or needle not in line.replace(b'": "', b'":"'):
            continue
        try:
            record = jsoncodec.loads(line.decode("utf-8"))
        except ValueError:
            continue
        if record.get("session") == session and record.get("decision") == "deny":
            count += 1
    try:
        ensure_dir(os.path.dirname(cache_path))
        tmp = temp_path(cache_path)
        with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w",
                  encoding="utf-8") as fh:
            fh.write(jsoncodec.dumps({"offset": offset + complete, "denials": count}))
        os.replace(tmp, cache_path)
    except OSError:
        pass
    return count


def render(data: dict[str, Any]) -> str:
    """The status line for one status-line payload."""
    from governance.policy import matrix
    from governance.policy.state import read_state

    project = _project(data)
    compiled = matrix.load(project)
    view = read_state(project, compiled)
    summary = compiled["summary"].get(view.state) or {}
    unset = view.source != "file"
    parts = [f"{UNSET if unset else SET} {view.state}" + (" (no state set)" if unset else "")]
    if view.work_item:
        parts.append(view.work_item)
    parts.append(f"{len(summary.get('blocked', []))} blocked")
    session = _session(data.get("session_id"))
    if session:
        denials = count_denials(project, session)
        parts.append(f"{denials} denial{'' if denials == 1 else 's'} this session")
    return " · ".join(parts)


def read_input(raw: bytes) -> tuple[dict[str, Any], str]:
    """The status-line JSON as a dict, and what was wrong with it ("" when nothing was): bad input
    still gives a line when ``CLAUDE_PROJECT_DIR`` names the project."""
    if not raw.strip():
        return {}, "no status-line input on stdin (Claude Code sends it to the statusLine command)"
    try:
        data = jsoncodec.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        return {}, f"the status-line input is not UTF-8 (byte {exc.start})"
    except ValueError as exc:
        return {}, f"the status-line input is not JSON: {jsoncodec.problem(exc)}"
    except RecursionError:
        return {}, "the status-line input is JSON nested too deep to read"
    if not isinstance(data, dict):
        return {}, f"the status-line input is a JSON {type(data).__name__}, not an object"
    return data, ""


def main(argv: Sequence[str] | None = None, stdin: Any = None, stdout: Any = None) -> int:
    """Print the status line; any problem becomes a short sentence, never a traceback."""
    out = stdout or sys.stdout
    problem = ""
    try:
        data, problem = read_input((stdin or sys.stdin.buffer).read())
        line = render(data)
    except Exception as exc:
        if isinstance(exc, NoProject) and problem:
            message = problem  # the input named no project because it was not readable
        elif isinstance(exc, GovernanceError | NoProject):
            message = getattr(exc, "message", None) or str(exc)
        else:
            message = f"could not build the status line ({exc})"
        line = f"{UNSET} governance: {message}"[:200] + " (run `governance doctor`)"
    out.write(line + "\n")
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
