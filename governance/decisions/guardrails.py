"""Guardrails: declarative rules checked against a decision or a tool call.

Sources: the packaged ``guardrails.yaml`` (``config/`` in a checkout) and the project override
``<project>/.claude/governance/guardrails.yaml``. Both are validated and merged by
:mod:`governance.decisions.guardrail_schema` (yaml + pydantic) only when their bytes change; the result is
kept in ``<governance_dir>/.cache/guardrails.marshal`` keyed by the sha256 of the sources; the
cache and its memo are bound to the seal (``governance.policy.derived``), so a rewritten one is
not used.

Hot path: :func:`evaluate_tool_call` runs inside the PreToolUse hook. This module imports only
``marshal``, ``os``, ``time`` and our small modules; with no tool-call guardrail configured a call
costs a stat of each source and two small file reads (the memo and the cache); the hook skips
this module altogether while the memo says the sources hold no tool-call guardrail.
"""

from __future__ import annotations

import marshal
import time

from governance import system
from governance.errors import ConfigError, OrgPolicyError
from governance.policy import managed, seal
from governance.project import (
    GOVERNANCE_SUBDIR,
    GUARDRAILS_MEMO,
    guardrails_sources,
    read_bytes,
    signature,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hashlib import sha256
    from typing import Any
else:
    try:
        from _sha256 import sha256
    except ImportError:  # pragma: no cover - interpreters without the C module
        from hashlib import sha256

CACHE_NAME = "guardrails.marshal"
FORMAT = 2   # the compiled form (2: each rule names its source); a memo of another is not used
_MEMO: dict[str, dict[str, Any]] = {}


def _read(path: str) -> bytes | None:
    try:
        return read_bytes(path)
    except FileNotFoundError:
        return None


def _cached(project_dir: str, record: dict[str, Any] | None, key: str) -> dict[str, Any] | None:
    data = seal.derived_bytes(project_dir, CACHE_NAME, record)
    try:
        cached = marshal.loads(data) if data is not None else None
    except (ValueError, EOFError, TypeError):
        return None
    return cached if isinstance(cached, dict) and cached.get("key") == key else None


def load_compiled(project_dir: str) -> dict[str, Any]:
    """The merged, validated guardrails of a project (from the cache when the sources are
    unchanged). Raises ``ConfigError`` naming file, rule and key when a source is invalid.

    Fast path: when the sources' stat signature is the one remembered, their content hash is
    known without reading them. Whatever the path, the memo ends up saying how many tool-call
    guardrails these sources hold, so a PreToolUse hook with none skips this module entirely."""
    default_path, override_path, org_path = guardrails_sources(project_dir)
    org_present = managed.present(org_path)   # root's alone, or none: else fail closed
    record = seal.read(project_dir)
    seen = signature((default_path, override_path, org_path))
    known = seal.recall_derived(project_dir, GUARDRAILS_MEMO, seen, record)
    if isinstance(known, dict) and known.get("format") == FORMAT \
            and isinstance(known.get("key"), str):
        memo_key = f"{project_dir}\0{known['key']}"
        compiled = _MEMO.get(memo_key) or _cached(project_dir, record, known["key"])
        if compiled is not None:
            _MEMO[memo_key] = compiled
            return compiled
    default_data = _read(default_path)
    override_data = _read(override_path)
    org_data = _read(org_path) if org_present else None
    digest = sha256(b"f%d\0" % FORMAT)   # a compiled form of another format is not used
    for data in (default_data, override_data, *((org_data,) if org_data is not None else ())):
        digest.update(b"-" if data is None else b"+%d:" % len(data))
        digest.update(data or b"")
    key = digest.hexdigest()
    memo_key = f"{project_dir}\0{key}"
    compiled = _MEMO.get(memo_key) or _cached(project_dir, record, key)
    if compiled is None:
        compiled = _compile(project_dir, key, (default_path, default_data),
                            (override_path, override_data), (org_path, org_data))
    _MEMO[memo_key] = compiled
    value = {"key": key, "tool_rules": len(compiled["tool_rules"]), "format": FORMAT}
    if known != value:
        from governance.policy import derived

        derived.remember(project_dir, GUARDRAILS_MEMO, seen, value)
    return compiled


def _compile(project_dir: str, key: str, default: tuple[str, bytes | None],
             override: tuple[str, bytes | None],
             org: tuple[str, bytes | None] = ("", None)) -> dict[str, Any]:
    """Validate and merge the sources (yaml + pydantic), then store the result in the cache."""
    from governance.project import require_config_libraries

    require_config_libraries(override[0] if override[1] is not None else default[0])
    from governance.decisions.guardrail_schema import compile_sources

    try:
        # the organisation's file last: its rules win by id over the project's, which can
        # neither redefine nor disable them
        compiled = compile_sources([default, override, org], key)
    except ConfigError as exc:
        if exc.file == org[0] and org[1] is not None:
            raise OrgPolicyError(exc.message, file=exc.file, key=exc.key, fix=exc.fix) from None
        raise
    from governance.policy import derived

    derived.store(project_dir, {CACHE_NAME: marshal.dumps(compiled)})  # read-only: none kept
    return compiled


def _in_scope(rule: dict[str, Any], subject: dict[str, Any]) -> bool:
    for scope_key, field in (("categories", "category"), ("states", "state"),
                             ("primitives", "primitive")):
        allowed = rule[scope_key]
        if allowed is not None and subject.get(field) not in allowed:
            return False
    return True


def _verdict(rule: dict[str, Any]) -> dict[str, Any]:
    return {"guardrailId": rule["id"], "name": rule["name"], "message": rule["message"],
            "severity": rule["severity"], "suggestion": rule["suggestion"]}


def evaluate_rules(rules: list[dict[str, Any]], subject: dict[str, Any]
                   ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(violated guardrails, passed guardrails) among those in scope for one subject."""
    from governance.decisions.condition import evaluate  # only when there is a rule to evaluate

    violated: list[dict[str, Any]] = []
    passed: list[dict[str, Any]] = []
    for rule in rules:
        if not _in_scope(rule, subject):
            continue
        if evaluate(rule["cond"], subject):
            violated.append(_verdict(rule))
        else:
            passed.append({"guardrailId": rule["id"], "name": rule["name"]})
    return violated, passed


def evaluate_tool_call(project_dir: str, facts: dict[str, Any]) -> list[dict[str, Any]]:
    """Violated tool-call guardrails for a PreToolUse call (both severities; the hook denies on
    ``block``), each with the ``file`` that defines it. ``facts``: tool, primitive, state,
    cycle, phase, work_item, paths, command, agent_id, permission_mode."""
    rules = load_compiled(project_dir)["tool_rules"]
    if not rules:
        return []
    violated = evaluate_rules(rules, facts)[0]
    if not violated:
        return []
    paths = guardrails_sources(project_dir)   # where each source is now (the cache keeps none)
    files = {rule["id"]: paths[rule["source"]] for rule in rules}
    return [{**found, "file": files[found["guardrailId"]]} for found in violated]


def timestamp(seconds: float | None = None) -> str:
    now = time.time() if seconds is None else seconds
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1000):03d}Z"


def check_guardrails(action: dict[str, Any], project_dir: str, agent_id: str | None = None, *,
                     ledger: bool = True, audit: dict[str, Any] | None = None,
                     compiled: dict[str, Any] | None = None) -> dict[str, Any]:
    """Check a decision ``action`` (category, stakes, confidence, context, ...) against every
    guardrail; write the verdict to the ledger in the seed's audit format (``event:
    guardrail_check``, ``timestamp``, ``requesting_agent``, ``action``, ``allowed``,
    ``violations``, ``evaluated``; ``audit`` adds fields such as the credential). ``passed``
    lists the guardrails in scope that held. ``compiled``: the guardrails this call loaded
    already (:func:`load_compiled`)."""
    compiled = compiled or load_compiled(project_dir)
    violated, passed = evaluate_rules(compiled["rules"], action)
    violations = [item for item in violated if item["severity"] == "block"]
    warnings = [item for item in violated if item["severity"] == "warn"]
    result = {"allowed": not violations, "violations": violations, "warnings": warnings,
              "passed": passed, "evaluated": len(violated) + len(passed),
              "evaluatedAt": timestamp()}
    if ledger:
        write_ledger(project_dir, {
            "event": "guardrail_check", "timestamp": result["evaluatedAt"],
            "requesting_agent": agent_id, "action": action.get("description"),
            "allowed": result["allowed"],
            "violations": [item["guardrailId"] for item in violations],
            "evaluated": result["evaluated"],
            "warnings": [item["guardrailId"] for item in warnings],
            "category": action.get("category"), **(audit or {}),
        })
    return result


def write_ledger(project_dir: str, record: dict[str, Any]) -> bool:
    """Append ``record`` to the governance ledger; False when no ledger module is installed."""
    import importlib

    try:
        ledger_module = importlib.import_module("governance.ledger.chain")
    except ImportError:
        return False
    ledger_module.append(system.join(project_dir, GOVERNANCE_SUBDIR), record)
    return True
