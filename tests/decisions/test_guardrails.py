from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from governance.decisions.guardrails import check_guardrails, evaluate_tool_call, load_compiled
from governance.errors import ConfigError
from governance.project import override_guardrails_path

Writer = Callable[[Path, str], Path]
ROOT = Path(__file__).resolve().parents[2]
ENV_RULE = """
guardrails:
  - id: no-env-writes
    name: No writes to .env files
    severity: block
    condition:
      all:
        - {field: primitive, "==": file-write}
        - {field: paths, matches: '(^|/)\\.env$'}
    message: Writing .env files is not allowed.
    suggestion: Put the setting in config/settings.yaml instead.
  - id: warn-force-push
    name: Force pushes
    severity: warn
    condition: {field: command, matches: 'git push .*--force'}
    message: This is a force push.
"""


def facts(**overrides: object) -> dict[str, object]:
    base: dict[str, object] = {
        "tool": "Write", "primitive": "file-write", "state": "DO", "cycle": "c", "phase": "DO",
        "work_item": "W-1", "paths": ["/p/src/app.py"], "command": None, "agent_id": "main",
        "permission_mode": "default"}
    base.update(overrides)
    return base


def test_defaults_hold_the_documents_examples(project: Path) -> None:
    compiled = load_compiled(str(project))
    ids = [rule["id"] for rule in compiled["rules"]]
    assert ids == ["no-high-stakes-low-confidence", "no-production-without-review",
                   "prefer-staged-rollout"]
    assert compiled["tool_rules"] == []
    assert compiled["settings"] == {"fail_mode": "open", "require_tags": False,
                                    "require_pattern": False, "ranking": "keyword",
                                    "agent_name": "claude-governance"}


@pytest.mark.parametrize(("action", "blocked", "warned"), [
    ({"stakes": "high", "confidence": 0.4}, ["no-high-stakes-low-confidence"], []),
    ({"stakes": "critical", "confidence": 0.5}, [], []),
    ({"stakes": "medium", "confidence": 0.1}, [], []),
    ({"stakes": "low", "confidence": 0.9, "context": {"environment": "production"}},
     ["no-production-without-review"], ["prefer-staged-rollout"]),
    ({"stakes": "low", "confidence": 0.9,
      "context": {"affects_production": True, "review_completed": True, "rollout": "canary"}},
     [], []),
])
def test_check_guardrails_verdicts(project: Path, action: dict[str, object],
                                   blocked: list[str], warned: list[str]) -> None:
    result = check_guardrails(action, str(project), "agent-1")
    assert [v["guardrailId"] for v in result["violations"]] == blocked
    assert [w["guardrailId"] for w in result["warnings"]] == warned
    assert result["allowed"] is (not blocked)
    assert result["evaluated"] == 3
    assert result["evaluatedAt"].endswith("Z")
    for item in result["violations"] + result["warnings"]:
        assert set(item) == {"guardrailId", "name", "message", "severity", "suggestion"}


def test_every_check_is_written_to_the_ledger_in_the_seeds_audit_format(project: Path) -> None:
    check_guardrails({"description": "Ship it", "stakes": "high", "confidence": 0.1},
                     str(project), "agent-9")
    ledger = project / ".claude" / "governance" / "ledger.jsonl"
    if not ledger.exists():
        pytest.skip("the ledger module is not installed")
    records = [json.loads(line) for line in ledger.read_text().splitlines()]
    last = records[-1]
    # the seed's format: timestamp, event, requesting_agent, action, allowed, violations, evaluated
    assert last["event"] == "guardrail_check" and last["requesting_agent"] == "agent-9"
    assert last["action"] == "Ship it" and last["allowed"] is False
    assert last["violations"] == ["no-high-stakes-low-confidence"] and last["warnings"] == []
    assert last["evaluated"] == 3 and last["timestamp"].endswith("Z")


def test_override_adds_replaces_and_disables(project: Path, write_override: Writer) -> None:
    write_override(project, ENV_RULE + """
  - id: no-high-stakes-low-confidence
    name: Stricter confidence
    severity: warn
    condition: {field: confidence, "<": 0.8}
    message: Low confidence.
disable: [prefer-staged-rollout]
settings: {fail_mode: closed}
""")
    compiled = load_compiled(str(project))
    by_id = {rule["id"]: rule for rule in compiled["rules"]}
    assert set(by_id) == {"no-high-stakes-low-confidence", "no-production-without-review",
                          "no-env-writes", "warn-force-push"}
    assert by_id["no-high-stakes-low-confidence"]["severity"] == "warn"
    assert [rule["id"] for rule in compiled["tool_rules"]] == ["no-env-writes", "warn-force-push"]
    assert compiled["settings"]["fail_mode"] == "closed"


def test_evaluate_tool_call(project: Path, write_override: Writer) -> None:
    assert evaluate_tool_call(str(project), facts()) == []
    write_override(project, ENV_RULE)
    assert evaluate_tool_call(str(project), facts()) == []
    hit = evaluate_tool_call(str(project), facts(paths=["/p/.env"]))
    assert hit == [{"guardrailId": "no-env-writes", "name": "No writes to .env files",
                    "message": "Writing .env files is not allowed.", "severity": "block",
                    "suggestion": "Put the setting in config/settings.yaml instead.",
                    "file": override_guardrails_path(str(project))}]
    warned = evaluate_tool_call(str(project), facts(tool="Bash", primitive="shell-execute",
                                                    paths=[],
                                                    command="git push origin main --force"))
    assert [item["guardrailId"] for item in warned] == ["warn-force-push"]
    assert warned[0]["severity"] == "warn"


def test_hook_check_raises_config_error_on_a_broken_file(project: Path,
                                                        write_override: Writer) -> None:
    write_override(project, "guardrails:\n  - {id: x}\n")
    with pytest.raises(ConfigError) as caught:
        evaluate_tool_call(str(project), facts())
    assert caught.value.key == "guardrails[0] (id x).name"


def test_cache_is_rebuilt_when_a_source_changes(project: Path, write_override: Writer) -> None:
    write_override(project, ENV_RULE)
    load_compiled(str(project))
    cache = project / ".claude" / "governance" / ".cache" / "guardrails.marshal"
    assert cache.exists()
    write_override(project, "guardrails: []\ndisable: [no-high-stakes-low-confidence]\n")
    assert [r["id"] for r in load_compiled(str(project))["rules"]] == [
        "no-production-without-review", "prefer-staged-rollout"]


def test_a_memo_of_another_compiled_format_is_not_used(project: Path,
                                                      write_override: Writer) -> None:
    """A memo written by a version whose compiled rules did not name their source sends the next
    load to the sources, which it then remembers in this format."""
    from governance.decisions.guardrails import FORMAT
    from governance.policy import derived, seal
    from governance.project import GUARDRAILS_MEMO, guardrails_sources, signature

    write_override(project, ENV_RULE)
    load_compiled(str(project))
    seen = signature(guardrails_sources(str(project)))
    derived.remember(str(project), GUARDRAILS_MEMO, seen, {"key": "0" * 64, "tool_rules": 1})
    compiled = load_compiled(str(project))
    assert [rule["source"] for rule in compiled["rules"] if rule["id"] == "no-env-writes"] == [1]
    known = seal.recall_derived(str(project), GUARDRAILS_MEMO, seen, seal.read(str(project)))
    assert isinstance(known, dict) and known["format"] == FORMAT and known["key"] != "0" * 64


@pytest.mark.parametrize(("text", "key", "words"), [
    ("guardrails:\n  - {id: x, name: X, severity: blok, condition: {field: a, '==': 1}, "
     "message: m}\n", "guardrails[0] (id x).severity", "'block' or 'warn'"),
    ("guardrails:\n  - {id: x, name: X, severity: warn, message: m}\n",
     "guardrails[0] (id x).condition", "Field required"),
    ("guardrails:\n  - {id: x, name: X, severity: warn, message: m, condition: "
     "{all: [{field: a, '<': [1]}]}}\n", "guardrails[0] (id x).condition.all[0].<",
     "number or a string"),
    ("guardrails:\n  - {id: x, name: X, severity: warn, message: m, condition: "
     "{field: a, '==': 1}, eval: 'os.system()'}\n", "guardrails[0] (id x).eval",
     "Extra inputs"),
    ("guardrails:\n  - {id: x, name: X, severity: warn, message: m, condition: {field: a, "
     "'==': 1}}\n  - {id: x, name: Y, severity: warn, message: m, condition: {field: a, "
     "'==': 1}}\n", "guardrails[1] (id x).id", "duplicate"),
    ("settings: {fail_mode: maybe}\n", "settings.fail_mode", "'open' or 'closed'"),
    ("guardrails: [\n", "(file)", "not valid YAML"),
])
def test_invalid_config_names_file_rule_and_key(project: Path, write_override: Writer, text: str,
                                                key: str, words: str) -> None:
    path = write_override(project, text)
    with pytest.raises(ConfigError) as caught:
        load_compiled(str(project))
    assert caught.value.file == str(path)
    assert caught.value.key == key
    assert words in caught.value.message
    assert caught.value.fix


def _run(code: str, project: Path) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HOME": str(project.parent)}
    return subprocess.run([sys.executable, "-c", code], env=env, check=True,
                          capture_output=True, text=True).stdout


PROBE = """
import sys
before = set(sys.modules)
from governance.decisions.guardrails import evaluate_tool_call
result = evaluate_tool_call({project!r}, {facts!r})
loaded = sorted(set(sys.modules) - before)
print(repr((result, loaded)))
"""


@pytest.mark.parametrize("with_rules", [False, True])
def test_hot_path_loads_only_cheap_modules(project: Path, write_override: Writer,
                                           with_rules: bool) -> None:
    if with_rules:
        write_override(project, ENV_RULE)
    code = PROBE.format(project=str(project), facts=facts(paths=["/p/.env"]))
    _run(code, project)  # the first call compiles the cache (yaml + pydantic, cold path)
    result, loaded = eval(_run(code, project))
    assert [item["guardrailId"] for item in result] == (["no-env-writes"] if with_rules else [])
    heavy = {"yaml", "pydantic", "typing", "dataclasses", "pathlib", "logging", "subprocess",
             "argparse", "hashlib", "sqlite3", "json", "os",
             "governance.decisions.guardrail_schema"}
    assert not heavy & set(loaded), loaded
    # ``re`` (which pulls in enum) loads only when a ``matches`` comparison actually runs.
    assert ("re" in loaded) is with_rules
    if not with_rules:
        assert "enum" not in loaded
    ours = {name for name in loaded if name.startswith("governance")}
    # the seal: the cache and its memo are checked against it (a hook has loaded it already)
    assert ours <= {"governance", "governance.decisions", "governance.decisions.guardrails",
                    "governance.decisions.condition", "governance.project", "governance.policy",
                    "governance.policy.seal", "governance.policy.managed",
                    "governance.jsoncodec", "governance.errors",
                    "governance.system"}


def test_hot_path_is_fast_without_tool_call_guardrails(project: Path) -> None:
    evaluate_tool_call(str(project), facts())
    samples = []
    for _ in range(300):
        start = time.perf_counter()
        evaluate_tool_call(str(project), facts())
        samples.append(time.perf_counter() - start)
    samples.sort()
    assert samples[len(samples) // 2] < 0.001  # typically ~0.02 ms; loose bound for slow CI


def test_scope_on_states_or_primitives_makes_a_tool_call_guardrail(
        project: Path, write_override: Writer) -> None:
    write_override(project, """guardrails:
  - id: read-only-in-explore
    name: Read-only while exploring
    severity: block
    scope: {states: [EXPLORE], primitives: [file-write]}
    condition: {field: agent_id, "!=": nobody}
    message: EXPLORE is read-only.
""")
    compiled = load_compiled(str(project))
    assert [rule["id"] for rule in compiled["tool_rules"]] == ["read-only-in-explore"]
    assert evaluate_tool_call(str(project), facts(state="DO")) == []
    assert evaluate_tool_call(str(project), facts(state="EXPLORE", primitive="file-read")) == []
    [hit] = evaluate_tool_call(str(project), facts(state="EXPLORE"))
    assert hit["guardrailId"] == "read-only-in-explore"
    # a decision (no state, no primitive) is out of this rule's scope
    assert check_guardrails({"stakes": "low", "confidence": 0.9}, str(project), "a",
                            ledger=False)["evaluated"] == 3


def test_each_file_changes_only_the_settings_it_writes(tmp_path: Path) -> None:
    """Default, organisation-like middle file and project: a setting a file leaves out (or
    writes as null) keeps the value of the file below."""
    from governance.decisions.guardrail_schema import compile_sources

    sources: list[tuple[str, bytes | None]] = [
        (str(tmp_path / "default.yaml"), b"settings: {fail_mode: closed, ranking: hybrid}\n"),
        (str(tmp_path / "middle.yaml"), b"settings: {require_tags: false}\n"),
        (str(tmp_path / "project.yaml"), b"settings: {fail_mode: null, require_pattern: false}\n"),
    ]
    compiled = compile_sources(sources, "key")
    assert compiled["settings"] == {"fail_mode": "closed", "require_tags": False,
                                    "require_pattern": False, "ranking": "hybrid",
                                    "agent_name": "claude-governance"}
