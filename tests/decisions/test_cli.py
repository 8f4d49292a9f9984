"""The decision commands through real `governance` processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
ACTION = {"description": "Put a Redis read-through cache in front of the catalogue",
          "category": "architecture", "stakes": "medium", "confidence": 0.9,
          "reasons": [{"type": "analysis", "text": "reads dominate"}],
          "tags": ["cache", "redis"], "pattern": "read-through cache"}


def governance(project: Path, *args: str, stdin: str | None = None
               ) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(project.parent / "home"),
           "CLAUDE_PROJECT_DIR": str(project), "GOVERNANCE_AGENT_ID": "cli-agent"}
    return subprocess.run([sys.executable, "-m", "governance.commands.cli", *args, "--project",
                           str(project)], input=stdin, env=env, cwd=str(project),
                          capture_output=True, text=True, timeout=60)


def as_json(result: subprocess.CompletedProcess[str]) -> Any:
    assert result.returncode in (0, 3), result.stderr
    return json.loads(result.stdout)


def test_pre_action_round_trip(project: Path) -> None:
    request = json.dumps({"agent_id": "agent-5", "action": ACTION})
    first = governance(project, "pre-action", "--json", "-", stdin=request)
    assert first.returncode == 0, first.stderr
    recorded = as_json(first)["decision_id"]

    blocked = governance(project, "pre-action", "--json", "-", stdin=json.dumps(
        {"action": {**ACTION, "stakes": "high", "confidence": 0.2}}))
    assert blocked.returncode == 3
    assert as_json(blocked)["decision_id"] is None

    path = project / "request.json"
    path.write_text(json.dumps({"action": {**ACTION, "description": "Cache prices in Redis"},
                                "options": {"auto_record": False}}))
    again = as_json(governance(project, "pre-action", "--json", str(path)))
    assert again["relevant_decisions"][0]["id"] == recorded
    assert again["decision_id"] is None


def test_pre_action_bad_input(project: Path) -> None:
    result = governance(project, "pre-action", "--json", "-",
                        stdin=json.dumps({"action": {**ACTION, "stakes": "enormous"}}))
    assert result.returncode == 2
    assert "action.stakes" in result.stderr and "low, medium, high, critical" in result.stderr
    not_json = governance(project, "pre-action", "--json", "-", stdin="{oops")
    assert not_json.returncode == 2 and "not valid JSON" in not_json.stderr


def test_record_review_query_show_calibration(project: Path) -> None:
    path = project / "action.json"
    path.write_text(json.dumps(ACTION))
    recorded = as_json(governance(project, "decisions", "record", "--json", str(path)))
    assert recorded["agent_id"] == "cli-agent"
    decision_id = recorded["id"]

    reviewed = governance(project, "decisions", "review", decision_id, "--outcome", "failure",
                          "--note", "cache stampede")
    assert reviewed.returncode == 0 and "failure" in reviewed.stdout

    text = governance(project, "decisions", "query", "redis cache", "--tag", "redis")
    assert decision_id in text.stdout and "similarity 1.00" in text.stdout
    found = as_json(governance(project, "decisions", "query", "--outcome", "failure",
                               "--since", "1d", "--json"))
    assert [d["id"] for d in found] == [decision_id]
    assert as_json(governance(project, "decisions", "query", "--category", "security",
                              "--json")) == []

    shown = governance(project, "decisions", "show", decision_id)
    assert "cache stampede" in shown.stdout
    missing = governance(project, "decisions", "show", "dec-00000000")
    assert missing.returncode == 2 and "no decision with id" in missing.stderr

    report = as_json(governance(project, "calibration", "--agent", "cli-agent", "--json"))
    assert report["overall"]["sample_size"] == 1
    assert report["overall"]["brier"] == 0.81  # (0.9 - 0)^2
    assert report["categories"]["architecture"]["accuracy"] == 0.0
    human = governance(project, "calibration")
    assert human.returncode == 0 and "architecture" in human.stdout


def test_guardrails_commands(project: Path,
                             write_override: Callable[[Path, str], Path]) -> None:
    check = governance(project, "guardrails", "check", "--json", "-",
                       stdin=json.dumps({"stakes": "critical", "confidence": 0.1}))
    assert check.returncode == 3
    assert as_json(check)["violations"][0]["guardrailId"] == "no-high-stakes-low-confidence"
    listing = governance(project, "guardrails", "list")
    assert listing.returncode == 0 and "prefer-staged-rollout" in listing.stdout

    path = write_override(project, "guardrails:\n  - {id: broken, name: B, severity: warn, "
                                   "message: m, condition: {field: x, '>': [1]}}\n")
    broken = governance(project, "guardrails", "list")
    assert broken.returncode == 2
    assert str(path) in broken.stderr
    assert "guardrails[0] (id broken).condition.>" in broken.stderr


def test_doctor_shows_the_fail_mode_and_the_quality_rule(
        project: Path, write_override: Callable[[Path, str], Path]) -> None:
    opened = governance(project, "doctor").stdout
    assert "ok    pre_action is fail-open (a guardrail warning or an evaluation failure warns " \
           "and allows; guardrails.yaml settings.fail_mode)" in opened
    assert "quality rule derives missing tags and pattern" in opened
    write_override(project, "settings: {fail_mode: closed, require_pattern: true}\n")
    closed = governance(project, "doctor").stdout
    assert "ok    pre_action is fail-closed (a guardrail warning or an evaluation failure " \
           "blocks" in closed and "refuses a decision without pattern" in closed
    write_override(project, "settings: {fail_mode: closed}\nguardrails: [{id: x}]\n")
    broken = governance(project, "doctor").stdout
    assert "FAIL  guardrails do not validate, so pre_action runs fail-closed" in broken


def test_a_recorded_decision_without_tags_gets_them_derived(project: Path) -> None:
    path = project / "decision.json"
    path.write_text(json.dumps({**ACTION, "tags": [], "pattern": ""}))
    recorded = as_json(governance(project, "decisions", "record", "--json", str(path)))
    assert recorded["tags"] == recorded["quality"]["derived"]["tags"]
    assert recorded["tags"][0] == "architecture" and "redis" in recorded["tags"]
