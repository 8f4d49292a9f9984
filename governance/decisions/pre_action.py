"""The one call an agent makes before a significant choice.

:func:`pre_action` checks the guardrails, finds relevant past decisions with their outcomes,
reports the agent's calibration in the category and the confirmed patterns, and (unless blocked, or
asked not to) records the decision. With ``auto_record=False`` it only reads, so it is safe to
retry.

Failure policy (``settings.fail_mode`` in guardrails.yaml, one setting per deployment): bad input is
always an error; a blocking guardrail always blocks; a warning, and an internal error (a guardrail
file that does not validate, an unreadable store), warns and allows when ``open`` (the default) and
blocks when ``closed`` (production) (:mod:`governance.decisions.failure_policy`). The answer's
``fail_mode`` and ``decided_by`` say which decided.

Quality (:mod:`governance.decisions.quality`): a decision is recorded with tags and a pattern;
what the caller leaves out is derived and reported in ``quality``, or refused under the strict
rule.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

from governance.decisions import fields
from governance.decisions.calibration import calibrate_sums
from governance.decisions.failure_policy import internal_error
from governance.decisions.fields import DecisionInputError
from governance.decisions.guardrails import check_guardrails, load_compiled
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


def pattern_counts(decisions: list[dict[str, Any]]) -> list[dict[str, Any]]:
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


def patterns_summary(counts: list[dict[str, Any]]) -> list[str]:
    """The confirmed patterns as the seed prints them: ``"<pattern> (3 confirmations)"``."""
    return [f"{entry['pattern']} ({entry['confirmed']} confirmation"
            f"{'' if entry['confirmed'] == 1 else 's'})" for entry in counts if entry["confirmed"]]


def pre_action(project_dir: str, agent_id: Any, action: Any, options: Any = None, *,
               store: DecisionStore | None = None, compiled: dict[str, Any] | None = None
               ) -> dict[str, Any]:
    """Guardrails, relevant decisions, calibration and patterns in one call; see the module
    docstring for the failure policy. Raises :class:`DecisionInputError` on bad input (and,
    under the strict quality rule, on a missing tag or pattern). ``compiled``: the project's
    guardrails, loaded already by the caller (:func:`load_compiled`)."""
    agent = fields.agent(agent_id)
    opts = options_from(options)
    clean = fields.action(action, require_tags=False, require_pattern=False)
    own_store = store is None
    try:
        compiled = compiled or load_compiled(project_dir)
        store = store or DecisionStore.for_project(project_dir)
        try:
            return _decide(project_dir, agent, clean, opts, store, compiled)
        finally:
            if own_store:
                store.close()
    except DecisionInputError:
        raise
    except Exception as exc:  # the failure policy covers every internal error
        return internal_error(project_dir, exc)


def ranking_mode(settings: dict[str, Any]) -> str:
    """``GOVERNANCE_RANKING`` (keyword|hybrid), else the ``ranking`` setting."""
    chosen = os.environ.get("GOVERNANCE_RANKING") or settings.get("ranking") or "keyword"
    return chosen if chosen in ("keyword", "hybrid") else "keyword"


def _result(item: dict[str, Any], status: str) -> dict[str, Any]:
    """One guardrail's line as the seed prints it: ``name`` (the guardrail's id), ``status``
    (pass, warn or block) and ``message`` (null when it passed); we add ``guardrailId``, the
    human-readable ``title`` and ``suggestion``."""
    held = status == "pass"
    return {"name": item["guardrailId"], "status": status,
            "message": None if held else item["message"],
            "guardrailId": item["guardrailId"], "title": item["name"],
            "suggestion": None if held else item["suggestion"]}


def _block_reason(item: dict[str, Any]) -> dict[str, Any]:
    return {"guardrail": item["guardrailId"], "message": item["message"],
            "suggestion": item["suggestion"]}


def _decide(project_dir: str, agent: str, action: dict[str, Any], opts: dict[str, Any],
            store: DecisionStore, compiled: dict[str, Any]) -> dict[str, Any]:
    settings = compiled["settings"]
    state = current_state(project_dir)
    mode = "closed" if settings.get("fail_mode") == "closed" else "open"
    verdict = check_guardrails({**action, **state, "agent_id": agent}, project_dir, agent,
                               compiled=compiled)
    text = " ".join([action["description"], *action["tags"]])
    ranking = ranking_mode(settings)
    category = action["category"]
    calibrating = store.beside(lambda: store.calibration_sums(agent, category))
    blocking = verdict["violations"] + (verdict["warnings"] if mode == "closed" else [])
    allowed = not blocking   # a blocking guardrail blocks in both modes, a warning when closed
    limit = max(opts["query_limit"], PATTERN_CANDIDATES if opts["include_patterns"] else 0, 10)
    recorded: dict[str, Any] | None = None
    quality: dict[str, Any] = {}
    if allowed and opts["auto_record"] and action["tags"] and action["pattern"]:
        # nothing to derive from the candidates: recorded while they are found
        from governance.decisions.quality import complete

        filled, quality = complete(action, settings, store, [])
        candidates, recorded = store.query_beside(   # past query_limit, a pattern count only
            text, lambda: store.record(filled, agent, state), limit=limit, ranking=ranking,
            whole=opts["query_limit"])
    else:
        candidates = store.query(text, limit=limit, ranking=ranking)
    calibration = calibrate_sums(calibrating.result().get(category, {}), category)
    results = [_result(item, item["severity"])
               for item in verdict["violations"] + verdict["warnings"]]
    results += [_result({**item, "message": None, "suggestion": None}, "pass")
                for item in verdict["passed"]]
    counts = pattern_counts(candidates)
    response: dict[str, Any] = {
        "allowed": allowed,
        "decision_id": None,
        "relevant_decisions": [
            {"id": item["id"], "decision": item["description"],
             "outcome": item["outcome"] or "unreviewed",
             "date": (item["created_at"] or "")[:10], "pattern": item["pattern"],
             "confidence": item["confidence"], "similarity": item["similarity"],
             "recorded_at": item["created_at"]}
            for item in candidates[:opts["query_limit"]]],
        "guardrail_results": results,
        "calibration_context": {
            "category_accuracy": calibration["accuracy"],
            "category_brier": calibration["brier"],
            "confidence_tendency": calibration["tendency"],
            "suggestion": calibration["suggestion"],
            "category": action["category"], "sample_size": calibration["sample_size"]},
        "block_reasons": [_block_reason(item) for item in blocking],
        "violations": verdict["violations"],
        "warnings": [item["message"] for item in verdict["warnings"]],
        "evaluated": verdict["evaluated"],
        "evaluatedAt": verdict["evaluatedAt"],
        "fail_mode": mode,
        # what decided: the guardrails themselves (a block, or all held), or the deployment's
        # fail mode (a warning that it let through, or blocked)
        "decided_by": "fail_mode" if verdict["warnings"] and not verdict["violations"]
                      else "guardrails",
    }
    if opts["include_patterns"]:
        response["patterns_summary"] = patterns_summary(counts)
        response["patterns"] = counts
    if allowed and opts["auto_record"]:
        if recorded is None:
            from governance.decisions.quality import complete

            filled, quality = complete(action, settings, store, candidates)
            recorded = store.record(filled, agent, state)
        response["decision_id"] = recorded["id"]
        response["quality"] = quality
        if ranking == "hybrid":
            from governance.decisions.ranking import embed_decision

            embed_decision(store, response["decision_id"])
    return response
