"""SessionStart briefing and the UserPromptSubmit state-change line."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from governance.session.briefing import session_start, user_prompt_submit
from tests.helpers import accept


def _call(hook: Callable[..., int], payload: dict[str, Any]) -> dict[str, Any] | None:
    out = io.StringIO()
    assert hook([], io.BytesIO(json.dumps(payload).encode()), out) == 0
    text = out.getvalue().strip()
    return json.loads(text) if text else None


def _payload(project: Path, event: str, session: str = "sess-1", **extra: Any) -> dict[str, Any]:
    return {"hook_event_name": event, "session_id": session, "cwd": str(project),
            "transcript_path": "/dev/null", **extra}


def _context(answer: dict[str, Any] | None) -> str:
    assert answer is not None
    out = answer["hookSpecificOutput"]
    assert set(out) == {"hookEventName", "additionalContext"}
    return str(out["additionalContext"])


def test_briefing_names_state_blocked_warned_asked_and_the_switch(
    project: Path, set_state: Callable[..., None]
) -> None:
    set_state("implementation-cycle", "DO", "WORK-064")
    answer = _call(session_start, _payload(project, "SessionStart", source="startup"))
    text = _context(answer)
    assert answer is not None and answer["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "Current state: DO (implementation-cycle/DO/WORK-064)." in text
    assert "Blocked in DO: user-query, web-fetch." in text
    assert "Allowed with a warning: nothing." in text
    assert "Needs the user's confirmation: destructive." in text
    assert ("Only the user changes the state, with `governance state set CYCLE PHASE WORK-ID` or "
            "`governance state next` from a terminal.") in text
    assert "/cycle" not in text and "just " not in text  # neither exists in this project
    seen = project / ".claude" / "governance" / "sessions" / "sess-1.seen"
    assert seen.read_text().strip() == "DO|implementation-cycle/DO/WORK-064"
    assert seen.stat().st_mode & 0o777 == 0o600


def test_briefing_without_a_state_explains_the_fallback(project: Path) -> None:
    text = _context(_call(session_start, _payload(project, "SessionStart", source="clear")))
    assert "Current state: EXPLORE." in text
    assert "No cycle state is set" in text
    assert "Allowed with a warning: file-write." in text


def test_prompt_line_only_after_a_change(project: Path, set_state: Callable[..., None]) -> None:
    set_state("investigation-cycle", "EXPLORE")
    _call(session_start, _payload(project, "SessionStart", source="startup"))
    prompt = _payload(project, "UserPromptSubmit", prompt="go on")
    assert _call(user_prompt_submit, prompt) is None
    set_state("implementation-cycle", "DO", "WORK-7")
    line = _context(_call(user_prompt_submit, prompt))
    assert line == ("[GOVERNANCE] The cycle state changed since this session last saw it: "
                    "investigation-cycle/EXPLORE -> DO (implementation-cycle/DO/WORK-7). "
                    "Blocked now: user-query, web-fetch.")
    assert "\n" not in line
    assert _call(user_prompt_submit, prompt) is None  # said once


def test_sessions_are_tracked_separately(project: Path, set_state: Callable[..., None]) -> None:
    set_state("investigation-cycle", "EXPLORE")
    for session in ("a", "b"):
        _call(session_start, _payload(project, "SessionStart", session, source="startup"))
    set_state("implementation-cycle", "DO")
    assert _call(user_prompt_submit, _payload(project, "UserPromptSubmit", "a", prompt="x"))
    assert _call(user_prompt_submit, _payload(project, "UserPromptSubmit", "a", prompt="x")) is None
    assert _call(user_prompt_submit, _payload(project, "UserPromptSubmit", "b", prompt="x"))


def test_first_prompt_without_session_start_says_nothing(
    project: Path, set_state: Callable[..., None]
) -> None:
    set_state("implementation-cycle", "DO")
    assert _call(user_prompt_submit, _payload(project, "UserPromptSubmit", prompt="hi")) is None
    assert (project / ".claude" / "governance" / "sessions" / "sess-1.seen").exists()


def test_resume_after_a_change_leads_with_the_change(
    project: Path, set_state: Callable[..., None]
) -> None:
    set_state("investigation-cycle", "EXPLORE")
    _call(session_start, _payload(project, "SessionStart", source="startup"))
    set_state("implementation-cycle", "DO")
    text = _context(_call(session_start, _payload(project, "SessionStart", source="resume")))
    first, *rest = text.splitlines()
    assert first.startswith("[GOVERNANCE] The cycle state changed since this session last saw it")
    assert any("Current state: DO" in line for line in rest)


def test_session_id_is_sanitised_before_it_names_a_file(project: Path) -> None:
    _call(session_start, _payload(project, "SessionStart", "../../evil/../x", source="startup"))
    sessions = project / ".claude" / "governance" / "sessions"
    assert [p.name for p in sessions.iterdir()] == ["evilx.seen"]


def test_broken_matrix_tells_the_user_and_blocks_nothing(project: Path) -> None:
    override = project / ".claude" / "governance" / "activity_matrix.yaml"
    override.parent.mkdir(parents=True)
    override.write_text("rules: [broken\n")
    accept(project)  # accepted, then unreadable (as after an upgrade)
    for hook, event in ((session_start, "SessionStart"), (user_prompt_submit, "UserPromptSubmit")):
        answer = _call(hook, _payload(project, event, prompt="x", source="startup"))
        assert answer is not None and set(answer) == {"systemMessage"}
        assert f"could not read the cycle state for {event}" in answer["systemMessage"]
        assert "governance doctor" in answer["systemMessage"]


def test_wrong_event_is_reported_not_raised(project: Path) -> None:
    answer = _call(session_start, _payload(project, "UserPromptSubmit", prompt="x"))
    assert answer is not None and "this hook handles SessionStart" in answer["systemMessage"]
