"""The one call: guardrails, memory, calibration, patterns and recording together."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from governance.decisions.fields import DecisionInputError
from governance.decisions.pre_action import pre_action
from governance.decisions.store import DecisionStore


def action(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "description": "Use expand-contract migration for the invoices table",
        "category": "architecture", "stakes": "medium", "confidence": 0.8,
        "reasons": [{"type": "precedent", "text": "worked for users"}],
        "tags": ["database", "migration"], "pattern": "expand-contract migration",
        "context": {}}
    base.update(overrides)
    return base


def count(project: Path) -> int:
    store = DecisionStore.for_project(str(project))
    try:
        return store.count()
    finally:
        store.close()


def test_allowed_call_records_and_recalls(project: Path) -> None:
    first = pre_action(str(project), "agent-1", action(
        description="Adopt expand-contract migration for the users table"))
    assert first["allowed"] is True and first["decision_id"].startswith("dec-")
    assert first["relevant_decisions"] == []
    assert {r["status"] for r in first["guardrail_results"]} == {"pass"}
    store = DecisionStore.for_project(str(project))
    store.review(first["decision_id"], "success", "no downtime")
    store.close()

    second = pre_action(str(project), "agent-1", action())
    assert second["allowed"] is True
    [relevant] = second["relevant_decisions"]
    assert relevant["id"] == first["decision_id"] and relevant["outcome"] == "success"
    assert set(relevant) == {"id", "decision", "outcome", "date", "pattern", "confidence",
                             "similarity", "recorded_at"}
    assert relevant["date"] == relevant["recorded_at"][:10]
    assert second["patterns_summary"] == ["expand-contract migration (1 confirmation)"]
    assert second["patterns"] == [{"pattern": "expand-contract migration",
                                   "decisions": 1, "confirmed": 1, "failed": 0}]
    calibration = second["calibration_context"]
    assert calibration["sample_size"] == 1
    assert calibration["category_accuracy"] == 1.0
    assert calibration["category_brier"] == pytest.approx(0.04)
    assert calibration["confidence_tendency"] == "insufficient_data"
    assert calibration["suggestion"]
    assert count(project) == 2


def test_blocked_action_is_never_recorded(project: Path) -> None:
    result = pre_action(str(project), "agent-1", action(stakes="critical", confidence=0.3))
    assert result["allowed"] is False and result["decision_id"] is None
    assert result["block_reasons"][0]["guardrail"] == "no-high-stakes-low-confidence"
    assert result["block_reasons"][0]["message"].startswith(
        "This decision has high or critical stakes")
    statuses = {r["guardrailId"]: r["status"] for r in result["guardrail_results"]}
    assert statuses["no-high-stakes-low-confidence"] == "block"
    assert count(project) == 0


def test_warning_allows_and_reports(project: Path) -> None:
    result = pre_action(str(project), "agent-1", action(
        context={"environment": "production", "review_completed": True}))
    assert result["allowed"] is True and result["decision_id"]
    assert result["warnings"] == [next(r["message"] for r in result["guardrail_results"]
                                       if r["status"] == "warn")]


def test_pure_query_records_nothing_and_needs_no_tags(project: Path) -> None:
    options = {"auto_record": False, "query_limit": 2}
    one = pre_action(str(project), "agent-1", action(tags=[], pattern=None), options)
    two = pre_action(str(project), "agent-1", action(tags=[], pattern=None), options)
    assert one["allowed"] and one["decision_id"] is None
    assert one["relevant_decisions"] == two["relevant_decisions"]
    assert count(project) == 0


@pytest.mark.parametrize(("bad", "key"), [
    ({"confidence": 1.5}, "action.confidence"),
    ({"confidence": True}, "action.confidence"),
    ({"category": "finance"}, "action.category"),
    ({"stakes": "huge"}, "action.stakes"),
    ({"description": "  "}, "action.description"),
    ({"reasons": [{"kind": "x"}]}, "action.reasons[0]"),
    ({"context": "prod"}, "action.context"),
    ({"colour": "blue"}, "action"),
])
def test_bad_input_names_the_field(project: Path, bad: dict[str, Any], key: str) -> None:
    with pytest.raises(DecisionInputError) as caught:
        pre_action(str(project), "agent-1", action(**bad))
    assert caught.value.key == key
    assert "expected" in caught.value.message or "required" in caught.value.message or \
        "unknown" in caught.value.message
    assert count(project) == 0


@pytest.mark.parametrize(("options", "key"), [
    ({"query_limit": 500}, "options.query_limit"),
    ({"auto_record": "yes"}, "options.auto_record"),
    ({"speed": 1}, "options.speed"),
])
def test_bad_options(project: Path, options: dict[str, Any], key: str) -> None:
    with pytest.raises(DecisionInputError) as caught:
        pre_action(str(project), "agent-1", action(), options)
    assert caught.value.key == key


def _break_store(project: Path) -> None:
    (project / ".claude" / "governance" / "decisions.db").mkdir(parents=True)


def test_internal_error_fails_open_by_default(project: Path) -> None:
    _break_store(project)
    result = pre_action(str(project), "agent-1", action())
    assert result["allowed"] is True and result["decision_id"] is None
    assert "fail-open" in result["warnings"][0]
    assert result["internal_error"]


def test_internal_error_fails_closed_when_configured(
        project: Path, write_override: Callable[[Path, str], Path]) -> None:
    write_override(project, "settings: {fail_mode: closed}\n")
    _break_store(project)
    result = pre_action(str(project), "agent-1", action())
    assert result["allowed"] is False
    assert "fail-closed" in result["block_reasons"][0]["message"]
    assert result["fail_mode"] == "closed" and result["decided_by"] == "fail_mode"


def test_without_tags_or_pattern_it_records_and_says_what_it_derived(project: Path) -> None:
    first = pre_action(str(project), "agent-1", action(
        description="Adopt expand-contract migration for the users table"))
    store = DecisionStore.for_project(str(project))
    store.review(first["decision_id"], "success", "no downtime")
    store.close()
    result = pre_action(str(project), "agent-1", action(
        description="Expand-contract migration of the invoices table", tags=[], pattern=None))
    quality = result["quality"]
    assert result["decision_id"] and quality["rule"] == "derive"
    assert quality["derived"]["tags"][0] == "architecture"
    assert quality["derived"]["tags"] == ["architecture", "contract", "expand", "migration"]
    assert quality["derived"]["pattern"] == "expand-contract migration"
    assert quality["pattern_from"] == first["decision_id"] and quality["missing"] == []
    assert first["decision_id"] in quality["hint"]
    store = DecisionStore.for_project(str(project))
    recorded = store.get(result["decision_id"])
    store.close()
    assert recorded is not None and recorded["pattern"] == "expand-contract migration"
    assert recorded["tags"] == quality["derived"]["tags"]


def test_no_similar_confirmed_decision_leaves_the_pattern_out_with_a_hint(project: Path) -> None:
    result = pre_action(str(project), "agent-1", action(tags=[], pattern=None))
    quality = result["quality"]
    assert result["decision_id"] and "pattern" not in quality["derived"]
    assert quality["missing"] == ["pattern"] and "send `pattern`" in quality["hint"]
    given = pre_action(str(project), "agent-1", action(description="Something else entirely"))
    assert given["quality"] == {"rule": "derive", "derived": {}, "pattern_from": None,
                                "missing": [], "hint": None}


@pytest.mark.parametrize(("settings", "missing", "key"), [
    ("{require_tags: true}", {"tags": []}, "action.tags"),
    ("{require_pattern: true}", {"pattern": None}, "action.pattern"),
    ("{require_tags: true, require_pattern: true}", {"tags": [], "pattern": None},
     "action.tags"),
])
def test_the_strict_rule_refuses_naming_the_missing_field(
        project: Path, write_override: Callable[[Path, str], Path], settings: str,
        missing: dict[str, Any], key: str) -> None:
    write_override(project, f"settings: {settings}\n")
    with pytest.raises(DecisionInputError) as caught:
        pre_action(str(project), "agent-1", action(**missing))
    assert caught.value.key == key and "quality rule" in caught.value.message
    assert count(project) == 0
    # a pure query and a blocked action never meet the rule: nothing would be recorded
    assert pre_action(str(project), "agent-1", action(**missing),
                      {"auto_record": False})["allowed"] is True
    blocked = pre_action(str(project), "agent-1", action(**missing, stakes="high",
                                                         confidence=0.2))
    assert blocked["allowed"] is False and blocked["decision_id"] is None
    assert pre_action(str(project), "agent-1", action())["quality"]["rule"] == "strict"


WARNED = {"context": {"environment": "production", "review_completed": True}}


def test_fail_open_a_warning_allows_and_the_answer_says_the_mode_decided(project: Path) -> None:
    result = pre_action(str(project), "agent-1", action(**WARNED))
    assert result["allowed"] is True and result["decision_id"]
    assert result["fail_mode"] == "open" and result["decided_by"] == "fail_mode"
    assert result["block_reasons"] == [] and result["warnings"]
    clean = pre_action(str(project), "agent-1", action())
    assert clean["fail_mode"] == "open" and clean["decided_by"] == "guardrails"


def test_fail_closed_a_warning_blocks_and_records_nothing(
        project: Path, write_override: Callable[[Path, str], Path]) -> None:
    write_override(project, "settings: {fail_mode: closed}\n")
    result = pre_action(str(project), "agent-1", action(**WARNED))
    assert result["allowed"] is False and result["decision_id"] is None
    assert result["fail_mode"] == "closed" and result["decided_by"] == "fail_mode"
    assert [r["guardrail"] for r in result["block_reasons"]] == ["prefer-staged-rollout"]
    assert count(project) == 0
    assert pre_action(str(project), "agent-1", action())["allowed"] is True


@pytest.mark.parametrize("mode", ["open", "closed"])
def test_a_blocking_guardrail_blocks_in_both_modes(
        project: Path, write_override: Callable[[Path, str], Path], mode: str) -> None:
    write_override(project, f"settings: {{fail_mode: {mode}}}\n")
    result = pre_action(str(project), "agent-1", action(stakes="high", confidence=0.3))
    assert result["allowed"] is False and result["decided_by"] == "guardrails"
    assert result["fail_mode"] == mode and count(project) == 0


def test_a_broken_project_file_keeps_its_fail_closed_mode(
        project: Path, write_override: Callable[[Path, str], Path]) -> None:
    write_override(project, "settings: {fail_mode: closed}\nguardrails:\n  - id: x\n")
    result = pre_action(str(project), "agent-1", action())
    assert result["allowed"] is False and result["fail_mode"] == "closed"
    assert "guardrails.yaml" in result["internal_error"]


def test_records_the_cycle_state(project: Path) -> None:
    matrix = pytest.importorskip("governance.policy.matrix")
    state = pytest.importorskip("governance.policy.state")
    state.set_state(str(project), matrix.load(str(project)), "implementation-cycle", "DO",
                    "WORK-42")
    result = pre_action(str(project), "agent-1", action())
    store = DecisionStore.for_project(str(project))
    decision = store.get(result["decision_id"])
    store.close()
    assert decision is not None
    assert (decision["state"], decision["cycle"], decision["phase"], decision["work_item"]) == (
        "DO", "implementation-cycle", "DO", "WORK-42")


def test_state_guardrail_applies_to_decisions(
        project: Path, write_override: Callable[[Path, str], Path]) -> None:
    matrix = pytest.importorskip("governance.policy.matrix")
    state = pytest.importorskip("governance.policy.state")
    write_override(project, """guardrails:
  - id: no-architecture-while-doing
    name: No new architecture during DO
    severity: block
    scope: {categories: [architecture], states: [DO]}
    condition: {field: stakes, in: [high, critical]}
    message: Big architecture decisions belong in DESIGN.
    suggestion: Go back to DESIGN first.
""")
    state.set_state(str(project), matrix.load(str(project)), "implementation-cycle", "DO", "W")
    blocked = pre_action(str(project), "agent-1", action(stakes="high"))
    assert blocked["allowed"] is False
    assert blocked["block_reasons"] == [{
        "guardrail": "no-architecture-while-doing",
        "message": "Big architecture decisions belong in DESIGN.",
        "suggestion": "Go back to DESIGN first."}]
    assert pre_action(str(project), "agent-1", action(stakes="medium"))["allowed"] is True
