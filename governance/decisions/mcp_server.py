"""The decision tools as an MCP server (stdio), built on the official ``mcp`` Python SDK.

Run as ``python -m governance.decisions.mcp_server --project DIR`` (``governance install --mcp`` writes that
command into the project's ``.mcp.json``). The project is ``--project``, else
``CLAUDE_PROJECT_DIR``, else found from the current folder; the agent id is the tool argument
``agent_id``, else ``GOVERNANCE_AGENT_ID``, else ``claude``.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from governance.decisions import fields
from governance.decisions.calibration import report_from_sums
from governance.decisions.guardrail_schema import SERVER_NAME
from governance.decisions.guardrails import check_guardrails as run_guardrails
from governance.decisions.guardrails import load_compiled
from governance.decisions.pre_action import current_state, ranking_mode
from governance.decisions.pre_action import pre_action as run_pre_action
from governance.decisions.quality import complete
from governance.decisions.store import DecisionStore
from governance.errors import GovernanceError
from governance.project import find_project

Category = Literal["architecture", "process", "integration", "tooling", "security"]
Stakes = Literal["low", "medium", "high", "critical"]
Outcome = Literal["success", "partial", "failure", "abandoned"]
Confidence = Annotated[float, Field(ge=0.0, le=1.0, description="0..1: how sure you are")]
Reasons = Annotated[list[dict[str, str] | str] | None,
                    Field(description="why: [{type, text}], type e.g. analysis, precedent, "
                                      "constraint, user-request")]
Tags = Annotated[list[str] | None, Field(description="topics, e.g. ['database', 'migration']")]
Pattern = Annotated[str | None, Field(description="the reusable approach, e.g. 'expand-contract "
                                                  "migration'")]
Context = Annotated[dict[str, Any] | None,
                    Field(description="facts guardrails read, e.g. {environment: production, "
                                      "review_completed: true, rollout: canary}")]
AgentId = Annotated[str | None, Field(description="your agent id (default: the server's)")]

INSTRUCTIONS = (
    "Decision memory and guardrails for this project. Before any significant choice (architecture, "
    "process, integration, tooling or security), call pre_action once: it checks the guardrails, "
    "returns relevant past decisions with their outcomes, your calibration and confirmed patterns, "
    "and records the decision. If it returns allowed=false, do not proceed; follow block_reasons. "
    "Later, call review_decision with the outcome so calibration improves. Before changing "
    "files, call select_active_intent with the intent you work under.")


class ServerConfig:
    """Where the server works: the project and the default agent id."""

    project_dir: str = ""
    agent_id: str = "claude"


def _agent(agent_id: str | None) -> str:
    return agent_id or ServerConfig.agent_id


def _guarded(call: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return call(*args, **kwargs)
    except GovernanceError as exc:
        raise ToolError(exc.render()) from None


def _action(description: str, category: str, stakes: str, confidence: float,
            reasons: Any, tags: Any, pattern: Any, context: Any) -> dict[str, Any]:
    return {"description": description, "category": category, "stakes": stakes,
            "confidence": confidence, "reasons": reasons or [], "tags": tags or [],
            "pattern": pattern or "", "context": context or {}}


server: MCPServer = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS)


class Reason(BaseModel):
    """One reason, as the seed's ``reasons[{type, text}]``."""

    type: Annotated[str, Field(description="e.g. analysis, precedent, constraint, "
                                           "user-request")] = "other"
    text: str


PRE_ACTION_DESCRIPTION = (
    "Check if an action is safe and informed before executing. Returns relevant past decisions, "
    "guardrail results, calibration context, and optionally records the decision. Call this "
    "BEFORE making any significant choice. allowed=false means stop and follow block_reasons; "
    "auto_record=false makes it a pure query, safe to retry.")


@server.tool(description=PRE_ACTION_DESCRIPTION)
def pre_action(description: Annotated[str, Field(description="What you plan to do")],
               category: Category, stakes: Stakes,
               confidence: Annotated[float, Field(ge=0.0, le=1.0)],
               reasons: Annotated[list[Reason], Field(default_factory=list)],
               tags: Annotated[list[str], Field(default_factory=list)],
               context: Annotated[dict[str, Any], Field(
                   default_factory=dict,
                   description="facts guardrails read, e.g. {environment: production, "
                               "review_completed: true, rollout: canary}")],
               pattern: Annotated[str, Field(
                   description="Abstract pattern this decision represents")] = "",
               auto_record: bool = True,
               query_limit: Annotated[int, Field(ge=0, le=50)] = 5,
               include_patterns: bool = True,
               agent_id: Annotated[str, Field(
                   max_length=200, description="the agent you are (default: the server's "
                                               "--agent)")] = "") -> dict[str, Any]:
    """The seed's ``pre_action`` tool: its input schema (required description, category, stakes
    and confidence; ``reasons[{type, text}]``; ``auto_record`` default true) and the answer of
    ``cstp.preAction``."""
    action = _action(description, category, stakes, confidence,
                     [r.model_dump() for r in reasons], tags, pattern, context)
    agent = _agent(agent_id or None)
    result: dict[str, Any] = _guarded(run_pre_action, ServerConfig.project_dir, agent, action,
                                      {"auto_record": auto_record, "query_limit": query_limit,
                                       "include_patterns": include_patterns})
    return {**result, "agent": _responder(), "requesting_agent": agent}


def _responder() -> str:
    """The responding agent's id: ``settings.agent_name`` in guardrails.yaml, else the server's
    name."""
    try:
        return str(load_compiled(ServerConfig.project_dir)["settings"].get("agent_name")
                   or SERVER_NAME)
    except GovernanceError:
        return SERVER_NAME


@server.tool(description=(
    "Check an action against the guardrails only (no memory, nothing recorded). Returns allowed, "
    "violations (blocking) and warnings with messages and suggestions. Before a significant "
    "choice call pre_action instead: it includes this check."))
def check_guardrails(category: Category, stakes: Stakes, confidence: Confidence,
                     description: str = "", context: Context = None, tags: Tags = None,
                     agent_id: AgentId = None) -> dict[str, Any]:
    action = {"description": description, "category": category, "stakes": stakes,
              "confidence": confidence, "context": context or {}, "tags": tags or [],
              **current_state(ServerConfig.project_dir)}
    result: dict[str, Any] = _guarded(run_guardrails, action, ServerConfig.project_dir,
                                      _agent(agent_id))
    return result


def _with_store(work: Any) -> Any:
    store = DecisionStore.for_project(ServerConfig.project_dir)
    try:
        return _guarded(work, store)
    finally:
        store.close()


@server.tool(description=(
    "Record a decision directly, without the guardrail check (prefer pre_action). Tags and a "
    "pattern you leave out are derived (the answer's quality says what), unless the project "
    "requires them."))
def record_decision(description: str, category: Category, stakes: Stakes,
                    confidence: Confidence, reasons: Reasons = None, tags: Tags = None,
                    pattern: Pattern = None, context: Context = None,
                    agent_id: AgentId = None) -> dict[str, Any]:
    settings = _guarded(load_compiled, ServerConfig.project_dir)["settings"]
    action = _guarded(fields.action, _action(description, category, stakes, confidence,
                                             reasons, tags, pattern, context),
                      require_tags=False, require_pattern=False)
    agent = _agent(agent_id)

    def record(store: DecisionStore) -> dict[str, Any]:
        filled, quality = complete(action, settings, store, key=None)
        return {**store.record(filled, agent, current_state(ServerConfig.project_dir)),
                "quality": quality}

    result: dict[str, Any] = _with_store(record)
    return result


@server.tool(description="Record the outcome of an earlier decision: success, partial, failure "
                         "or abandoned, with a note on what happened. Feeds calibration.")
def review_decision(decision_id: str, outcome: Outcome, note: str = "") -> dict[str, Any]:
    result: dict[str, Any] = _with_store(lambda store: store.review(decision_id, outcome, note))
    return result


@server.tool(description=(
    "Search past decisions by text (BM25, similarity 0..1) and filters; without text, newest "
    "first. since/until: 2026-05-01, 2026-05-01T12:00:00Z or an age like 7d."))
def query_decisions(text: str = "", category: Category | None = None, tags: Tags = None,
                    outcome: Outcome | Literal["unreviewed"] | None = None,
                    since: str | None = None, until: str | None = None,
                    limit: Annotated[int, Field(ge=1, le=100)] = 10,
                    agent_id: AgentId = None,
                    ranking: Literal["keyword", "hybrid"] | None = None) -> dict[str, Any]:
    mode = ranking or ranking_mode(_guarded(load_compiled, ServerConfig.project_dir)["settings"])
    start = _guarded(fields.moment, since, "since")
    end = _guarded(fields.moment, until, "until")
    found = _with_store(lambda store: store.query(
        text or None, ranking=mode, category=category, tags=tags or (), outcome=outcome,
        agent_id=agent_id, since=start, until=end, limit=limit))
    return {"decisions": found, "count": len(found)}


@server.tool(description="Calibration from reviewed decisions: accuracy, Brier score, tendency "
                         "(overconfident/underconfident/well_calibrated) and a suggestion, "
                         "overall and per category.")
def get_calibration(agent_id: AgentId = None, category: Category | None = None
                    ) -> dict[str, Any]:
    agent = _agent(agent_id)
    report: dict[str, Any] = _with_store(
        lambda store: report_from_sums(store.calibration_sums(agent, category), category))
    report["agent_id"] = agent
    return report


@server.tool(description=(
    "Select the intent you are working under (an id from .orchestration/active_intents.yaml, "
    "e.g. WORK-064) for this session. Returns its owned scope, constraints and acceptance "
    "criteria: stay inside the scope; when the project requires an intent, changes outside it "
    "are denied. Selecting is yours; declaring or editing intents is the user's."))
def select_active_intent(intent_id: str) -> dict[str, Any]:
    from governance.intent.spec import load

    intents = _guarded(load, ServerConfig.project_dir)
    active = [i for i in intents if i.status == "active"]
    chosen = next((i for i in active if i.id == intent_id), None)
    if chosen is None:
        offered = ", ".join(f"{i.id} ({i.title})" for i in active) or "none is declared"
        raise ToolError(f"{intent_id!r} is not an active intent. Active intents: {offered}.")
    return {**chosen.as_json(), "selected": True,
            "note": "Selected for this session once this call completes. Work inside "
                    "owned_scope; the constraints and acceptance criteria apply."}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="governance-mcp", description=__doc__)
    parser.add_argument("--project", help="project folder")
    parser.add_argument("--agent", help="default agent id")
    args = parser.parse_args(argv)
    project = args.project or os.environ.get("CLAUDE_PROJECT_DIR") or find_project(os.getcwd())
    ServerConfig.project_dir = os.path.realpath(project)
    ServerConfig.agent_id = args.agent or os.environ.get("GOVERNANCE_AGENT_ID") or "claude"
    server.run("stdio")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
