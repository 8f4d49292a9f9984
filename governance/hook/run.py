"""What the PreToolUse and PostToolUse hook processes do, start to finish.

Every call is a new process that Claude Code waits for, so this module and everything it imports at
the top stay on the standard library's cheapest modules. Internal errors never escape: they end in
exit 0 with a JSON reply that tells the user what broke (fail-open, granting nothing), or a deny
when fail-closed is configured (``--on-error block``, ``GOVERNANCE_ON_ERROR=block`` or
``settings.on_error: block`` in the matrix).
"""

from __future__ import annotations

import sys
import time

from governance import jsoncodec, system
from governance.errors import GovernanceError, PayloadError
from governance.hook import payload
from governance.ledger import chain
from governance.policy import matrix as matrix_module
from governance.policy.seal import changed, recall_derived, settings_unchanged
from governance.project import (
    GUARDRAILS_MEMO,
    KNOWLEDGE_MEMO,
    default_matrix_path,
    find_project,
    governance_dir,
    guardrails_sources,
    intents_path,
    knowledge_sources,
    override_matrix_path,
    signature,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, TextIO

    from governance.policy.layer import GovernanceLayer


class Run:
    """One hook call's context, filled in as far as it got before anything failed."""

    def __init__(self, event: str | None, argv: Sequence[str]) -> None:
        self.started = time.perf_counter()
        self.event = event
        self.on_error = _arg(argv, "--on-error") or system.environ_get("GOVERNANCE_ON_ERROR") or ""
        self.project: str | None = None
        self.matrix: dict[str, Any] | None = None
        self.tampered: list[str] = []      # derived files found rewritten (``_unaccepted``)
        self.data: dict[str, Any] | None = None   # the payload, once read

    @property
    def gov_dir(self) -> str | None:
        return governance_dir(self.project) if self.project else None

    def ms(self) -> float:
        return round((time.perf_counter() - self.started) * 1000, 3)

    def fail_closed(self) -> bool:
        if self.on_error:
            return self.on_error == "block"
        if self.matrix is not None:
            settings = self.matrix["settings"]
            if settings.get("require_intent") and not settings.get("on_error_set"):
                return True     # governance fails closed once changes need an intent
            return bool(settings["on_error"] == "block")
        return _declares_fail_closed(self.project)

    def failure(self, exc: BaseException) -> dict[str, Any]:
        text = exc.render() if isinstance(exc, GovernanceError) else f"{type(exc).__name__}: {exc}"
        log = None
        if self.project is None:
            try:
                self.project = find_project(None)
            except ValueError:
                pass
        if self.gov_dir:
            detail = text
            if not isinstance(exc, GovernanceError):
                import traceback

                detail += "\n" + "".join(traceback.format_exception(exc))
            log = chain.log_error(self.gov_dir, f"{self.event or 'hook'}: {detail}")
        from governance.hook import answer

        closed = bool(getattr(exc, "closed", False))
        if closed and self.gov_dir:     # the organisation's layer refused: denied and recorded
            try:
                data = self.data or {}
                chain.append(self.gov_dir, {"event": self.event, "layer": "org",
                                            "tool_use_id": str(data.get("tool_use_id") or ""),
                                            "tool": data.get("tool_name"),
                                            "session": payload.session_id(data),
                                            "decision": "deny" if self.event == "PreToolUse"
                                            else "none",
                                            "org_refused": text[:500]})
            except GovernanceError:
                pass
        return answer.failure(self.event, text, log, closed or self.fail_closed())


def _arg(argv: Sequence[str], name: str) -> str | None:
    for i, item in enumerate(argv):
        if item == name and i + 1 < len(argv):
            return argv[i + 1]
        if item.startswith(name + "="):
            return item.split("=", 1)[1]
    return None


def _declares_fail_closed(project: str | None) -> bool:
    """Whether a matrix that failed to load says ``on_error: block``, or ``require_intent: true``
    without ``on_error: allow`` (read as text)."""
    paths = [default_matrix_path()] + ([override_matrix_path(project)] if project else [])
    import re

    for k, path in enumerate(paths):
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        except OSError:
            continue
        if re.search(r"(?m)^\s*on_error:\s*[\"']?block\b", text):
            return True
        if k and re.search(r"(?m)^\s*require_intent:\s*[\"']?(true|yes|on)\b", text, re.I) and \
                not re.search(r"(?m)^\s*on_error:\s*[\"']?allow\b", text):
            return True
    return False


def _emit(reply: dict[str, Any] | None, out: TextIO) -> None:
    if reply:
        out.write(jsoncodec.dumps(reply))
        out.write("\n")
    out.flush()


def _layer(run: Run, data: dict[str, Any]) -> GovernanceLayer:
    from governance.policy.layer import GovernanceLayer

    try:
        run.project = find_project(data.get("cwd"))
    except ValueError as exc:
        raise PayloadError(f"{exc}.", fix="start Claude Code inside the project folder, or set "
                                          "CLAUDE_PROJECT_DIR to it") from None
    run.matrix = matrix_module.load(run.project)
    layer = GovernanceLayer(run.project, run.matrix)
    layer.session = payload.session_id(data)
    return layer


def _base_record(data: dict[str, Any], run: Run) -> dict[str, Any]:
    record: dict[str, Any] = {
        "event": data.get("hook_event_name"),
        "session": payload.session_id(data),
        "tool_use_id": data.get("tool_use_id") or "",
        "tool": data.get("tool_name"),
    }
    if data.get("agent_id"):
        record["agent_id"] = str(data["agent_id"])[:128]
        record["agent_type"] = str(data.get("agent_type") or "")[:128]
    if data.get("permission_mode"):
        record["permission_mode"] = str(data["permission_mode"])[:32]
    if run.matrix is not None:
        record["config_hash"] = run.matrix["config_hash"]
    return record


def _unaccepted(run: Run, view: Any, settings: bool) -> dict[str, str]:
    """What changed without being accepted (``governance.policy.seal``): part -> what the user reads.

    The state and the matrix in force are already the accepted ones (``state``, ``matrix``);
    with ``settings``, the settings governance owns are checked too and put back. ``derived``:
    files governance builds that were found rewritten this call (``seal.changed``),
    already built again from the accepted sources."""
    found: dict[str, str] = {}
    matrix = run.matrix or {}
    if matrix.get("unaccepted"):
        found["matrix"] = str(matrix["unaccepted"])
    if view.source == "sealed":
        found["state"] = view.note
    record = matrix.get("seal")
    entry = record.get("settings") if record else None
    if settings and entry and not settings_unchanged(run.project or "", entry, record):
        from governance.hook import owned

        problems = owned.check(run.project or "", entry)
        if problems:
            written = owned.repair(entry)
            what = "; ".join(text for _index, text in problems)
            found["settings"] = (
                f"Claude Code settings that governance owns were changed outside governance "
                f"({what}). " + (f"Governance put them back in {', '.join(written)}. "
                                 if written else "Governance could not put them back. ")
                + "To change them, use `governance sandbox on|off` or `governance "
                  "install|uninstall` from a terminal.")
    tampered = changed(run.project or "")
    if tampered:
        from governance.policy.derived import message

        run.tampered = tampered
        found["derived"] = message(run.project or "", tampered)
    return found


PATH_KEYS = ("file_path", "notebook_path", "path")


def _refuse_swallowed_ask(data: dict[str, Any], decision: Any) -> None:
    """An ``ask`` Claude Code would approve without asking (``hook.sensitive``) becomes a deny
    that says so: the user's approval cannot be had in this mode."""
    from governance.hook.sensitive import ask_is_swallowed

    path = ask_is_swallowed(str(data["tool_name"]), data["tool_input"],
                            data.get("permission_mode"))
    if path is None:
        return
    decision.action = "block"
    decision.message = (f"{decision.message} It needs the user's approval, and in bypassPermissions "
                        f"mode Claude Code approves changes to {path.rsplit('/', 1)[-1]} without "
                        "asking (it is one of the files Claude Code treats as sensitive), so "
                        "governance refuses it: ask the user to make this change, or to approve it "
                        "in a session that is not in bypassPermissions mode.").strip()
    decision.ask_refused = "bypassPermissions"


def _apply_guardrails(project: str, data: dict[str, Any], decision: Any,
                      record: dict[str, Any] | None) -> None:
    """Guardrails with tool-call conditions: a blocking one denies, a warning one warns.

    While the sources are as they were when last compiled and held no tool-call guardrail (the
    memo the guardrails module keeps says so), nothing is imported or read beyond two stats."""
    sources = guardrails_sources(project)
    known = recall_derived(project, GUARDRAILS_MEMO, signature(sources), record)
    if isinstance(known, dict) and known.get("tool_rules") == 0:
        return
    from governance.decisions.guardrails import evaluate_tool_call

    tool_input = data["tool_input"]
    command = tool_input.get("command")
    view = decision.state
    facts = {"tool": data["tool_name"], "primitive": decision.primitive, "state": view.state,
             "cycle": view.cycle, "phase": view.phase, "work_item": view.work_item,
             "paths": [v for k in PATH_KEYS if isinstance(v := tool_input.get(k), str)],
             "command": command if isinstance(command, str) else None,
             "agent_id": data.get("agent_id"), "permission_mode": data.get("permission_mode")}
    violated = evaluate_tool_call(project, facts)
    if not violated:
        return
    worst = next((v for v in violated if v["severity"] == "block"), violated[0])
    text = f"{worst['name']}: {worst['message']}"
    if worst.get("suggestion"):
        text += f" Instead: {worst['suggestion']}"
    if worst["severity"] == "block" or decision.action == "allow":
        decision.action = "block" if worst["severity"] == "block" else "warn"
        decision.message = text
        decision.rule_key = f"guardrails.{worst['guardrailId']}"
        decision.rule_file = str(worst["file"])
        decision.layer = "org" if decision.rule_file == sources[2] else ""
    else:
        decision.message = f"{decision.message} Also: {text}".strip()


def _apply_intent(project: str, data: dict[str, Any], decision: Any) -> str:
    """``require_intent``: a change needs an active intent and stays in its scope
    (``governance.intent.guard``). Returns the active intent as the context line names it."""
    from governance.intent.guard import check

    verdict = check(project, payload.session_id(data), decision.state.work_item,
                    data["tool_name"], data["tool_input"], data.get("cwd"), decision.acts)
    if verdict.denied and not decision.denies:
        decision.action = "block"
        decision.message = verdict.reason
        decision.rule_key = "settings.require_intent"
    active = verdict.active
    return f"{active['id']} {active['title']}" if active else ""


TRACED = ("Write", "Edit", "MultiEdit", "NotebookEdit")


def _trace(run: Run, data: dict[str, Any], work_item: str, record: dict[str, Any]
           ) -> dict[str, Any] | None:
    """Append the change to the trace (``governance.intent.trace``). Never blocks: a failure is
    told to the user (``systemMessage``) and written to ``errors.log``."""
    project = run.project or ""
    try:
        from governance.intent import guard, selection, trace

        tool = str(data["tool_name"])
        tool_input = data["tool_input"]
        session = payload.session_id(data)
        key = guard.PATH_TOOLS[tool]
        target = tool_input.get(key)
        if not isinstance(target, str) or not target:
            return None
        inside = guard.relative(project, data.get("cwd"), target)
        name = inside or system.realpath(system.join(data.get("cwd") or project, target))
        if tool == "NotebookEdit":
            found = trace.notebook_ranges(tool_input)
        else:
            try:
                with open(system.join(project, inside) if inside else name, encoding="utf-8",
                          errors="replace") as fh:
                    text: str | None = fh.read()
            except OSError:
                text = None
            found = trace.ranges(tool, tool_input, text) or []
        intent, _source = selection.selected(project, session, work_item)
        entry = trace.record(project, name, found, intent=intent, session=session, tool=tool,
                             tool_use_id=str(data.get("tool_use_id") or ""),
                             ledger_hash=trace.allowed_by(governance_dir(project),
                                                          str(data.get("tool_use_id") or "")),
                             cell_id=str(tool_input.get("cell_id") or ""))
        trace.append(project, entry)
        record["trace"] = entry["id"]
        return None
    except Exception as exc:
        text = exc.render() if isinstance(exc, GovernanceError) else f"{type(exc).__name__}: {exc}"
        log = chain.log_error(governance_dir(project), f"trace: {text}")
        record["trace_error"] = text[:300]
        return {"systemMessage": f"governance: the change was made but could not be traced "
                                 f"({text}).{' Details: ' + log if log else ''}"}


def _bind_intent(project: str, data: dict[str, Any]) -> str:
    """The agent's ``select_active_intent`` completed: the intent becomes its session's (only a
    declared, active one)."""
    from governance.intent import guard, selection

    intent_id = data["tool_input"].get("intent_id")
    if not isinstance(intent_id, str) or not any(
            i["id"] == intent_id and i["status"] == "active" for i in guard.declared(project)):
        return ""
    selection.choose(project, intent_id, payload.session_id(data), by="agent")
    return intent_id


def _consult_knowledge(run: Run, data: dict[str, Any], decision: Any) -> Any:
    """The knowledge outcome (``governance.knowledge.lookup``), or None. Knowledge that
    cannot be consulted (a broken knowledge configuration, say) does not undo the matrix's
    decision: the user is told and ``errors.log`` has the details; fail-closed denies."""
    project = run.project or ""
    sources = signature(knowledge_sources(project))
    known = recall_derived(project, KNOWLEDGE_MEMO, sources, (run.matrix or {}).get("seal"))
    if isinstance(known, dict) and known.get("quiet"):
        return None       # no SOP, no memory, or the level is disabled: nothing to consult
    from governance.knowledge.lookup import Outcome, consult

    try:
        looked = consult(project, data, decision, _build_knowledge_index, sources,
                         (run.matrix or {}).get("seal"))
        if looked is None:
            return None
        outcome, found, settings = looked
        if found:
            from governance.knowledge.enforcement import enforce

            enforce(project, payload.session_id(data), data, settings, found, outcome,
                    time.time())
        return outcome
    except Exception as exc:
        failed = run.failure(exc)
        outcome = Outcome({"error": failed["systemMessage"][:300]})
        outcome.system = "Knowledge was not consulted: " + failed["systemMessage"]
        if run.fail_closed():
            outcome.deny = True
            outcome.reason = failed["systemMessage"]
        return outcome


def _build_knowledge_index(project: str) -> Any:
    from governance.knowledge.indexer import rebuild_index

    return rebuild_index(project)


def _apply_knowledge(reply: dict[str, Any], knowledge: Any, decision: Any) -> None:
    from governance.hook import answer

    out = reply["hookSpecificOutput"]
    if knowledge.context:
        out["additionalContext"] = answer.clip(out["additionalContext"] + "\n" + knowledge.context,
                                               answer.CONTEXT_MAX)
    if knowledge.system:
        said = reply.get("systemMessage")
        reply["systemMessage"] = answer.clip((f"{said}\n" if said else "") + knowledge.system,
                                             answer.SYSTEM_MAX)
    if knowledge.deny:
        out["permissionDecision"] = "deny"
        reason = knowledge.reason
        if len(reason) > answer.REASON_MAX:
            reason = reason[:answer.REASON_MAX - 60] + "\n[... the rest is in the context]"
        out["permissionDecisionReason"] = reason


def _taint_on_read(layer: GovernanceLayer, decision: Any) -> None:
    """A call that reads a secret and is let through (or put to the user) taints its session:
    what the session sends out afterwards is watched (docs/secrets.md)."""
    sources = [s for act in decision.acts if act["primitive"] == "secret-read"
               for s in act.get("secrets") or ("a secret",)]
    if sources and layer.session:
        from governance.policy import taint

        taint.mark(layer.project_dir, layer.session, sources,
                   layer.matrix["secrets"]["taint_seconds"])


def _taint_on_result(layer: GovernanceLayer, data: dict[str, Any]) -> None:
    """A tool result that shows a secret-shaped value (a token printed, a key in a file nobody
    listed) taints the session. Pages fetched from the web do not: their examples are not the
    user's secrets."""
    if not layer.matrix.get("secrets") or not layer.session or \
            data["tool_name"] in ("WebFetch", "WebSearch"):
        return
    from governance.ledger.redaction import kinds

    found: list[str] = []
    stack = [data.get("tool_response")]
    while stack and len(found) < 5:
        value = stack.pop()
        if isinstance(value, str):
            found += [k for k in kinds(value) if k not in found]
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    if found:
        from governance.policy import taint
        from governance.policy.secrets import article

        taint.mark(layer.project_dir, layer.session,
                   [f"{article(kind)} {kind} in a {data['tool_name']} result" for kind in found],
                   layer.matrix["secrets"]["taint_seconds"])


def pre_tool_use(argv: Sequence[str] | None = None, stdin: Any = None, stdout: Any = None) -> int:
    """PreToolUse: decide, reply, record."""
    from governance.hook import answer

    run = Run("PreToolUse", sys.argv[1:] if argv is None else argv)
    out = stdout or sys.stdout
    try:
        data = run.data = payload.read(stdin or sys.stdin.buffer, ("PreToolUse",))
        layer = _layer(run, data)
        tool_input = data["tool_input"]
        decision = layer.decide(data["tool_name"], tool_input, data.get("cwd"))
        decision.tool = data["tool_name"]
        settings = layer.matrix["settings"]
        intent = ""
        if settings.get("require_intent"):
            intent = _apply_intent(run.project or "", data, decision)
        if not decision.denies:
            _apply_guardrails(run.project or "", data, decision, layer.matrix.get("seal"))
        if decision.action == "ask" and data.get("permission_mode") == "bypassPermissions":
            _refuse_swallowed_ask(data, decision)
        knowledge = None if decision.denies else _consult_knowledge(run, data, decision)
        state = decision.state.state
        reply = answer.pre_tool_use(decision, layer.blocked_primitives(state),
                                     matrix_module.allowed_states(layer.matrix, decision.primitive)
                                     if decision.denies else [],
                                     grant_on_allow=bool(settings["grant_on_allow"]),
                                     intent=intent, project=run.project)
        unaccepted = _unaccepted(run, decision.state, settings=True)
        if unaccepted:
            said = reply.get("systemMessage")
            reply["systemMessage"] = answer.clip(
                (f"{said}\n" if said else "") + "Governance: " + " ".join(unaccepted.values()),
                answer.CONTEXT_MAX)
            context = reply["hookSpecificOutput"]
            context["additionalContext"] = answer.clip(
                context["additionalContext"] + "\nGovernance files were changed outside "
                "governance (" + ", ".join(unaccepted) + "); the accepted versions are in force "
                "until the user accepts the change.", answer.CONTEXT_MAX)
        if knowledge is not None:
            _apply_knowledge(reply, knowledge, decision)
        if not decision.denies:
            _taint_on_read(layer, decision)
        record = _base_record(data, run)
        record.update(decision.as_record())
        if knowledge is not None:
            record["knowledge"] = knowledge.record
        if unaccepted:
            record["unaccepted"] = sorted(unaccepted)
        if run.tampered:
            record["tampered"] = run.tampered
        if intent:
            record["intent"] = intent.split(" ", 1)[0]
        record["map_rule"] = decision.map_rule
        record["decision"] = reply["hookSpecificOutput"].get("permissionDecision", "none")
        record["input_sha256"] = chain.digest(tool_input)
        record["duration_ms"] = run.ms()
        try:
            for extra in knowledge.ignored if knowledge is not None else ():
                chain.append(governance_dir(run.project or ""), extra,
                             max_bytes=layer.matrix["settings"]["ledger_max_bytes"])
            chain.append(governance_dir(run.project or ""), record,
                          max_bytes=layer.matrix["settings"]["ledger_max_bytes"])
        except GovernanceError as exc:
            if not decision.denies:  # a deny stands even when it cannot be recorded
                failed = run.failure(exc)
                failed.setdefault("hookSpecificOutput", {})["additionalContext"] = answer.clip(
                    reply["hookSpecificOutput"]["additionalContext"] + "\n"
                    + failed["hookSpecificOutput"]["additionalContext"], answer.CONTEXT_MAX)
                reply = failed
            else:
                reply["systemMessage"] = answer.failure(None, exc.render(), None, False)[
                    "systemMessage"]
    except Exception as exc:
        reply = run.failure(exc)
    _emit(reply, out)
    return 0


def post_tool_use(argv: Sequence[str] | None = None, stdin: Any = None, stdout: Any = None) -> int:
    """PostToolUse and PostToolUseFailure: record the completed call. Never blocks."""
    run = Run(None, sys.argv[1:] if argv is None else argv)
    run.on_error = "allow"  # the tool already ran: nothing to block
    out = stdout or sys.stdout
    reply: dict[str, Any] | None = None
    try:
        data = run.data = payload.read(stdin or sys.stdin.buffer, ("PostToolUse", "PostToolUseFailure"))
        run.event = data["hook_event_name"]
        layer = _layer(run, data)
        view = layer.get_activity_state()
        record = _base_record(data, run)
        record["primitive"] = layer.tool_primitive(data["tool_name"])[0]
        record.update(view.as_record())
        unaccepted = _unaccepted(run, view, settings=False)
        if unaccepted:
            record["unaccepted"] = sorted(unaccepted)
        if run.tampered:
            record["tampered"] = run.tampered
        if run.event == "PostToolUseFailure":
            record["outcome"] = "interrupted" if data.get("is_interrupt") else "failure"
            error = data.get("error")
            if error is None:
                record["error"] = ""
            else:  # redact before clipping, so no secret is cut below recognition
                from governance.hook import answer
                from governance.ledger.redaction import redact

                record["error"] = answer.clip(redact(str(error)), 500)
                _taint_on_result(layer, {**data, "tool_response": str(error)})
        else:
            record["outcome"] = "success"
            record["response_sha256"] = chain.digest(data.get("tool_response"))
            _taint_on_result(layer, data)
            tool = str(data["tool_name"])
            if tool.startswith("mcp__") and tool.endswith("__select_active_intent"):
                record["intent_selected"] = _bind_intent(run.project or "", data)
            elif tool in TRACED and system.exists(intents_path(run.project or "")):
                reply = _trace(run, data, view.work_item, record)
        if isinstance(data.get("duration_ms"), int | float):
            record["tool_duration_ms"] = data["duration_ms"]
        record["input_sha256"] = chain.digest(data["tool_input"])
        record["duration_ms"] = run.ms()
        chain.append(governance_dir(run.project or ""), record,
                      max_bytes=layer.matrix["settings"]["ledger_max_bytes"])
    except Exception as exc:
        reply = run.failure(exc)
    _emit(reply, out)
    return 0

