"""Claude Code hooks over HTTP: the command hooks' own entry functions, run on a request body.

One decision path, two transports: what ``POST /hooks/{event}`` answers is what the command hook
prints for the same input.
"""

from __future__ import annotations

import io

# event -> (module, function): the entry functions of the command hooks
HOOKS: dict[str, tuple[str, str]] = {
    "PreToolUse": ("governance.hook.run", "pre_tool_use"),
    "PostToolUse": ("governance.hook.run", "post_tool_use"),
    "PostToolUseFailure": ("governance.hook.run", "post_tool_use"),
    "SessionStart": ("governance.session.briefing", "session_start"),
    "UserPromptSubmit": ("governance.session.briefing", "user_prompt_submit"),
}


def hook_answer(event: str, body: bytes, on_error: str) -> bytes:
    """What the command hook for ``event`` prints for this input (bytes, maybe empty)."""
    import importlib

    module, function = HOOKS[event]
    entry = getattr(importlib.import_module(module), function)
    out = io.StringIO()
    entry(["--on-error", on_error] if on_error else [], io.BytesIO(body), out)
    return out.getvalue().encode("utf-8")
