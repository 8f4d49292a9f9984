"""Hook answers in Claude Code's JSON contract (see the reference, sections 4 and 5).

- block / redirect: ``permissionDecision: "deny"`` with a reason that says why and what to do.
- ask: ``permissionDecision: "ask"`` with the reason.
- warn: no decision; the warning goes to ``additionalContext`` (the model) and ``systemMessage``
  (the user).
- allow: ``additionalContext`` only, never ``"allow"`` (which would skip Claude Code's own permission
  check), unless ``grant_on_allow`` is set.
Hot path: no imports (``policy.remedy`` for a deny that names the commands to change the state).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from governance.policy.decision import Decision

# Caps that the client applies on some paths (reference section 4); stay inside them.
REASON_MAX = 2000
SYSTEM_MAX = 4000
CONTEXT_MAX = 8000


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


SECRET_ACTS = ("secret-read", "exfiltration")


def state_line(state: str, blocked: list[str], intent: str = "") -> str:
    named = f" [INTENT: {intent}]" if intent else ""
    return f"[STATE: {state}]{named} Blocked: {', '.join(sorted(blocked)) or 'none'}"


def _subject(decision: Decision) -> str:
    subject = f"{decision.tool} ({decision.primitive})" if decision.tool else decision.primitive
    segment = decision.segment
    if segment and segment != decision.tool:
        if decision.primitive in SECRET_ACTS:   # a key in the command is not said back
            from governance.ledger.redaction import redact

            segment = redact(segment)
        shown = segment if len(segment) <= 120 else segment[:117] + "..."
        subject += f" `{shown}`"
    for act in decision.acts:   # an act found in a file the command runs says which file
        reason = str(act.get("reason", ""))
        if act.get("primitive") == decision.primitive and decision.primitive in SECRET_ACTS \
                and reason:     # which secret, from where, to which host (never its value)
            return f"{subject} ({reason})"
        if act.get("primitive") == decision.primitive and reason.endswith(")") and " (in " in \
                reason:
            return f"{subject} ({reason[reason.rindex(' (in ') + 2:-1]})"
    return subject


def instead(decision: Decision, allowed_in: list[str], project: str | None = None) -> str:
    """What the agent can do instead of a denied call; the commands it names are the ones that
    exist in ``project`` (``policy.remedy``, loaded only for a deny)."""
    if decision.redirect_to:
        return f"Use {decision.redirect_to} instead."
    if decision.rule_key.startswith("guardrails.") or decision.rule_key == "settings.require_intent":
        return ""  # a guardrail's or the intent check's message carries its own suggestion
    others = [s for s in allowed_in if s != decision.state.state]
    if decision.primitive == "governance-admin":
        from governance.policy import remedy

        return ("Continue without it, or ask the user to make this change. The user changes the "
                f"cycle state with {remedy.state_change(project)}.")
    if not others:
        return "Continue without it, or ask the user to make this change from a terminal."
    from governance.policy import remedy

    return (f"It is allowed in {', '.join(others)}: continue the {decision.state.state} work without "
            f"it, or ask the user to change the cycle state: {remedy.state_change(project)}.")


def pre_tool_use(decision: Decision, blocked: list[str], allowed_in: list[str],
                 grant_on_allow: bool = False, intent: str = "",
                 project: str | None = None) -> dict[str, Any]:
    state = decision.state
    lines = [state_line(state.state, blocked, intent)]
    if state.note:
        lines.append(state.note)
    out: dict[str, Any] = {"hookEventName": "PreToolUse"}
    answer: dict[str, Any] = {"hookSpecificOutput": out}
    rule = f"{decision.rule_key} in {decision.rule_file}"
    message = decision.message or f"{decision.primitive} is not allowed in {state.state}."
    org = decision.layer == "org"
    tag = "[ORG] " if org else ""
    if org:   # the organisation's layer decided: no project setting changes it
        rule += " (the organisation's policy, which a project cannot change)"
    if decision.action in ("block", "redirect"):
        hint = instead(decision, allowed_in, project)
        said = f"[ORG] Blocked: {_subject(decision)}:" if org else \
            f"{_subject(decision)} is blocked:"
        reason = f"[STATE: {state.state}] {said} {message} {hint + ' ' if hint else ''}" \
                 f"(rule: {decision.rule_key}" \
                 f"{' of the organisation, in ' + decision.rule_file if org else ''})"
        out["permissionDecision"] = "deny"
        out["permissionDecisionReason"] = clip(reason, REASON_MAX)
        lines.append(f"[ORG] Blocked: {_subject(decision)}: {message}" if org else
                     f"Denied {_subject(decision)}: {message}")
    elif decision.action == "ask":
        out["permissionDecision"] = "ask"
        out["permissionDecisionReason"] = clip(
            f"Governance [{state.state}]: {tag}{_subject(decision)}: {message} (rule: {rule})",
            REASON_MAX)
        lines.append(f"{tag}{_subject(decision)} needs the user's confirmation: {message}")
    elif decision.action == "warn":
        warning = f"{tag}Warning for {_subject(decision)}: {message}"
        lines.append(warning)
        answer["systemMessage"] = clip(f"governance [{state.state}]: {warning} (rule: {rule})",
                                       SYSTEM_MAX)
    elif grant_on_allow:
        out["permissionDecision"] = "allow"
        out["permissionDecisionReason"] = clip(f"Allowed in {state.state} by {rule}", REASON_MAX)
    out["additionalContext"] = clip("\n".join(lines), CONTEXT_MAX)
    return answer


def failure(event: str | None, message: str, log_path: str | None, fail_closed: bool) -> dict[str, Any]:
    """The answer when governance itself broke: fail open (grant nothing) or closed (deny)."""
    where = f" Details: {log_path}" if log_path else ""
    if fail_closed:
        text = (f"governance failed and is set to fail closed, so this call is blocked: {message}."
                f"{where} Ask the user to run `governance doctor`.")
    else:
        text = (f"governance failed, so this call was NOT checked (fail-open): {message}.{where} "
                "Run `governance doctor` to find the cause.")
    answer: dict[str, Any] = {"systemMessage": clip(text, SYSTEM_MAX)}
    if event == "PreToolUse":
        out: dict[str, Any] = {"hookEventName": event,
                               "additionalContext": clip(f"[GOVERNANCE ERROR] {text}", CONTEXT_MAX)}
        if fail_closed:
            out["permissionDecision"] = "deny"
            out["permissionDecisionReason"] = clip(text, REASON_MAX)
        answer["hookSpecificOutput"] = out
    return answer
