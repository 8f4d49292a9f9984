"""Consulting knowledge (``lookup.consult``, ``enforcement``): the levels, acknowledgment by
retry, cooldowns, the bypass, and what reaches the ledger."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from governance.knowledge import bypass
from governance.knowledge.enforcement import apply
from governance.knowledge.lookup import Outcome
from governance.policy.layer import GovernanceLayer
from tests.knowledge.test_lookup import DOCKER_SOP, memories, sop

NOW = 1_800_000_000.0


def level(project: Path, text: str) -> None:
    path = project / ".claude" / "governance" / "knowledge.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def call(project: Path, command: str, session: str = "s1", now: float = NOW) -> Outcome | None:
    data: dict[str, Any] = {"tool_name": "Bash", "tool_input": {"command": command},
                            "cwd": str(project)}
    decision = GovernanceLayer(str(project)).decide("Bash", data["tool_input"], str(project))
    return apply(str(project), session, data, decision, now=now)


def outcome(result: Outcome | None) -> str | None:
    return None if result is None else result.record.get("outcome")


def test_no_knowledge_no_outcome(project: Path) -> None:
    assert call(project, "docker ps") is None


def test_advisory_injects_once_per_cooldown(project: Path) -> None:
    sop(project, "deploy", DOCKER_SOP)
    first = call(project, "docker compose up")
    assert first is not None and not first.deny and outcome(first) == "injected"
    assert "SOP deploy: Docker deploys" in first.context
    assert "Run docker compose config first." in first.context
    assert "Registry login: 1Password" in first.context
    assert outcome(call(project, "docker ps", now=NOW + 60)) == "repeat"
    assert outcome(call(project, "docker ps", session="other", now=NOW + 60)) == "injected"
    assert outcome(call(project, "docker ps", now=NOW + 5 * 60 + 1)) == "injected"


def test_strict_blocks_once_and_the_retry_acknowledges(project: Path) -> None:
    sop(project, "deploy", DOCKER_SOP)
    level(project, "enforcement:\n  level: strict\n")
    first = call(project, "docker compose up")
    assert first is not None and first.deny and outcome(first) == "blocked"
    assert "retry exactly the same call within 5 minutes" in first.reason
    assert "Run docker compose config first." in first.reason
    assert first.record["items"] == ["sop:deploy"]
    retry = call(project, "docker compose up", now=NOW + 30)
    assert retry is not None and not retry.deny and outcome(retry) == "acknowledged"
    assert retry.record["acknowledged"] == ["sop:deploy"]
    other = call(project, "docker ps", now=NOW + 60)          # same SOP, other call: passes
    assert other is not None and not other.deny and outcome(other) == "repeat"
    expired = call(project, "docker ps", now=NOW + 30 + 5 * 60 + 1)
    assert expired is not None and expired.deny                # the cooldown is over


def test_a_different_call_does_not_acknowledge(project: Path) -> None:
    sop(project, "deploy", DOCKER_SOP)
    level(project, "enforcement:\n  level: strict\n")
    assert call(project, "docker compose up").deny  # type: ignore[union-attr]
    assert call(project, "docker compose up -d", now=NOW + 10).deny  # type: ignore[union-attr]


def test_an_unretried_block_is_recorded_as_ignored(project: Path) -> None:
    sop(project, "deploy", DOCKER_SOP)
    level(project, "enforcement:\n  level: strict\n  cooldown_minutes: 1\n")
    assert call(project, "docker compose up").deny  # type: ignore[union-attr]
    later = call(project, "ls", now=NOW + 61)
    assert later is None or later.ignored == []    # ls has no knowledge: nothing consulted
    later = call(project, "docker ps", now=NOW + 62)
    assert later is not None and [i["items"] for i in later.ignored] == [["sop:deploy"]]
    assert later.ignored[0]["event"] == "KnowledgeIgnored"
    assert later.deny


def test_category_level(project: Path) -> None:
    level(project, "enforcement:\n  level: category\n  categories: {security: strict}\n")
    memories(project, ("docker socket access is root access", ["security"], 0.9),
             ("docker images are pulled from registry.internal", ["technical"], 0.9))
    first = call(project, "docker run --rm alpine")
    assert first is not None and first.deny
    assert first.record["items"][0].startswith("mem:mem-")
    assert "docker socket access is root access" in first.reason
    assert "confidence 0.90" in first.reason
    level(project, "enforcement:\n  level: category\n  categories: {security: advisory}\n")
    second = call(project, "docker run --rm alpine", session="s2")
    assert second is not None and not second.deny and outcome(second) == "injected"


def test_disabled_means_no_lookup(project: Path) -> None:
    sop(project, "deploy", DOCKER_SOP)
    level(project, "enforcement:\n  level: disabled\n")
    assert call(project, "docker compose up") is None


def test_the_bypass_shows_without_blocking_until_it_expires(project: Path) -> None:
    sop(project, "deploy", DOCKER_SOP)
    level(project, "enforcement:\n  level: strict\n")
    bypass.switch_on(str(project), 30, "registry outage", "me")
    now = time.time()
    held = call(project, "docker compose up", now=now)
    assert held is not None and not held.deny and outcome(held) == "bypassed"
    assert held.record["bypass"]["reason"] == "registry outage"
    assert "Run docker compose config first." in held.context
    after = call(project, "docker compose up", session="s2", now=now + 31 * 60)
    assert after is not None and after.deny
    assert bypass.switch_off(str(project)) and not bypass.switch_off(str(project))


def test_credentials_reach_the_model_but_not_the_record(project: Path) -> None:
    sop(project, "deploy", DOCKER_SOP)
    memories(project, ("docker registry password lives in vault item infra/registry",
                       ["credentials"], 0.9))
    result = call(project, "docker compose up")
    assert result is not None
    assert "vault infra" in result.context and "infra/registry" in result.context
    assert "vault" not in repr(result.record) and "1Password" not in repr(result.record)


def test_max_chars_clips_the_text(project: Path) -> None:
    sop(project, "deploy", DOCKER_SOP.replace("Run docker compose config first.", "x" * 5000))
    level(project, "enforcement:\n  max_chars: 300\n")
    result = call(project, "docker ps")
    assert result is not None and len(result.context) <= 300
    assert result.context.endswith("[... knowledge clipped]")


@pytest.mark.parametrize("minutes", [0, -1, 100000])
def test_a_bad_cooldown_is_a_config_error(project: Path, minutes: int) -> None:
    from governance.errors import ConfigError

    sop(project, "deploy", DOCKER_SOP)
    level(project, f"enforcement:\n  cooldown_minutes: {minutes}\n")
    with pytest.raises(ConfigError, match="cooldown_minutes"):
        call(project, "docker ps")
