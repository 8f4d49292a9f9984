"""The one call an agent makes before a significant choice.

:func:`pre_action` checks the guardrails, finds relevant past decisions with their outcomes,
reports the agent's calibration in the category and the confirmed patterns, and (unless blocked, or
asked not to) records the decision. With ``auto_record=False`` it only reads, so it is safe to
retry.

Failure policy (``settings.fail_mode`` in guardrails.yaml): bad input is always an error; a blocking
guardrail always blocks; an internal error allows with a warning when ``open`` (the default) and
blocks when ``closed``.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

from governance.decisions import fields
from governance.decisions.calibration import calibrate
from governance.decisions.fields import DecisionInputError
from governance.decisions.guardrails import check_guardrails, load_compiled, timestamp
from governance.decisions.store import DecisionStore
from governance.errors import GovernanceError

DEFAULT_OPTIONS: dict[str, Any] = {"query_limit": 5, "auto_record": True,
                                   "include_patterns": True}
PATTERN_CANDIDATES = 50


def current_state(project_dir: str) -> dict[str, Any]:
    """The cycle state to record with a decision; all None when it cannot be read."""
    empty: dict[str, Any] = {"state": None, "cycle": None, "phase": None, "work_item": None}
    try:
        state_module = importlib.import_module("governance.policy.state")
        matrix_module = importlib.import_module("governance.policy.matrix")
        view = state_module.read_state(project_dir, matrix_module.load(project_dir))
    except (ImportError, GovernanceError, OSError, ValueError, KeyError, TypeError):
        return empty
    return {key: getattr(view, key, None) or None for key in empty}


def options_from(raw: Any) -> dict[str, Any]:
    options = dict(DEFAULT_OPTIONS)
    if raw is None:
        return options
    if not isinstance(raw, dict):
        raise DecisionInputError(f"expected an object, got {raw!r}.", key="options")
    for key, value in raw.items():
        if key not in DEFAULT_OPTIONS:
            raise DecisionInputError(f"unknown option {key!r}.", key=f"options.{key}",
                                     fix="use query_limit, auto_record or include_patterns.")
        if key == "query_limit":
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 50:
                raise DecisionInputError(f"expected an integer from 0 to 50, got {value!r}.",
                                         key="options.query_limit")
        elif not isinstance(value, bool):
            raise DecisionInputError(f"expected true or false, got {value!r}.",
                                     key=f"options.{key}")
        options[key] = value
    return options


def patterns_summary(decisions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Distinct patterns among ``decisions`` with how many successful outcomes confirm each."""
    summary: dict[str, dict[str, Any]] = {}
    for item in decisions:
        pattern = item.get("pattern")
        if not pattern:
            continue
        entry = summary.setdefault(pattern, {"pattern": pattern, "decisions": 0,
                                             "confirmed": 0, "failed": 0})
        entry["decisions"] += 1
        if item.get("outcome") == "success":
            entry["confirmed"] += 1
        elif item.get("outcome") == "failure":
            entry["failed"] += 1
    return sorted(summary.values(), key=lambda e: (-e["confirmed"], e["failed"], e["pattern"]))


def _fail_mode(project_dir: str) -> str:
    try:
        return str(load_compiled(project_dir)["settings"].get("fail_mode", "open"))
    except GovernanceError:
        return os.environ.get("GOVERNANCE_FAIL_MODE", "open")


def pre_action(project_dir: str, agent_id: Any, action: Any, options: Any = None, *,
               store: DecisionStore | None = None) -> dict[str, Any]:
    """Guardrails, relevant decisions, calibration and patterns in one call; see the module
    docstring for the failure policy. Raises :class:`DecisionInputError` on bad input."""
    agent = fields.agent(agent_id)
    opts = options_from(options)
    try:
        settings = load_compiled(project_dir)["settings"]
        require = opts["auto_record"]
        clean = fields.action(action, require_tags=require and settings["require_tags"],
                                      require_pattern=require and settings["require_pattern"])
    except DecisionInputError:
        raise
    except GovernanceError as exc:
        return _internal_error(project_dir, exc)
    own_store = store is None
    try:
        store = store or DecisionStore.for_project(project_dir)
        try:
            return _decide(project_dir, agent, clean, opts, store)
        finally:
            if own_store:
                store.close()
    except DecisionInputError:
        raise
    except Exception as exc:  # the failure policy covers every internal error
        return _internal_error(project_dir, exc)


def ranking_mode(settings: dict[str, Any]) -> str:
    """``GOVERNANCE_RANKING`` (keyword|hybrid), else the ``ranking`` setting."""
    chosen = os.environ.get("GOVERNANCE_RANKING") or settings.get("ranking") or "keyword"
    return chosen if chosen in ("keyword", "hybrid") else "keyword"


def _decide(project_dir: str, agent: str, action: dict[str, Any], opts: dict[str, Any],
            store: DecisionStore) -> dict[str, Any]:
    state = current_state(project_dir)
    verdict = check_guardrails({**action, **state, "agent_id": agent}, project_dir, agent)
    text = " ".join([action["description"], *action["tags"]])
    ranking = ranking_mode(load_compiled(project_dir)["settings"])
    candidates = store.query(text, limit=max(opts["query_limit"],
                                             PATTERN_CANDIDATES if opts["include_patterns"]
                                             else 0), ranking=ranking)
    calibration = calibrate([(conf, outcome) for _, conf, outcome
                             in store.reviewed(agent, action["category"])], action["category"])
    results = [{"guardrailId": item["guardrailId"], "name": item["name"],
                "status": item["severity"], "message": item["message"],
                "suggestion": item["suggestion"]}
               for item in verdict["violations"] + verdict["warnings"]]
    results += [{"guardrailId": item["guardrailId"], "name": item["name"], "status": "pass",
                 "message": "", "suggestion": ""} for item in verdict["passed"]]
    response: dict[str, Any] = {
        "allowed": verdict["allowed"],
        "relevant_decisions": [
            {"id": item["id"], "decision": item["description"], "outcome": item["outcome"],
             "date": item["created_at"], "pattern": item["pattern"],
             "confidence": item["confidence"], "similarity": item["similarity"]}
            for item in candidates[:opts["query_limit"]]],
        "guardrail_results": results,
        "calibration_context": {
            "category": action["category"], "category_accuracy": calibration["accuracy"],
            "category_brier": calibration["brier"],
            "confidence_tendency": calibration["tendency"],
            "sample_size": calibration["sample_size"], "suggestion": calibration["suggestion"]},
        "evaluatedAt": verdict["evaluatedAt"],
    }
    if opts["include_patterns"]:
        response["patterns_summary"] = patterns_summary(candidates)
    if not verdict["allowed"]:
        response["block_reasons"] = [f"{item['message']} {item['suggestion']}".strip()
                                     for item in verdict["violations"]]
    if verdict["warnings"]:
        response["warnings"] = [item["message"] for item in verdict["warnings"]]
    if verdict["allowed"] and opts["auto_record"]:
        response["decision_id"] = store.record(action, agent, state)["id"]
        if ranking == "hybrid":
            from governance.decisions.ranking import embed_decision

            embed_decision(store, response["decision_id"])
    return response


def _internal_error(project_dir: str, exc: BaseException) -> dict[str, Any]:
    closed = _fail_mode(project_dir) == "closed"
    text = f"governance could not evaluate this decision ({type(exc).__name__}: {exc})."
    response: dict[str, Any] = {
        "allowed": not closed, "relevant_decisions": [], "guardrail_results": [],
        "calibration_context": None, "patterns_summary": [], "evaluatedAt": timestamp(),
        "internal_error": text,
    }
    if closed:
        response["block_reasons"] = [text + " The deployment is configured fail-closed."]
    else:
        response["warnings"] = [text + " Proceeding because the deployment is fail-open."]
    return response
