"""The messages of the CSTP methods: each method's params and the answers the OpenAPI description
documents, as pydantic models. A bad param is -32602 naming the field (:mod:`governance.server.cstp`
validates with :data:`PARAMS`); the requests the CSTP documents print are accepted as printed
(``agent_id`` at the top of ``cstp.preAction``'s params, ``agent{id, url}``). A test validates real
answers against :data:`RESULTS`, so a field added to an answer without its model fails.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from governance.decisions import fields
from governance.storage.database import PROJECT_ID

Category = Literal["architecture", "process", "integration", "tooling", "security"]
Stakes = Literal["low", "medium", "high", "critical"]
Outcome = Literal["success", "partial", "failure", "abandoned"]
Text = Annotated[str, Field(min_length=1, max_length=fields.MAX_TEXT)]
Confidence = Annotated[float, Field(ge=0.0, le=1.0)]
PROJECT_PATTERN = f"^{PROJECT_ID.pattern}$"


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
