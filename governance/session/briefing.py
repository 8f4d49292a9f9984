"""Session context: the SessionStart briefing and the UserPromptSubmit state-change line.

SessionStart (startup, resume, clear, compact) tells the model which cycle state the project is in,
what is blocked, warned and needs confirmation there, and that only the user changes the state; a
resumed session whose state changed meanwhile is told that first.
UserPromptSubmit adds one line when the state changed since the last prompt of the same session,
and nothing otherwise. The state last shown to a session is kept in
``<project>/.claude/governance/sessions/<session id>.seen``.

Hot path: ``jsoncodec``, ``os`` and our small modules. Neither event can block, and neither hook ever
stops a prompt: an internal error ends in exit 0 with a ``systemMessage`` for the user.
"""

from __future__ import annotations

import os
import sys

from governance import jsoncodec
from governance.errors import GovernanceError
from governance.hook import payload
from governance.policy.remedy import state_change
from governance.project import (
    ensure_dir,
    find_project,
    governance_dir,
    sandbox_manifest_path,
    temp_path,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from governance.policy.state import StateView

SESSIONS_DIR = "sessions"
CONTEXT_MAX = 8000


class Snapshot:
    """The project's state and what its matrix does in it."""

    __slots__ = ("project", "summary", "unaccepted", "view")

    def __init__(self, project: str, view: StateView, summary: dict[str, list[str]],
                 unaccepted: str = "") -> None:
        self.project = project
        self.view = view
        self.summary = summary
        self.unaccepted = unaccepted  # the matrix changed without being accepted: what the user reads

    @property
    def key(self) -> str:
        """What identifies the state for change detection."""
        return f"{self.view.state}|{self.view.label}"

    @property
    def title(self) -> str:
        label = self.view.label
        return self.view.state if label == self.view.state else f"{self.view.state} ({label})"


def snapshot(cwd: str | None) -> Snapshot:
    """Read the project, matrix and state for a payload's ``cwd``."""
    from governance.policy import matrix
    from governance.policy.state import read_state

    try:
        project = find_project(cwd)
    except ValueError as exc:
        raise GovernanceError(f"{exc}.", fix="start Claude Code inside the project folder") from None
    compiled = matrix.load(project)
    view = read_state(project, compiled)
    summary = compiled["summary"].get(view.state) or {}
    return Snapshot(project, view, {k: list(v) for k, v in summary.items()},
                    str(compiled.get("unaccepted") or ""))


def _listing(names: list[str]) -> str:
    return ", ".join(sorted(names)) if names else "nothing"


def briefing(snap: Snapshot) -> str:
    """The SessionStart text for the model."""
    summary = snap.summary
    lines = [
        f"[GOVERNANCE] This project is governed by a cycle state. Current state: {snap.title}.",
        f"Blocked in {snap.view.state}: {_listing(summary.get('blocked', []))}.",
        f"Allowed with a warning: {_listing(summary.get('warned', []))}.",
        f"Needs the user's confirmation: {_listing(summary.get('asked', []))}.",
    ]
    if snap.view.note:
        lines.append(snap.view.note)
    if snap.unaccepted:
        lines.append(snap.unaccepted)
    lines.append("A blocked call is denied with the reason and what to do instead; do not retry it "
                 f"verbatim. Only the user changes the state, with {state_change(snap.project)}.")
    text = "\n".join(lines)
    return text if len(text) <= CONTEXT_MAX else text[: CONTEXT_MAX - 1] + "…"


def change_line(before: str, snap: Snapshot) -> str:
    """The one line that tells the model the state changed since the session last saw it."""
    old = before.split("|", 1)[1] if "|" in before else before
    blocked = _listing(snap.summary.get("blocked", []))
    return (f"[GOVERNANCE] The cycle state changed since this session last saw it: {old} -> "
            f"{snap.title}. "
            f"Blocked now: {blocked}.")


def _seen_path(project: str, session: str) -> str:
    return os.path.join(governance_dir(project), SESSIONS_DIR, f"{session}.seen")


def read_seen(project: str, session: str) -> str | None:
    try:
        with open(_seen_path(project, session), encoding="utf-8") as fh:
            return fh.read().strip()
    except OSError:
        return None


def write_seen(project: str, session: str, key: str) -> None:
    path = _seen_path(project, session)
    ensure_dir(os.path.dirname(path))
    tmp = temp_path(path)
    with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w",
              encoding="utf-8") as fh:
        fh.write(key + "\n")
    os.replace(tmp, path)


def _context(event: str, text: str) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


def _failure(event: str, exc: BaseException) -> dict[str, Any]:
    text = exc.render() if isinstance(exc, GovernanceError) else f"{type(exc).__name__}: {exc}"
    return {"systemMessage": f"governance could not read the cycle state for {event}: "
                             f"{text.rstrip('.')}. Run `governance doctor` to find the cause."}


def _emit(answer: dict[str, Any] | None, out: Any) -> None:
    if answer:
        out.write(jsoncodec.dumps(answer) + "\n")
    out.flush()


def _keep_proxy(project: str) -> list[str]:
    """Start governance's sandbox proxy (``sandbox.proxy``) when the project's sandbox sends its
    traffic there and nothing answers on its port: its command line and log are the ones
    ``sandbox on`` recorded in the manifest, and only a command of that shape is run. Returns
    what the user must hear."""
    try:
        with open(sandbox_manifest_path(project), "rb") as fh:
            manifest = jsoncodec.loads(fh.read().decode("utf-8", "replace"))
    except (OSError, ValueError):
        return []
    proxy = manifest.get("proxy") if isinstance(manifest, dict) else None
    if not isinstance(proxy, dict):
        return []
    argv, port, log = proxy.get("command"), proxy.get("port"), proxy.get("log")
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv) or \
            not isinstance(port, int) or not isinstance(log, str):
        return []
    if len(argv) < 4 or not argv[0].startswith("/") or argv[1] != "-I" or \
            not argv[2].endswith("/launch.py") or argv[3] != "governance.sandbox.proxy":
        return [f"the sandbox proxy's command in {sandbox_manifest_path(project)} is not one "
                "governance writes, so it was not started; run `governance sandbox on`"]
    from governance import detached

    if detached.answers(port):
        return []
    try:
        detached.spawn(argv, log)
    except OSError as exc:
        return [f"the sandbox proxy could not start ({exc}), so sandboxed commands reach no "
                "host; run `governance sandbox on`"]
    return []


def session_start(argv: Sequence[str] | None = None, stdin: Any = None, stdout: Any = None) -> int:
    """SessionStart: brief the model on the cycle state."""
    out = stdout or sys.stdout
    try:
        data = payload.read(stdin or sys.stdin.buffer, ("SessionStart",))
        snap = snapshot(data.get("cwd"))
        text = briefing(snap)
        session = payload.session_id(data)
        if session:
            before = read_seen(snap.project, session)  # set when the session is resumed
            if before is not None and before != snap.key:
                text = change_line(before, snap) + "\n" + text
            write_seen(snap.project, session, snap.key)
        answer: dict[str, Any] | None = _context("SessionStart", text)
        alarms = [snap.unaccepted] if snap.unaccepted else []
        if snap.project:
            alarms += _keep_proxy(snap.project)
        if snap.view.source == "sealed":
            alarms.append(snap.view.note)
        if alarms and answer is not None:  # the user, not only the model, hears of it
            answer["systemMessage"] = "Governance: " + " ".join(alarms)
    except Exception as exc:
        answer = _failure("SessionStart", exc)
    _emit(answer, out)
    return 0


def user_prompt_submit(argv: Sequence[str] | None = None, stdin: Any = None,
                       stdout: Any = None) -> int:
    """UserPromptSubmit: one line when the state changed since this session last saw it."""
    out = stdout or sys.stdout
    answer: dict[str, Any] | None = None
    try:
        data = payload.read(stdin or sys.stdin.buffer, ("UserPromptSubmit",))
        session = payload.session_id(data)
        if session:
            snap = snapshot(data.get("cwd"))
            before = read_seen(snap.project, session)
            if before != snap.key:
                write_seen(snap.project, session, snap.key)
                if before is not None:
                    answer = _context("UserPromptSubmit", change_line(before, snap))
    except Exception as exc:
        answer = _failure("UserPromptSubmit", exc)
    _emit(answer, out)
    return 0
