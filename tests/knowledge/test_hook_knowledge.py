"""Knowledge through the installed hook command, in real processes: strict and advisory flows, the
cooldown, the ledger records, and 10 concurrent calls of one session."""

from __future__ import annotations

import json
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import hook_command, install, run_command, set_state
from tests.knowledge.test_lookup import DOCKER_SOP, sop


@pytest.fixture
def pre(project: Path) -> str:
    install(project)
    set_state(project, "implementation-cycle/DO")
    sop(project, "deploy", DOCKER_SOP)
    return hook_command(project, "PreToolUse")


def strict(project: Path, cooldown: float = 5) -> None:
    path = project / ".claude" / "governance" / "knowledge.yaml"
    path.write_text(f"enforcement:\n  level: strict\n  cooldown_minutes: {cooldown}\n")


def payload(project: Path, command: str, session: str = "sess-1") -> str:
    return json.dumps({"session_id": session, "transcript_path": "/dev/null",
                       "cwd": str(project), "hook_event_name": "PreToolUse",
                       "tool_name": "Bash", "tool_input": {"command": command},
                       "tool_use_id": f"toolu_{abs(hash(command)) % 10**8}",
                       "permission_mode": "default"})


def hook(command: str, data: str) -> dict[str, Any]:
    done = run_command(command, data)
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def denied(answer: dict[str, Any]) -> bool:
    return answer["hookSpecificOutput"].get("permissionDecision") == "deny"


def ledger(project: Path) -> list[dict[str, Any]]:
    path = project / ".claude" / "governance" / "ledger.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_strict_first_call_denied_with_the_sop_retry_passes_then_cooldown(project: Path,
                                                                          pre: str) -> None:
    strict(project, cooldown=0.1)                          # 6 seconds
    first = hook(pre, payload(project, "docker compose up -d"))
    assert denied(first)
    reason = first["hookSpecificOutput"]["permissionDecisionReason"]
    assert "retry exactly the same call within 0.1 minutes" in reason
    assert "Preflight:\nRun docker compose config first." in reason
    assert "SOP deploy" in first["hookSpecificOutput"]["additionalContext"]
    assert "knowledge held this call" in first["systemMessage"]
    retry = hook(pre, payload(project, "docker compose up -d"))
    assert not denied(retry)
    other = hook(pre, payload(project, "docker ps"))       # the same SOP, within the cooldown
    assert not denied(other)
    time.sleep(6.2)
    again = hook(pre, payload(project, "docker ps"))
    assert denied(again)
    outcomes = [r["knowledge"]["outcome"] for r in ledger(project) if "knowledge" in r]
    assert outcomes == ["blocked", "acknowledged", "repeat", "blocked"]
    record = next(r for r in ledger(project) if r.get("knowledge", {}).get("outcome") == "blocked")
    assert record["decision"] == "deny"
    assert record["knowledge"]["sops"] == [{"name": "deploy", "why": ["technology docker"],
                                            "sections": ["credentials", "preflight"]}]
    assert "1Password" not in json.dumps(ledger(project))
    verify = subprocess.run([".venv/bin/python", "-m", "governance.commands", "ledger", "verify",
                             "--project", str(project)], capture_output=True, text=True,
                            check=False)
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_advisory_puts_the_sop_in_the_context(project: Path, pre: str) -> None:
    answer = hook(pre, payload(project, "docker compose up -d"))
    assert not denied(answer)
    context = answer["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("[STATE: DO]")
    assert "[KNOWLEDGE] for this call" in context and "Run docker compose config first." in context
    again = hook(pre, payload(project, "docker compose up -d"))
    assert "[KNOWLEDGE]" not in again["hookSpecificOutput"]["additionalContext"]


def test_a_matrix_block_stays_a_block(project: Path, pre: str) -> None:
    answer = hook(pre, payload(project, "docker compose down -v && git push --force"))
    assert denied(answer)
    assert "[KNOWLEDGE]" not in answer["hookSpecificOutput"]["additionalContext"]
    assert "knowledge" not in ledger(project)[-1]


def test_a_broken_knowledge_config_keeps_the_matrix_decision_and_says_so(project: Path,
                                                                         pre: str) -> None:
    (project / ".claude" / "governance" / "knowledge.yaml").write_text("enforcement: [\n")
    answer = hook(pre, payload(project, "docker ps"))
    assert not denied(answer)
    assert "Knowledge was not consulted" in answer["systemMessage"]
    assert "knowledge.yaml" in answer["systemMessage"]
    log = (project / ".claude" / "governance" / "errors.log").read_text()
    assert "knowledge.yaml" in log


def test_fail_closed_denies_when_knowledge_cannot_be_consulted(project: Path) -> None:
    install(project, True)
    set_state(project, "implementation-cycle/DO")
    sop(project, "deploy", DOCKER_SOP)
    (project / ".claude" / "governance" / "knowledge.yaml").write_text("enforcement: [\n")
    answer = hook(hook_command(project, "PreToolUse"), payload(project, "docker ps"))
    assert denied(answer)


def test_ten_concurrent_calls_of_one_session_stay_exact(project: Path, pre: str) -> None:
    strict(project)
    commands = [f"docker logs service-{i}" for i in range(10)]

    def wave(cmds: list[str]) -> list[dict[str, Any]]:
        with ThreadPoolExecutor(10) as pool:
            return list(pool.map(lambda c: hook(pre, payload(project, c)), cmds))

    assert all(denied(a) for a in wave(commands))          # none acknowledged yet: all held
    assert not any(denied(a) for a in wave(commands))      # each retry acknowledges
    assert not any(denied(a) for a in wave([c + " --tail 5" for c in commands]))
    outcomes = [r["knowledge"]["outcome"] for r in ledger(project) if "knowledge" in r]
    assert sorted(outcomes) == ["acknowledged"] * 10 + ["blocked"] * 10 + ["repeat"] * 10
    session = json.loads((project / ".claude/governance/knowledge/sessions/sess-1.json")
                         .read_text())
    assert session["pending"] == {} and list(session["acks"]) == ["sop:deploy"]
