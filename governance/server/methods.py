"""The CSTP methods of one served project: guardrail checks, preAction, and the decision memory
(query, record, review, calibration, session context), on the same functions as the CLI and the
MCP server. Each runs for an :class:`Identity` (who calls, and the project the call acts in) on
the stores of :mod:`governance.server.stores`; :mod:`governance.server.cstp` validates, limits
and audits the call first.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from governance.decisions import fields
from governance.decisions.calibration import report_from_sums
from governance.decisions.fields import DecisionInputError
from governance.decisions.guardrail_schema import SERVER_NAME
from governance.decisions.guardrails import check_guardrails, load_compiled, timestamp
from governance.decisions.pre_action import current_state, pre_action, ranking_mode
from governance.decisions.quality import complete
from governance.decisions.store import DecisionStore
from governance.errors import ConfigError, GovernanceError, StorageError
from governance.server.messages import (
    Action,
    CheckGuardrails,
    Filters,
    GetCalibration,
    GetSessionContext,
    PreAction,
    QueryDecisions,
    Reason,
    RecordDecision,
    ReviewDecision,
)
from governance.server.protocol import GUARDRAIL_EVAL_FAILED, INVALID_PARAMS, RpcError
from governance.server.stores import Stores


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


def _action(action: Action) -> dict[str, Any]:
    raw = action.model_dump(exclude_none=True)
    raw["reasons"] = [r.model_dump() if isinstance(r, Reason) else r for r in action.reasons]
    return raw


class Methods:
    """The methods of the served ``project``, on its ``stores``."""

    def __init__(self, project: str, stores: Stores) -> None:
        self.project = project
        self.stores = stores

    def table(self) -> dict[str, Callable[[Any, Identity], dict[str, Any]]]:
        """Each CSTP method's name and what answers it."""
        return {"cstp.preAction": self.pre_action,
                "cstp.checkGuardrails": self.check_guardrails,
                "cstp.queryDecisions": self.query_decisions,
                "cstp.recordDecision": self.record_decision,
                "cstp.reviewDecision": self.review_decision,
                "cstp.getCalibration": self.get_calibration,
                "cstp.getSessionContext": self.get_session_context}

    def name(self, compiled: dict[str, Any] | None = None) -> str:
        """The responding agent's id: ``settings.agent_name`` in guardrails.yaml (``compiled``,
        when the call loaded them already), else the server's name."""
        try:
            found = compiled or load_compiled(self.project)
            return str(found["settings"].get("agent_name") or SERVER_NAME)
        except GovernanceError:
            return SERVER_NAME

    def _store(self, who: Identity | None = None) -> DecisionStore:
        """This thread's store for the project the call acts in (:meth:`Stores.get`)."""
        return self.stores.get(who.project if who is not None else None,
                               who is not None and who.team)

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
            across_team = who.team and self.stores.database and not who.named
            if exc.key != "decision_id" or not across_team:
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
        if self.stores.database:
            answer["project"] = who.project or self.stores.served_id()
        return answer

    def _holder(self, decision_id: str) -> str | None:
        """The one project of the team that holds ``decision_id`` (None: none does); several
        are an error naming them."""
        from governance.storage.postgres import PostgresEngine

        assert self.stores.database is not None
        found = PostgresEngine(self.stores.database, None).holders(decision_id)
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
        team = who.team and bool(self.stores.database)
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
