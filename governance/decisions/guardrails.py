"""Guardrails: declarative rules checked against a decision or a tool call.

Sources: the packaged ``guardrails.yaml`` (``config/`` in a checkout) and the project override
``<project>/.claude/governance/guardrails.yaml``. Both are validated and merged by
:mod:`governance.decisions.guardrail_schema` (yaml + pydantic) only when their bytes change; the result is
kept in ``<governance_dir>/.cache/guardrails.marshal`` keyed by the sha256 of the sources.

Hot path: :func:`evaluate_tool_call` runs inside the PreToolUse hook. This module imports only
``marshal``, ``os``, ``time`` and our small modules; with no tool-call guardrail configured a call
costs two small file reads, one hash and one cache load.
"""

from __future__ import annotations

import marshal
import os
import time

from governance.project import GOVERNANCE_SUBDIR, packaged_config, read_bytes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hashlib import sha256
    from typing import Any
else:
    try:
        from _sha256 import sha256
    except ImportError:  # pragma: no cover - interpreters without the C module
        from hashlib import sha256

FILE_NAME = "guardrails.yaml"
CACHE_NAME = "guardrails.marshal"
_MEMO: dict[str, dict[str, Any]] = {}


def default_guardrails_path() -> str:
    return packaged_config(FILE_NAME, "GOVERNANCE_DEFAULT_GUARDRAILS")


def override_guardrails_path(project_dir: str) -> str:
    return os.path.join(project_dir, GOVERNANCE_SUBDIR, FILE_NAME)


def _read(path: str) -> bytes | None:
    try:
        return read_bytes(path)
    except FileNotFoundError:
        return None


def load_compiled(project_dir: str) -> dict[str, Any]:
    """The merged, validated guardrails of a project (from the cache when the sources are
    unchanged). Raises ``ConfigError`` naming file, rule and key when a source is invalid."""
    default_path = default_guardrails_path()
    override_path = override_guardrails_path(project_dir)
    default_data = _read(default_path)
    override_data = _read(override_path)
    digest = sha256()
    for data in (default_data, override_data):
        digest.update(b"-" if data is None else b"+%d:" % len(data))
        digest.update(data or b"")
    key = digest.hexdigest()
    memo_key = f"{project_dir}\0{key}"
    memo = _MEMO.get(memo_key)
    if memo is not None:
        return memo
    cache_dir = os.path.join(project_dir, GOVERNANCE_SUBDIR, ".cache")
    cache_path = os.path.join(cache_dir, CACHE_NAME)
    try:
        cached = marshal.loads(read_bytes(cache_path))
        if isinstance(cached, dict) and cached.get("key") == key:
            _MEMO[memo_key] = cached
            return cached
    except (OSError, ValueError, EOFError, TypeError):
        pass
    from governance.project import require_config_libraries

    require_config_libraries(override_path if override_data is not None else default_path)
    from governance.decisions.guardrail_schema import compile_sources

    compiled = compile_sources([(default_path, default_data), (override_path, override_data)], key)
    try:
        os.makedirs(cache_dir, mode=0o700, exist_ok=True)
        temp = f"{cache_path}.{os.getpid()}.tmp"
        with open(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as handle:
            handle.write(marshal.dumps(compiled))
        os.replace(temp, cache_path)
    except OSError:
        pass  # a read-only project still works, it only recompiles each time
    _MEMO[memo_key] = compiled
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
    ``block``). ``facts``: tool, primitive, state, cycle, phase, work_item, paths, command,
    agent_id, permission_mode."""
    rules = load_compiled(project_dir)["tool_rules"]
    if not rules:
        return []
    return evaluate_rules(rules, facts)[0]


def timestamp(seconds: float | None = None) -> str:
    now = time.time() if seconds is None else seconds
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1000):03d}Z"


def check_guardrails(action: dict[str, Any], project_dir: str, agent_id: str | None = None, *,
                     ledger: bool = True) -> dict[str, Any]:
    """Check a decision ``action`` (category, stakes, confidence, context, ...) against every
    guardrail; write the verdict to the ledger with the requesting agent. ``passed`` lists the
    guardrails in scope that held."""
    compiled = load_compiled(project_dir)
    violated, passed = evaluate_rules(compiled["rules"], action)
    violations = [item for item in violated if item["severity"] == "block"]
    warnings = [item for item in violated if item["severity"] == "warn"]
    result = {"allowed": not violations, "violations": violations, "warnings": warnings,
              "passed": passed, "evaluated": len(violated) + len(passed),
              "evaluatedAt": timestamp()}
    if ledger:
        write_ledger(project_dir, {
            "event": "GuardrailCheck", "agent": agent_id, "allowed": result["allowed"],
            "violations": [item["guardrailId"] for item in violations],
            "warnings": [item["guardrailId"] for item in warnings],
            "category": action.get("category"), "description": action.get("description"),
        })
    return result


def write_ledger(project_dir: str, record: dict[str, Any]) -> bool:
    """Append ``record`` to the governance ledger; False when no ledger module is installed."""
    import importlib

    try:
        ledger_module = importlib.import_module("governance.ledger.chain")
    except ImportError:
        return False
    ledger_module.append(os.path.join(project_dir, GOVERNANCE_SUBDIR), record)
    return True
