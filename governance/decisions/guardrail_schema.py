"""Guardrail files: the schema (pydantic), the merge of default and project files, the compile.

Not on the hot path: :mod:`governance.decisions.guardrails` imports this module only when a source file
changed since the compiled cache was written. Every error is a :class:`ConfigError` naming the
file, the rule (by position and id) and the key, e.g.
``guardrails.yaml: at key guardrails[1] (id no-x).condition.all[0].<: expected a number ...``.
"""

from __future__ import annotations

from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from governance.decisions.condition import ConditionSyntaxError, compile_condition, fields_of
from governance.errors import ConfigError
from governance.layering import overlay, written

# Fields that only a tool call has: a guardrail reading one of them also runs in the hook.
TOOL_CALL_FIELDS = frozenset({"tool", "primitive", "state", "paths", "command"})
ID_PATTERN = r"^[a-z0-9][a-z0-9-]{0,63}$"


class Scope(BaseModel):
    model_config = ConfigDict(extra="forbid")
    categories: list[str] | None = None
    states: list[str] | None = None
    primitives: list[str] | None = None


class Guardrail(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(pattern=ID_PATTERN)
    name: str = Field(min_length=1)
    description: str = ""
    severity: Literal["block", "warn"]
    condition: dict[str, Any]
    message: str = Field(min_length=1)
    suggestion: str = ""
    scope: Scope | None = None
    enabled: bool = True


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    fail_mode: Literal["open", "closed"] | None = None
    require_tags: bool | None = None
    require_pattern: bool | None = None
    ranking: Literal["keyword", "hybrid"] | None = None
    agent_name: str | None = Field(default=None, min_length=1, max_length=200,
                                   pattern=r"^[^\s].*$")


class GuardrailFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    version: Literal[1] = 1
    settings: Settings | None = None
    guardrails: list[dict[str, Any]] = Field(default_factory=list)
    disable: list[str] = Field(default_factory=list)


# The server's name: the id CSTP answers give as the responding ``agent``.
SERVER_NAME = "claude-governance"
DEFAULT_SETTINGS: dict[str, Any] = {"fail_mode": "open", "require_tags": False,
                                    "require_pattern": False, "ranking": "keyword",
                                    "agent_name": SERVER_NAME}


def _loc(error: dict[str, Any]) -> str:
    parts: list[str] = []
    for item in error["loc"]:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        else:
            parts.append(("." if parts else "") + str(item))
    return "".join(parts)


def _fail(path: str, key: str, message: str, fix: str) -> ConfigError:
    return ConfigError(message, file=path, key=key, fix=fix)


def parse_file(path: str, data: bytes) -> tuple[list[dict[str, Any]], list[str], dict[str, Any]]:
    """Validate one guardrail file; return (compiled rules, disabled ids, settings)."""
    try:
        raw = yaml.safe_load(data.decode("utf-8")) or {}
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise _fail(path, "(file)", f"is not valid YAML: {exc}",
                    "correct the YAML syntax at the reported line.") from None
    if not isinstance(raw, dict):
        raise _fail(path, "(file)", "expected a mapping with 'guardrails', 'settings', 'disable'.",
                    "start the file with 'guardrails:'.")
    try:
        parsed = GuardrailFile.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise _fail(path, _loc(dict(first)), f"{first['msg']} (got {first.get('input')!r}).",
                    "see docs/decisions.md for the guardrail file format.") from None
    rules: list[dict[str, Any]] = []
    seen: set[str] = set()
    for index, item in enumerate(parsed.guardrails):
        label = f"guardrails[{index}]"
        if isinstance(item.get("id"), str):
            label += f" (id {item['id']})"
        try:
            rule = Guardrail.model_validate(item)
        except ValidationError as exc:
            first = exc.errors()[0]
            raise _fail(path, f"{label}.{_loc(dict(first))}",
                        f"{first['msg']} (got {first.get('input')!r}).",
                        "each guardrail needs id, name, severity (block|warn), condition and "
                        "message; see docs/decisions.md.") from None
        if rule.id in seen:
            raise _fail(path, f"{label}.id", f"duplicate guardrail id {rule.id!r}.",
                        "give every guardrail a unique id.")
        seen.add(rule.id)
        try:
            compiled = compile_condition(rule.condition)
        except ConditionSyntaxError as exc:
            raise _fail(path, f"{label}.{exc.key}", exc.message + ".",
                        "write comparisons as {field: NAME, OP: VALUE} with OP one of ==, !=, <, "
                        "<=, >, >=, in, matches, combined with all/any/not.") from None
        scope = rule.scope or Scope()
        reads = fields_of(compiled) | {
            name for name, value in (("state", scope.states), ("primitive", scope.primitives))
            if value}
        rules.append({
            "id": rule.id, "name": rule.name, "description": rule.description,
            "severity": rule.severity, "message": rule.message, "suggestion": rule.suggestion,
            "enabled": rule.enabled, "cond": compiled,
            "categories": tuple(scope.categories) if scope.categories else None,
            "states": tuple(scope.states) if scope.states else None,
            "primitives": tuple(scope.primitives) if scope.primitives else None,
            "tool_call": bool(reads & TOOL_CALL_FIELDS),
        })
    settings = written(parsed.settings) if parsed.settings else {}
    return rules, list(parsed.disable), settings


def compile_sources(sources: list[tuple[str, bytes | None]], key: str) -> dict[str, Any]:
    """Merge the default file, the project override and the organisation's (later files win by
    id) into the compiled form that the cache stores; each rule keeps the index of its source."""
    merged: dict[str, dict[str, Any]] = {}
    settings = dict(DEFAULT_SETTINGS)
    for number, (path, data) in enumerate(sources):
        if data is None:
            continue
        rules, disabled, file_settings = parse_file(path, data)
        for rule in rules:  # a rule is one unit: a file that names its id gives all of it
            rule["source"] = number   # whose rule (0 packaged, 1 project, 2 organisation)
            merged[rule["id"]] = rule
        for rule_id in disabled:
            merged.pop(rule_id, None)
        settings = overlay(settings, file_settings)  # only the settings the file writes
    active = [rule for rule in merged.values() if rule["enabled"]]
    return {
        "key": key,
        "settings": settings,
        "rules": active,
        "tool_rules": [rule for rule in active if rule["tool_call"]],
    }
