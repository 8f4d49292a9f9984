"""The CSTP methods: guardrails, decision memory and calibration for agents that ask over the
network, on the same functions as the CLI and the MCP server.

Params are validated with pydantic models (:data:`PARAMS`, also the OpenAPI description's
schemas); a bad one is -32602 naming the field. Every call, answered or refused, is audited in the
ledger with the requesting agent, the action, whether it was allowed, the violations and how many
guardrails were evaluated.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from governance.decisions import fields
from governance.decisions.calibration import calibration_report
from governance.decisions.fields import DecisionInputError
from governance.decisions.guardrails import check_guardrails, load_compiled, timestamp
from governance.decisions.pre_action import current_state, pre_action, ranking_mode
from governance.decisions.store import DecisionStore
from governance.errors import ConfigError, GovernanceError
from governance.ledger import chain
from governance.project import governance_dir
from governance.server.protocol import (
    GUARDRAIL_EVAL_FAILED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    RATE_LIMITED,
    Call,
    RpcError,
)
from governance.server.ratelimit import RateLimiter

Category = Literal["architecture", "process", "integration", "tooling", "security"]
Stakes = Literal["low", "medium", "high", "critical"]
Outcome = Literal["success", "partial", "failure", "abandoned"]
Text = Annotated[str, Field(min_length=1, max_length=fields.MAX_TEXT)]
Confidence = Annotated[float, Field(ge=0.0, le=1.0)]


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Agent(BaseModel):
    """Who asks (the seed's ``agent``); without an id the caller's token identifies it."""

    model_config = ConfigDict(extra="ignore")
    id: Annotated[str, Field(min_length=1, max_length=200)] | None = None
    url: Annotated[str, Field(max_length=2000)] | None = None


class Reason(BaseModel):
    model_config = ConfigDict(extra="ignore")
    type: Annotated[str, Field(max_length=200)] = "other"
    text: Text


class Action(Params):
    """What the agent intends to do. ``description`` is required; a method that records the
    decision also needs category, stakes and confidence (and tags and a pattern when the
    guardrails' quality rules say so)."""

    description: Text
    category: Category | None = None
    stakes: Stakes | None = None
    confidence: Confidence | None = None
    context: dict[str, Any] = Field(default_factory=dict)
    reasons: list[Reason | Text] = Field(default_factory=list, max_length=50)
    tags: list[Annotated[str, Field(max_length=200)]] = Field(default_factory=list,
                                                               max_length=50)
    pattern: Annotated[str, Field(max_length=fields.MAX_TEXT)] | None = None


class Options(Params):
    query_limit: Annotated[int, Field(ge=0, le=50)] = 5
    auto_record: bool = True
    include_patterns: bool = True


class CheckGuardrails(Params):
    action: Action
    agent: Agent | None = None


class PreAction(Params):
    action: Action
    options: Options | None = None
    agent: Agent | None = None


class Filters(Params):
    category: Category | None = None
    tags: list[Annotated[str, Field(max_length=200)]] = Field(default_factory=list, max_length=50)
    outcome: Outcome | Literal["unreviewed"] | None = None
    since: Annotated[str, Field(max_length=40, description="2026-05-01, 2026-05-01T12:00:00Z "
                                                           "or an age like 7d")] | None = None
    until: Annotated[str, Field(max_length=40)] | None = None
    agent: Annotated[str, Field(max_length=200, description="only this agent's decisions")
                     ] | None = None


class QueryDecisions(Params):
    query: Annotated[str, Field(max_length=fields.MAX_TEXT)] = ""
    filters: Filters | None = None
    limit: Annotated[int, Field(ge=1, le=100)] = 10
    ranking: Literal["keyword", "hybrid"] | None = None
    agent: Agent | None = None


class RecordDecision(Params):
    """The seed's flat shape: ``decision`` is the text of the decision."""

    decision: Text
    category: Category
    stakes: Stakes
    confidence: Confidence
    reasons: list[Reason | Text] = Field(default_factory=list, max_length=50)
    tags: list[Annotated[str, Field(max_length=200)]] = Field(default_factory=list,
                                                               max_length=50)
    pattern: Annotated[str, Field(max_length=fields.MAX_TEXT)] | None = None
    context: dict[str, Any] | Annotated[str, Field(max_length=fields.MAX_TEXT)] | None = None
    agent: Agent | None = None


class ReviewDecision(Params):
    id: Annotated[str, Field(min_length=1, max_length=200)]
    outcome: Outcome
    note: Annotated[str, Field(max_length=fields.MAX_TEXT)] = ""
    agent: Agent | None = None


class GetCalibration(Params):
    category: Category | None = None
    agent: Agent | None = None


class GetSessionContext(Params):
    recent: Annotated[int, Field(ge=0, le=50)] = 10
    agent: Agent | None = None


PARAMS: dict[str, type[Params]] = {
    "cstp.preAction": PreAction,
    "cstp.checkGuardrails": CheckGuardrails,
    "cstp.queryDecisions": QueryDecisions,
    "cstp.recordDecision": RecordDecision,
    "cstp.reviewDecision": ReviewDecision,
    "cstp.getCalibration": GetCalibration,
    "cstp.getSessionContext": GetSessionContext,
}


def caller(call: Call, token: str) -> str:
    """The requesting agent: ``params.agent.id``, else a name derived from the bearer token."""
    agent = call.params.get("agent")
    if isinstance(agent, dict) and isinstance(agent.get("id"), str) and agent["id"].strip():
        return str(agent["id"]).strip()[:200]
    return "token:" + hashlib.sha256(token.encode()).hexdigest()[:12]


def _invalid(exc: ValidationError) -> RpcError:
    problems = [{"field": ".".join(str(p) for p in item["loc"]) or "params",
                 "message": item["msg"]} for item in exc.errors()[:20]]
    first = problems[0] if problems else {"field": "params", "message": "invalid"}
    return RpcError(INVALID_PARAMS, f"{first['field']}: {first['message']}", problems)


def _action(action: Action) -> dict[str, Any]:
    raw = action.model_dump(exclude_none=True)
    raw["reasons"] = [r.model_dump() if isinstance(r, Reason) else r for r in action.reasons]
    return raw


class Service:
    """The CSTP methods of one project, with its rate limit and its audit."""

    def __init__(self, project: str, limiter: RateLimiter) -> None:
        self.project = project
        self.limiter = limiter
        self.methods: dict[str, Callable[[Any, str], dict[str, Any]]] = {
            "cstp.preAction": self.pre_action,
            "cstp.checkGuardrails": self.check_guardrails,
            "cstp.queryDecisions": self.query_decisions,
            "cstp.recordDecision": self.record_decision,
            "cstp.reviewDecision": self.review_decision,
            "cstp.getCalibration": self.get_calibration,
            "cstp.getSessionContext": self.get_session_context,
        }

    # -- the call ------------------------------------------------------------------------------
    def run(self, call: Call, agent: str) -> dict[str, Any]:
        """Answer one call (raises :class:`RpcError`); audit it either way."""
        audit: dict[str, Any] = {"event": "CSTP", "method": call.method[:100], "agent": agent,
                                 "rpc_id": str(call.id)[:100] if call.id is not None else None}
        started = time.perf_counter()
        try:
            wait = self.limiter.take(agent)
            if wait:
                raise RpcError(RATE_LIMITED, f"too many calls from agent {agent!r}; retry in "
                                             f"{wait:.2f} s", {"retryAfter": round(wait, 3)})
            method = self.methods.get(call.method)
            if method is None:
                raise RpcError(METHOD_NOT_FOUND, f"no method {call.method!r}; CSTP methods: "
                                                 + ", ".join(self.methods))
            try:
                params = PARAMS[call.method].model_validate(call.params)
            except ValidationError as exc:
                raise _invalid(exc) from None
            action = getattr(params, "action", None)
            if isinstance(action, Action):
                audit["action"] = action.description[:300]
            result = method(params, agent)
            for key in ("allowed", "evaluated"):
                if key in result:
                    audit[key] = result[key]
            if "violations" in result:
                audit["violations"] = [v.get("guardrailId") for v in result["violations"]]
            return result
        except RpcError as exc:
            audit["error"] = exc.code
            raise
        except DecisionInputError as exc:
            audit["error"] = INVALID_PARAMS
            raise RpcError(INVALID_PARAMS, exc.render()) from None
        except GovernanceError as exc:
            audit["error"] = INTERNAL_ERROR
            raise RpcError(INTERNAL_ERROR, exc.render()) from None
        except Exception:
            audit["error"] = INTERNAL_ERROR
            raise
        finally:
            audit["duration_ms"] = round((time.perf_counter() - started) * 1000, 3)
            try:
                chain.append(governance_dir(self.project), audit)
            except GovernanceError:
                pass   # the answer stands; errors.log has the ledger's own complaint

    # -- methods -------------------------------------------------------------------------------
    def check_guardrails(self, params: CheckGuardrails, agent: str) -> dict[str, Any]:
        action = {**_action(params.action), **current_state(self.project), "agent_id": agent}
        action.setdefault("stakes", "medium")
        try:
            verdict = check_guardrails(action, self.project, agent, ledger=False)
        except ConfigError as exc:
            raise RpcError(GUARDRAIL_EVAL_FAILED, exc.render()) from None
        return {"allowed": verdict["allowed"], "violations": verdict["violations"],
                "warnings": verdict["warnings"], "evaluated": verdict["evaluated"],
                "evaluatedAt": verdict["evaluatedAt"], "agent": agent}

    def pre_action(self, params: PreAction, agent: str) -> dict[str, Any]:
        options = params.options.model_dump() if params.options else None
        result = pre_action(self.project, agent, _action(params.action), options)
        if result.get("internal_error") and not result["allowed"]:
            raise RpcError(GUARDRAIL_EVAL_FAILED, result["internal_error"],
                           {"block_reasons": result.get("block_reasons", [])})
        violations = [{"guardrailId": r["guardrailId"], "name": r["name"],
                       "message": r["message"], "severity": r["status"],
                       "suggestion": r["suggestion"]}
                      for r in result.get("guardrail_results", []) if r["status"] == "block"]
        return {**result, "violations": violations,
                "evaluated": len(result.get("guardrail_results", [])), "agent": agent}

    def _store(self) -> DecisionStore:
        return DecisionStore.for_project(self.project)

    def query_decisions(self, params: QueryDecisions, agent: str) -> dict[str, Any]:
        started = time.perf_counter()
        wanted = params.filters or Filters()
        ranking = params.ranking or ranking_mode(load_compiled(self.project)["settings"])
        since = fields.moment(wanted.since, "filters.since")
        until = fields.moment(wanted.until, "filters.until")
        store = self._store()
        try:
            found = store.query(params.query or None, ranking=ranking, category=wanted.category,
                                tags=wanted.tags, outcome=wanted.outcome,
                                agent_id=wanted.agent, since=since, until=until,
                                limit=params.limit)
        finally:
            store.close()
        return {"decisions": found, "total": len(found), "query": params.query,
                "queryTimeMs": round((time.perf_counter() - started) * 1000, 3),
                "agent": agent}

    def record_decision(self, params: RecordDecision, agent: str) -> dict[str, Any]:
        settings = load_compiled(self.project)["settings"]
        context = params.context
        raw = {"description": params.decision, "category": params.category,
               "stakes": params.stakes, "confidence": params.confidence,
               "reasons": [r.model_dump() if isinstance(r, Reason) else r
                           for r in params.reasons],
               "tags": params.tags, "pattern": params.pattern or "",
               "context": {"note": context} if isinstance(context, str) else context or {}}
        clean = fields.action(raw, require_tags=settings["require_tags"],
                              require_pattern=settings["require_pattern"])
        store = self._store()
        try:
            recorded = store.record(clean, agent, current_state(self.project))
        finally:
            store.close()
        return {"success": True, "id": recorded["id"], "decision": recorded, "agent": agent}

    def review_decision(self, params: ReviewDecision, agent: str) -> dict[str, Any]:
        store = self._store()
        try:
            reviewed = store.review(params.id, params.outcome, params.note)
        finally:
            store.close()
        return {"success": True, "id": params.id, "outcome": params.outcome,
                "decision": reviewed, "agent": agent}

    def get_calibration(self, params: GetCalibration, agent: str) -> dict[str, Any]:
        store = self._store()
        try:
            report = calibration_report(store.reviewed(agent, params.category), params.category)
        finally:
            store.close()
        return {**report, "agent": agent}

    def get_session_context(self, params: GetSessionContext, agent: str) -> dict[str, Any]:
        """What an agent should know when it starts: the cycle state, its calibration, the
        recent decisions and the guardrails in force."""
        try:
            compiled = load_compiled(self.project)
        except ConfigError as exc:
            raise RpcError(GUARDRAIL_EVAL_FAILED, exc.render()) from None
        store = self._store()
        try:
            report = calibration_report(store.reviewed(agent))
            recent = store.query(None, limit=params.recent) if params.recent else []
            total = store.count()
        finally:
            store.close()
        guardrails = [{"guardrailId": r["id"], "name": r["name"], "severity": r["severity"],
                       "message": r["message"], "suggestion": r["suggestion"],
                       "scope": {k: list(r[k]) for k in ("categories", "states", "primitives")
                                 if r[k]}}
                      for r in compiled["rules"]]
        return {"agent": agent, "project": os.path.basename(self.project),
                "state": current_state(self.project), "calibration": report,
                "recentDecisions": recent, "decisionCount": total,
                "activeGuardrails": guardrails, "evaluatedAt": timestamp()}
