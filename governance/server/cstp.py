"""The CSTP methods: guardrails, decision memory and calibration for agents that ask over the
network, on the same functions as the CLI and the MCP server.

Params are validated with pydantic models (:data:`PARAMS`, also the OpenAPI description's
schemas); a bad one is -32602 naming the field. The requests the CSTP documents print are
accepted as printed (``agent_id`` at the top of ``cstp.preAction``'s params, ``agent{id, url}``).

Identity: the agent a caller *declares* (``agent_id``, ``agent.id``) is recorded as declared. The
*credential* (the bearer token's identity; the peer address when there is no token) is what the
rate limit keys on, never the declared id. Every call, answered or refused, is audited in the
ledger with both, the action, whether it was allowed, the violations and how many guardrails were
evaluated; every guardrail check is also written in the seed's audit format
(``event: guardrail_check``).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from governance.decisions import fields
from governance.decisions.calibration import report_from_sums
from governance.decisions.fields import DecisionInputError
from governance.decisions.guardrail_schema import SERVER_NAME
from governance.decisions.guardrails import check_guardrails, load_compiled, timestamp
from governance.decisions.pre_action import current_state, pre_action, ranking_mode
from governance.decisions.quality import complete
from governance.decisions.store import DecisionStore, db_path
from governance.decisions.writer import BatchWriter, identity
from governance.errors import ConfigError, GovernanceError, StorageError
from governance.ledger import chain
from governance.project import governance_dir
from governance.server.identity import Caller
from governance.server.protocol import (
    FORBIDDEN,
    GUARDRAIL_EVAL_FAILED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    RATE_LIMITED,
    Call,
    RpcError,
)
from governance.server.ratelimit import RateLimiter
from governance.storage.database import PROJECT_ID, database_url
from governance.storage.engine import Engine

Category = Literal["architecture", "process", "integration", "tooling", "security"]
Stakes = Literal["low", "medium", "high", "critical"]
Outcome = Literal["success", "partial", "failure", "abandoned"]
Text = Annotated[str, Field(min_length=1, max_length=fields.MAX_TEXT)]
Confidence = Annotated[float, Field(ge=0.0, le=1.0)]
PROJECT_PATTERN = f"^{PROJECT_ID.pattern}$"
KEPT_STORES = 512   # a worker thread's stores kept open, one per project (and reach) it served


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MethodParams(Params):
    """The params of a CSTP method."""

    # The project the call acts in, on a server that serves many (``--database``); the
    # ``X-Governance-Project`` header says the same for every call of a body.
    project: Annotated[str, Field(pattern=PROJECT_PATTERN)] | None = None


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


class CheckGuardrails(MethodParams):
    action: Action
    agent: Agent | None = None


AgentId = Annotated[str, Field(min_length=1, max_length=200,
                                description="the agent the caller declares itself to be "
                                            "(recorded as declared)")]


class PreAction(MethodParams):
    agent_id: AgentId | None = None
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


class QueryDecisions(MethodParams):
    query: Annotated[str, Field(max_length=fields.MAX_TEXT)] = ""
    filters: Filters | None = None
    limit: Annotated[int, Field(ge=1, le=100)] = 10
    ranking: Literal["keyword", "hybrid"] | None = None
    agent: Agent | None = None


class RecordDecision(MethodParams):
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


class ReviewDecision(MethodParams):
    id: Annotated[str, Field(min_length=1, max_length=200)]
    outcome: Outcome
    note: Annotated[str, Field(max_length=fields.MAX_TEXT)] = ""
    agent: Agent | None = None


class GetCalibration(MethodParams):
    category: Category | None = None
    agent: Agent | None = None


class GetSessionContext(MethodParams):
    recent: Annotated[int, Field(ge=0, le=50)] = 10
    agent: Agent | None = None


class Result(BaseModel):
    """An answer's model (the OpenAPI description's result schemas; a test validates real answers
    against them, so a field added to an answer without its model fails)."""

    model_config = ConfigDict(extra="forbid")


class Verdict(Result):
    guardrailId: str
    name: str = Field(description="human-readable")
    message: str
    severity: Literal["block", "warn"]
    suggestion: str


class CheckGuardrailsResult(Result):
    allowed: bool
    violations: list[Verdict]
    warnings: list[Verdict] = Field(description="never block")
    evaluated: int
    evaluatedAt: str = Field(description="ISO 8601, UTC")
    agent: str = Field(description="the responding agent (settings.agent_name)")
    requesting_agent: str = Field(description="added: the agent the caller declared, else its "
                                              "credential")


class RelevantDecision(Result):
    id: str
    decision: str
    outcome: str = Field(description="success, partial, failure, abandoned or unreviewed")
    date: str = Field(description="YYYY-MM-DD")
    pattern: str
    confidence: float
    similarity: float
    recorded_at: str | None = Field(description="added: the full ISO 8601 time")


class GuardrailResult(Result):
    name: str = Field(description="the guardrail's id, as printed")
    status: Literal["pass", "warn", "block"]
    message: str | None = Field(description="null when it passed")
    guardrailId: str = Field(description="added")
    title: str = Field(description="added: human-readable name")
    suggestion: str | None = Field(description="added")


class CalibrationContext(Result):
    category_accuracy: float | None
    category_brier: float | None
    confidence_tendency: str
    suggestion: str
    category: str = Field(description="added")
    sample_size: int = Field(description="added")


class BlockReason(Result):
    guardrail: str
    message: str
    suggestion: str


class PatternCount(Result):
    pattern: str
    decisions: int
    confirmed: int
    failed: int


class Quality(Result):
    rule: Literal["derive", "strict"]
    derived: dict[str, Any] = Field(description="the fields filled in: tags, pattern")
    pattern_from: str | None = Field(description="the confirmed decision the pattern came from")
    missing: list[str]
    hint: str | None


class PreActionResult(Result):
    allowed: bool
    decision_id: str | None = Field(description="null when nothing was recorded")
    relevant_decisions: list[RelevantDecision]
    guardrail_results: list[GuardrailResult]
    calibration_context: CalibrationContext | None = Field(
        description="null only after an internal error")
    patterns_summary: list[str] | None = Field(
        default=None, description="'<pattern> (N confirmations)'; absent when include_patterns "
                                  "is false")
    block_reasons: list[BlockReason] = Field(description="empty when allowed")
    violations: list[Verdict] = Field(description="added: as cstp.checkGuardrails")
    warnings: list[str] = Field(description="added: the warnings' messages")
    evaluated: int = Field(description="added")
    evaluatedAt: str = Field(description="added: ISO 8601, UTC")
    fail_mode: Literal["open", "closed"] = Field(description="added: the deployment's mode")
    decided_by: Literal["guardrails", "fail_mode"] = Field(
        description="added: whether a guardrail decided, or the fail mode (a warning or an "
                    "internal error)")
    patterns: list[PatternCount] | None = Field(default=None, description="added")
    quality: Quality | None = Field(default=None, description="added: when recorded")
    internal_error: str | None = Field(default=None, description="added: when governance "
                                                                  "could not evaluate")
    agent: str = Field(description="added: the responding agent")
    requesting_agent: str = Field(description="added: the declared agent, else the credential")


RESULTS: dict[str, type[Result]] = {
    "cstp.checkGuardrails": CheckGuardrailsResult,
    "cstp.preAction": PreActionResult,
}


PARAMS: dict[str, type[MethodParams]] = {
    "cstp.preAction": PreAction,
    "cstp.checkGuardrails": CheckGuardrails,
    "cstp.queryDecisions": QueryDecisions,
    "cstp.recordDecision": RecordDecision,
    "cstp.reviewDecision": ReviewDecision,
    "cstp.getCalibration": GetCalibration,
    "cstp.getSessionContext": GetSessionContext,
}


@dataclass(frozen=True)
class Identity:
    """Who calls: the agent it declares (None when it declares none) and its credential (the
    bearer token's identity, or the peer address when there is no token)."""

    declared: str | None
    credential: str
    authenticated: str | None = None   # a minted token's agent: it outranks the declared one
    team: bool = False                 # a team-wide token: queries see every project
    project: str | None = None         # the project id the call acts in; None: the served one
    named: bool = False                # the call named its project (params or header)

    @property
    def agent(self) -> str:
        """The agent to record: the token's agent, else the declared one, else the credential."""
        return self.authenticated or self.declared or self.credential


def credential_key(token: str | None, peer: Any = None) -> str:
    """What the rate limit keys on: ``bearer:<sha256 prefix>`` for a bearer token (one key for the
    single-token server), else ``peer:<address>`` (``peer:unix`` on a unix socket)."""
    if token:
        return "bearer:" + hashlib.sha256(token.encode()).hexdigest()[:12]
    if isinstance(peer, list | tuple) and peer and peer[0]:
        return f"peer:{peer[0]}"
    return "peer:unix"


def declared_agent(params: dict[str, Any]) -> str | None:
    """The agent the params declare: ``agent_id`` (preAction), else ``agent.id``."""
    for value in (params.get("agent_id"), (params.get("agent") or {}).get("id")
                  if isinstance(params.get("agent"), dict) else None):
        if isinstance(value, str) and value.strip():
            return value.strip()[:200]
    return None


def _invalid(exc: ValidationError) -> RpcError:
    problems = [{"field": ".".join(str(p) for p in item["loc"]) or "params",
                 "message": item["msg"]} for item in exc.errors()[:20]]
    first = problems[0] if problems else {"field": "params", "message": "invalid"}
    return RpcError(INVALID_PARAMS, f"{first['field']}: {first['message']}", problems)


def _action(action: Action) -> dict[str, Any]:
    raw = action.model_dump(exclude_none=True)
    raw["reasons"] = [r.model_dump() if isinstance(r, Reason) else r for r in action.reasons]
    return raw


class _Held(DecisionStore):
    """A worker thread's store, kept between calls (opening one costs more than a small
    query): the methods' ``close`` leaves it open. On SQLite it reads through its own connection
    and records through the server's one :class:`BatchWriter`, which commits the decisions of
    concurrent calls together and answers each once its batch is on disk; on PostgreSQL
    (``writer`` None) each decision is its own transaction on the process's pool, answered once
    committed."""

    def __init__(self, path: str | None, writer: BatchWriter | None, *,
                 engine: Engine | None = None, stamp_dir: str | None = None) -> None:
        super().__init__(path, engine=engine, stamp_dir=stamp_dir)
        self.writer = writer

    def record(self, action: dict[str, Any], agent_id: str, state: dict[str, Any] | None = None,
               now: float | None = None) -> dict[str, Any]:
        if self.writer is None:
            return super().record(action, agent_id, state, now)
        found = self.get(self.writer.record(action, agent_id, state, now))
        assert found is not None
        return found

    def close(self) -> None:
        return None

    def shut(self) -> None:
        self.engine.close()


class Service:
    """The CSTP methods of one project, with its rate limit and its audit. Calls may run on
    several worker threads at once: each keeps its own connection to the decision store (SQLite
    in WAL mode: readers run in parallel, and a writer does not stop them); their decisions are
    written by one :class:`BatchWriter`. With ``GOVERNANCE_DATABASE_URL`` (``governance serve
    --database``) the store is the project's rows in that PostgreSQL database, on one pool of
    connections per process."""

    def __init__(self, project: str, limiter: RateLimiter) -> None:
        self.project = project
        self.limiter = limiter
        self._local = threading.local()
        self.database = database_url()
        self.writer = None if self.database else BatchWriter(db_path(project))
        self._served_id: str | None = None
        self.methods: dict[str, Callable[[Any, Identity], dict[str, Any]]] = {
            "cstp.preAction": self.pre_action,
            "cstp.checkGuardrails": self.check_guardrails,
            "cstp.queryDecisions": self.query_decisions,
            "cstp.recordDecision": self.record_decision,
            "cstp.reviewDecision": self.review_decision,
            "cstp.getCalibration": self.get_calibration,
            "cstp.getSessionContext": self.get_session_context,
        }

    def served_id(self) -> str:
        """The id of the served project's rows (``GOVERNANCE_PROJECT_ID``, else its folder)."""
        if self._served_id is None:
            from governance.storage.database import project_id

            self._served_id = project_id(self.project)
        return self._served_id

    def _acting(self, named: str | None, caller: Caller) -> str | None:
        """The project a call acts in: a scoped token's own project (naming another is
        forbidden), else the one the call names (``params.project`` or the
        ``X-Governance-Project`` header), else None: the served project. Only a server on a team
        database (``--database``) acts in projects other than its own."""
        if named is not None and caller.named is not None and named != caller.named:
            raise RpcError(INVALID_PARAMS, f"params.project is {named!r} but the "
                                           f"X-Governance-Project header is {caller.named!r}; "
                                           "name one project")
        named = named or caller.named
        if caller.project is not None:
            if named is not None and named != caller.project:
                raise RpcError(FORBIDDEN, f"the token of {caller.agent or caller.key} acts in "
                                          f"project {caller.project}, not {named}")
            named = caller.project
        if named is None or named == self.served_id():
            return None
        if not self.database:
            raise RpcError(INVALID_PARAMS, f"project {named!r}: this server keeps the decisions "
                                           f"of one project, {self.served_id()}, in its SQLite "
                                           "file; a server for many projects is started with "
                                           "--database postgresql://... (docs/team.md)",
                           [{"field": "project", "message": "not served here"}])
        return named

    def close(self) -> None:
        """Write the decisions still queued and stop the writer (the worker threads are done)."""
        if self.writer is not None:
            self.writer.close()

    def name(self, compiled: dict[str, Any] | None = None) -> str:
        """The responding agent's id: ``settings.agent_name`` in guardrails.yaml (``compiled``,
        when the call loaded them already), else the server's name."""
        try:
            found = compiled or load_compiled(self.project)
            return str(found["settings"].get("agent_name") or SERVER_NAME)
        except GovernanceError:
            return SERVER_NAME

    # -- the call ------------------------------------------------------------------------------
    def run(self, call: Call, credential: str | Caller) -> dict[str, Any]:
        """Answer one call (raises :class:`RpcError`); audit it either way. The rate limit keys
        on the authenticated caller (a bare string: the project token's key, an admin); the
        declared agent is recorded as declared."""
        caller = credential if isinstance(credential, Caller) else Caller(credential)
        declared = declared_agent(call.params)
        if caller.agent is not None and declared == caller.agent:
            declared = None
        who = Identity(declared, caller.key, caller.agent, caller.team)
        audit: dict[str, Any] = {"event": "CSTP", "method": call.method[:100], "agent": who.agent,
                                 "declared_agent": who.declared, "credential": who.credential,
                                 "rpc_id": str(call.id)[:100] if call.id is not None else None}
        started = time.perf_counter()
        try:
            if not caller.may(call.method):
                raise RpcError(FORBIDDEN, f"the token of {caller.agent or caller.key} has the role "
                                          f"{caller.role!r}, which may not call {call.method!r}; "
                                          "ask an admin for a token with a role that may")
            wait = self.limiter.take(who.credential)
            if wait:
                raise RpcError(RATE_LIMITED, f"too many calls with this credential; retry in "
                                             f"{wait:.2f} s", {"retryAfter": round(wait, 3)})
            method = self.methods.get(call.method)
            if method is None:
                raise RpcError(METHOD_NOT_FOUND, f"no method {call.method!r}; CSTP methods: "
                                                 + ", ".join(self.methods))
            try:
                params = PARAMS[call.method].model_validate(call.params)
            except ValidationError as exc:
                raise _invalid(exc) from None
            who = replace(who, project=self._acting(params.project, caller),
                          named=(params.project or caller.named) is not None)
            if who.project is not None:
                audit["project"] = who.project
            action = getattr(params, "action", None)
            if isinstance(action, Action):
                audit["action"] = action.description[:300]
            result = method(params, who)
            if who.project is None and isinstance(result.get("project"), str):
                audit["project"] = result["project"]   # where a review found its decision
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
            field = exc.key or "params"
            raise RpcError(INVALID_PARAMS, f"{field}: {exc.message}"
                           + (f" Fix: {exc.fix}" if exc.fix else ""),
                           [{"field": field, "message": exc.message}]) from None
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
    def check_guardrails(self, params: CheckGuardrails, who: Identity) -> dict[str, Any]:
        action = {**_action(params.action), **current_state(self.project),
                  "agent_id": who.agent}
        action.setdefault("stakes", "medium")
        try:
            compiled = load_compiled(self.project)     # once for the check and the answer
            verdict = check_guardrails(action, self.project, who.agent, audit={
                "method": "cstp.checkGuardrails", "credential": who.credential},
                compiled=compiled)
        except ConfigError as exc:
            raise RpcError(GUARDRAIL_EVAL_FAILED, exc.render()) from None
        return {"allowed": verdict["allowed"], "violations": verdict["violations"],
                "warnings": verdict["warnings"], "evaluated": verdict["evaluated"],
                "evaluatedAt": verdict["evaluatedAt"], "agent": self.name(compiled),
                "requesting_agent": who.agent}

    def pre_action(self, params: PreAction, who: Identity) -> dict[str, Any]:
        options = params.options.model_dump() if params.options else None
        try:
            store: DecisionStore | None = self._store(who)
        except (sqlite3.Error, StorageError):   # pre_action opens it again, under the fail mode
            store = None
        try:   # once for the guardrails, the settings and the answer
            compiled: dict[str, Any] | None = load_compiled(self.project)
        except GovernanceError:   # pre_action says so, under the fail mode
            compiled = None
        result = pre_action(self.project, who.agent, _action(params.action), options,
                            store=store, compiled=compiled)
        return {**result, "agent": self.name(compiled), "requesting_agent": who.agent}

    def _store(self, who: Identity | None = None) -> DecisionStore:
        """This thread's store for the project the call acts in (on SQLite the served one,
        opened again when the database file was replaced). On PostgreSQL a team-wide token's
        store reads every project and records into the one the call acts in."""
        if self.database:
            kept: dict[tuple[str, bool], _Held] | None = getattr(self._local, "stores", None)
            if kept is None or len(kept) > KEPT_STORES:
                kept = self._local.stores = {}
            acting = who.project if who is not None else None
            key = (acting or self.served_id(), who is not None and who.team)
            store = kept.get(key)
            if store is None:
                opened = DecisionStore.for_project_id(
                    self.database, key[0], across=key[1],
                    stamp_dir=None if acting else governance_dir(self.project))
                store = kept[key] = _Held(None, None, engine=opened.engine,
                                          stamp_dir=opened.stamp_dir)
            return store
        assert self.writer is not None
        path = db_path(self.project)
        held: tuple[_Held, tuple[int, int] | None] | None = getattr(self._local, "store", None)
        if held is None or held[1] != identity(path):
            if held is not None:
                held[0].shut()
            store = _Held(path, self.writer)
            held = self._local.store = (store, identity(path))
        return held[0]

    def query_decisions(self, params: QueryDecisions, who: Identity) -> dict[str, Any]:
        started = time.perf_counter()
        wanted = params.filters or Filters()
        ranking = params.ranking or ranking_mode(load_compiled(self.project)["settings"])
        since = fields.moment(wanted.since, "filters.since")
        until = fields.moment(wanted.until, "filters.until")
        store = self._store(who)
        try:
            found = store.query(params.query or None, ranking=ranking, category=wanted.category,
                                tags=wanted.tags, outcome=wanted.outcome,
                                agent_id=wanted.agent, since=since, until=until,
                                limit=params.limit)
        finally:
            store.close()
        return {"decisions": found, "total": len(found), "query": params.query,
                "queryTimeMs": round((time.perf_counter() - started) * 1000, 3),
                "agent": who.agent}

    def record_decision(self, params: RecordDecision, who: Identity) -> dict[str, Any]:
        settings = load_compiled(self.project)["settings"]
        context = params.context
        raw = {"description": params.decision, "category": params.category,
               "stakes": params.stakes, "confidence": params.confidence,
               "reasons": [r.model_dump() if isinstance(r, Reason) else r
                           for r in params.reasons],
               "tags": params.tags, "pattern": params.pattern or "",
               "context": {"note": context} if isinstance(context, str) else context or {}}
        clean = fields.action(raw, require_tags=False, require_pattern=False)
        store = self._store(who)
        try:
            filled, quality = complete(clean, settings, store, key=None)
            recorded = store.record(filled, who.agent, current_state(self.project))
        finally:
            store.close()
        return {"success": True, "id": recorded["id"], "decision": recorded,
                "quality": quality, "agent": who.agent}

    def review_decision(self, params: ReviewDecision, who: Identity) -> dict[str, Any]:
        """A review in the project the call acts in. A team-wide token that names no project
        reviews the decision where it is: the served project when it holds the id, else the one
        project that does (the answer's ``project``); when several do, the call must name one."""
        store = self._store(who)
        try:
            reviewed = store.review(params.id, params.outcome, params.note)
        except DecisionInputError as exc:
            if exc.key != "decision_id" or not (who.team and self.database and not who.named):
                raise
            holder = self._holder(params.id)
            if holder is None:
                raise
            store.close()
            who = replace(who, project=holder)
            store = self._store(who)
            reviewed = store.review(params.id, params.outcome, params.note)
        finally:
            store.close()
        answer = {"success": True, "id": params.id, "outcome": params.outcome,
                  "decision": reviewed, "agent": who.agent}
        if self.database:
            answer["project"] = who.project or self.served_id()
        return answer

    def _holder(self, decision_id: str) -> str | None:
        """The one project of the team that holds ``decision_id`` (None: none does); several
        are an error naming them."""
        from governance.storage.postgres import PostgresEngine

        assert self.database is not None
        found = PostgresEngine(self.database, None).holders(decision_id)
        if len(found) > 1:
            raise RpcError(INVALID_PARAMS, f"decision {decision_id!r} is in projects "
                                           f"{', '.join(found)}; name the one to review with "
                                           "params.project or the X-Governance-Project header",
                           [{"field": "project", "message": "several projects hold this id"}])
        return found[0] if found else None

    def get_calibration(self, params: GetCalibration, who: Identity) -> dict[str, Any]:
        """The agent's calibration where its token reads: its project, or every project for a
        team-wide token (on a team database), then with the named project's own figures beside
        them (``projectCalibration``)."""
        store = self._store(who)
        try:
            report = report_from_sums(store.calibration_sums(who.agent, params.category),
                                      params.category)
        finally:
            store.close()
        team = who.team and bool(self.database)
        answer = {**report, "agent": who.agent, "scope": "team" if team else "project"}
        if team and who.project is not None:
            own = self._store(replace(who, team=False))
            try:
                answer["projectCalibration"] = {
                    "project": who.project,
                    **report_from_sums(own.calibration_sums(who.agent, params.category),
                                       params.category)}
            finally:
                own.close()
        return answer

    def get_session_context(self, params: GetSessionContext, who: Identity) -> dict[str, Any]:
        """What an agent should know when it starts: the cycle state, its calibration, the
        recent decisions and the guardrails in force."""
        try:
            compiled = load_compiled(self.project)
        except ConfigError as exc:
            raise RpcError(GUARDRAIL_EVAL_FAILED, exc.render()) from None
        store = self._store(who)
        try:
            report = report_from_sums(store.calibration_sums(who.agent))
            recent = store.query(None, limit=params.recent) if params.recent else []
            total = store.count()
        finally:
            store.close()
        guardrails = [{"guardrailId": r["id"], "name": r["name"], "severity": r["severity"],
                       "message": r["message"], "suggestion": r["suggestion"],
                       "scope": {k: list(r[k]) for k in ("categories", "states", "primitives")
                                 if r[k]}}
                      for r in compiled["rules"]]
        return {"agent": who.agent, "project": who.project or os.path.basename(self.project),
                "state": current_state(self.project), "calibration": report,
                "recentDecisions": recent, "decisionCount": total,
                "activeGuardrails": guardrails, "evaluatedAt": timestamp()}
