"""Knowledge in the real Claude Code: a strict SOP holds the model's first `docker compose up`
with the SOP in the reason and lets its retry run; an advisory SOP reaches the model in the next
request. The SOP is the shipped example (examples/sops/docker-deploy.ai.sop)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from claude_runner import ClaudeRunner
from fake_api import Text, ToolUse
from test_scenarios import DO, REPO, decisions, denied_ids, governed, tool_use_ids

COMMAND = "docker compose up -d 2>/dev/null; touch compose-ran"


def with_sop(project: Path, level: str) -> None:
    governed(project, DO)
    folder = project / ".claude" / "sops"
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "examples" / "sops" / "docker-deploy.ai.sop", folder)
    (project / ".claude" / "governance" / "knowledge.yaml").write_text(
        f"enforcement:\n  level: {level}\n")


def test_strict_sop_holds_the_first_call_and_the_retry_runs(claude: ClaudeRunner,
                                                            project: Path) -> None:
    with_sop(project, "strict")
    run = claude.run(project, "strict knowledge", [
        [ToolUse("Bash", {"command": COMMAND, "description": "start the stack"})],
        [ToolUse("Bash", {"command": COMMAND, "description": "start the stack"})],
        [Text("done")],
    ])
    assert run.returncode == 0, run.stderr[-2000:]
    first, retry = tool_use_ids(run, "Bash")
    assert first in denied_ids(run) and retry not in denied_ids(run)
    held = run.log.tool_result(first)
    said = json.dumps(held["content"])
    assert held["is_error"] is True
    assert "retry exactly the same call within 5 minutes" in said, said
    assert "docker compose config --quiet" in said and "Never `docker compose down -v`" in said
    assert (project / "compose-ran").exists()
    recorded = decisions(project)
    assert recorded[first]["knowledge"]["outcome"] == "blocked"
    assert recorded[retry]["knowledge"]["outcome"] == "acknowledged"
    assert recorded[retry]["knowledge"]["acknowledged"] == ["sop:docker-deploy"]


def test_advisory_sop_is_in_the_next_request(claude: ClaudeRunner, project: Path) -> None:
    with_sop(project, "advisory")
    run = claude.run(project, "advisory knowledge", [
        [ToolUse("Bash", {"command": COMMAND, "description": "start the stack"})],
        [Text("done")],
    ])
    assert run.returncode == 0, run.stderr[-2000:]
    (bash,) = tool_use_ids(run, "Bash")
    assert bash not in denied_ids(run)
    assert (project / "compose-ran").exists()
    text = run.log.text_after(bash)
    assert "[KNOWLEDGE] for this call" in text, text[-3000:]
    assert "SOP docker-deploy: Deploying the stack with Docker Compose" in text
    assert "Registry login: 1Password" in text
    assert decisions(project)[bash]["knowledge"]["outcome"] == "injected"
