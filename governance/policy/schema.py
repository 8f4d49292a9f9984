"""The activity matrix's schema, as pydantic models.

Used by the CLI and whenever a matrix changes (never on the hook's hot path). The format is a
superset of the HAIOS project's matrix: ``version``, ``default_action``, ``rules``, ``phase_to_state``,
``skill_restrictions``; plus ``states``, ``settings``, ``tools``, ``protected_paths``,
``exec_config_paths``, ``secrets``, ``egress``, ``sandbox_network``, ``cycles``, ``shell`` and
``extends``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

Action = Literal["allow", "warn", "block", "redirect", "ask"]
ACTIONS: tuple[str, ...] = ("allow", "warn", "block", "redirect", "ask")
DEFAULT_STATES: tuple[str, ...] = ("EXPLORE", "DESIGN", "PLAN", "DO", "CHECK", "DONE")
ALL_STATES = "_all_states"
# The matrix format this code reads. A file says it with ``version:`` (``1``, or HAIOS's ``"1.0"``);
# a file without it is format 1. A later major version is refused with the fix, never half-read.
FORMAT_VERSION = 1


def format_major(version: str | int | float) -> int | None:
    """The major number of a ``version:`` value (``"1.0"`` -> 1), or None when it has none."""
    text = str(version).strip().lower().removeprefix("v")
    head = text.split(".", 1)[0]
    return int(head) if head.isdigit() else None


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Rule(_Strict):
    action: Action
    message: str | None = None
    redirect_to: str | None = None
    # In the organisation's matrix: false makes the cell a default a project may override (a
    # floor otherwise). Meaningless in a project's matrix (``validate`` says so).
    locked: bool | None = None


class Settings(_Strict):
    on_error: Literal["allow", "block"] = "allow"
    grant_on_allow: bool = False
    require_intent: bool = False
    fallback_state: str = "EXPLORE"
    ledger_max_bytes: int = Field(default=50 * 1024 * 1024, gt=0)


class SkillRestriction(_Strict):
    allowed: list[str] | None = None
    blocked: list[str] = Field(default_factory=list)
    block_message: str = "Skill '{skill}' is not allowed in this state."


class McpPaths(_Strict):
    """Which keys of an MCP tool's input name files, checked against the protected paths."""

    keys: list[str] = Field(default_factory=list)
    servers: dict[str, list[str]] = Field(default_factory=dict)


class Secrets(_Strict):
    """What holds credentials (docs/secrets.md): secret files and variables, their exceptions, the
    hosts each secret belongs to, and how long a session stays tainted after it read one."""

    paths: list[str] | None = None
    not_paths: list[str] | None = None
    variables: list[str] | None = None
    not_variables: list[str] | None = None
    owners: dict[str, list[str]] | None = None
    taint_minutes: float | None = Field(default=None, gt=0, le=7 * 24 * 60)


class Egress(_Strict):
    """The hosts a session may still reach after it read a secret."""

    allow: list[str] | None = None


class MatrixFile(_Strict):
    version: str | int | float = "1.0"
    extends: Literal["default"] | None = None
    default_action: Action = "allow"
    states: list[str] | None = None
    settings: Settings | None = None
    rules: dict[str, dict[str, Rule]] = Field(default_factory=dict)
    tools: dict[str, str] | None = None
    protected_paths: list[str] | None = None
    exec_config_paths: list[str] | None = None
    secrets: Secrets | None = None
    egress: Egress | None = None
    sandbox_network: dict[str, list[str]] | None = None
    mcp_paths: McpPaths | None = None
    skill_restrictions: dict[str, SkillRestriction] | None = None
    phase_to_state: dict[str, str] | None = None
    cycles: dict[str, list[str]] | None = None
    shell: dict[str, Any] | None = None


def describe_validation_error(exc: ValidationError) -> list[tuple[str, str]]:
    """Turn a pydantic error into ``(key path, sentence)`` pairs a person can act on."""
    out: list[tuple[str, str]] = []
    for err in exc.errors():
        loc = [str(part) for part in err["loc"]]
        kind = err["type"]
        got = err.get("input")
        if kind == "literal_error":
            expected = err.get("ctx", {}).get("expected", "")
            choices = expected.replace("'", "").replace(" or ", ", ")
            text = f"expected one of {choices}, got {got!r}"
        elif kind == "extra_forbidden":
            text = f"unknown key {loc[-1]!r} (a typo?)"
        elif kind == "missing":
            text = "required key is missing"
        elif kind == "model_type" or kind == "dict_type":
            text = f"expected a mapping, got {type(got).__name__}"
        else:
            text = f"{err['msg']} (got {got!r})"
        out.append((".".join(loc) or "(top level)", text))
    return out
