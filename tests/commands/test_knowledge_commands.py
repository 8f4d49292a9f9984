"""`governance memory`, `governance bypass` and `governance knowledge explain|stats|reindex` as a
user runs them: output, exit codes, files and ledger records; and how the agent's attempt to run
them is classified."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from governance.commands.cli import main
from governance.errors import PayloadError
from governance.knowledge import bypass, indexer
from governance.knowledge.memory import MemoryStore
from governance.policy.layer import GovernanceLayer
from tests.helpers import REPO, hook_command, install, run_command, set_state

NOTE = "Never run docker compose down -v on the shared box"
DOCKER_SOP = ("---\nmatch:\n  technologies: [docker]\n---\n# Docker deploys\n## Preflight\n"
              "Run docker compose config first.\n## Credentials\nRegistry login: 1Password.\n")
Capsys = pytest.CaptureFixture[str]


def sop(project: Path, name: str, text: str) -> None:
    folder = project / ".claude" / "sops"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.ai.sop").write_text(text)


def memories(project: Path, *items: tuple[str, list[str], float]) -> list[str]:
    with MemoryStore.for_project(str(project)) as store:
        return store.add_many([(t, c, conf, "test", None) for t, c, conf in items])[0]


def gov(capsys: Capsys, project: Path, *args: str) -> tuple[int, str, str]:
    """Run `governance ARGS --project PROJECT` in-process; (exit code, stdout, stderr)."""
    capsys.readouterr()
    try:
        code = main([*args, "--project", str(project)])
    except SystemExit as exc:                              # argparse rejected the arguments
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def as_json(capsys: Capsys, project: Path, *args: str) -> Any:
    code, out, err = gov(capsys, project, *args, "--json")
    assert code == 0, err
    return json.loads(out)


def ledger(project: Path, event: str | None = None) -> list[dict[str, Any]]:
    path = project / ".claude" / "governance" / "ledger.jsonl"
    found = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    return [r for r in found if event is None or r.get("event") == event]


def level(project: Path, name: str) -> None:
    path = project / ".claude" / "governance" / "knowledge.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"enforcement:\n  level: {name}\n")


# -- governance memory -----------------------------------------------------------------------------
def test_memory_add_stores_rebuilds_the_index_and_records(capsys: Capsys, project: Path) -> None:
    code, out, _ = gov(capsys, project, "memory", "add", NOTE, "--category", "gotchas",
                       "--category", "security", "--confidence", "0.9")
    added = re.match(r"Added (mem-[0-9a-f]{10})\nKnowledge index: 0 SOPs, 1 memories", out)
    assert code == 0 and added is not None
    memory_id = added.group(1)
    index, how = indexer.current(str(project))              # rebuilt already: the next call hits it
    index.close()
    assert how == "hit" and index.header["memories"] == 1
    record = ledger(project)[-1]
    assert (record["event"], record["change"], record["memories"], record["count"]) == (
        "KnowledgeChange", "memory-add", [memory_id], 1)
    code, out, _ = gov(capsys, project, "memory", "add", NOTE.upper(), "--category", "process")
    assert code == 0 and out.startswith("The same text is already a memory\n")
    result = as_json(capsys, project, "memory", "add", "Deploys go by train", "--category", "process")
    assert result["skipped"] == 0 and result["index"]["memories"] == 2
    shown = as_json(capsys, project, "memory", "show", memory_id)
    assert (shown["categories"], shown["confidence"], shown["source"]) == (
        ["gotchas", "security"], 0.9, "user")


@pytest.mark.parametrize(("args", "said"), [
    (["x", "--category", "nonsense"], "argument --category: invalid choice: 'nonsense'"),
    (["x"], "the following arguments are required: --category"),
    (["x", "--category", "process", "--confidence", "1.5"],
     "at key confidence: confidence must be a number from 0 to 1, got 1.5 Fix:"),
    (["x", "--category", "process", "--confidence", "-0.1"], "got -0.1"),
    (["   ", "--category", "process"], "at key text: a memory needs a text"),
])
def test_memory_add_rejects_bad_input(capsys: Capsys, project: Path, args: list[str],
                                      said: str) -> None:
    code, out, err = gov(capsys, project, "memory", "add", *args)
    assert code == 2 and said in err and out == ""
    assert not MemoryStore.exists(str(project)) and ledger(project) == []


def test_memory_list_show_and_rm(capsys: Capsys, project: Path) -> None:
    code, out, _ = gov(capsys, project, "memory", "list")
    assert code == 0 and out.startswith("No memories. Add one with: governance memory add")
    code, _, err = gov(capsys, project, "memory", "rm", "mem-0123456789")
    assert code == 2 and "no memory mem-0123456789 (the project has no memories)" in err
    gotcha, process, release = memories(
        project, (NOTE, ["gotchas"], 0.9), ("Lunch is at noon", ["process"], 0.4),
        ("Deploys go through the release train", ["process", "technical"], 0.6))
    code, out, _ = gov(capsys, project, "memory", "list")
    assert code == 0 and f"{gotcha}  " in out and "gotchas  confidence 0.90  source test" in out
    assert f"    {NOTE}\n" in out and "process,technical  confidence 0.60" in out
    listed = as_json(capsys, project, "memory", "list")
    assert {m["id"] for m in listed} == {gotcha, process, release}
    assert {m["text"]: m["confidence"] for m in listed}["Lunch is at noon"] == 0.4
    by_category = as_json(capsys, project, "memory", "list", "--category", "process")
    assert sorted(m["id"] for m in by_category) == sorted([process, release])
    searched = as_json(capsys, project, "memory", "list", "--search", "RELEASE")
    assert [m["id"] for m in searched] == [release]
    assert len(as_json(capsys, project, "memory", "list", "--limit", "1")) == 1
    code, out, _ = gov(capsys, project, "memory", "show", gotcha)
    assert code == 0 and out.startswith(f"{gotcha}  ") and NOTE in out
    shown = as_json(capsys, project, "memory", "show", gotcha)
    assert (shown["text"], shown["categories"], shown["confidence"]) == (NOTE, ["gotchas"], 0.9)
    code, _, err = gov(capsys, project, "memory", "show", "mem-nope")
    assert code == 2 and "no memory mem-nope Fix: see `governance memory list --decisions`" in err
    code, out, _ = gov(capsys, project, "memory", "rm", gotcha)
    assert code == 0 and out.startswith(f"Removed {gotcha}\nKnowledge index: 0 SOPs, 2 memories")
    record = ledger(project)[-1]
    assert (record["change"], record["memories"], record["count"]) == ("memory-rm", [gotcha], 1)
    assert gotcha not in gov(capsys, project, "memory", "list")[1]
    code, _, err = gov(capsys, project, "memory", "rm", gotcha)
    assert code == 2 and f"no memory {gotcha} Fix: see `governance memory list`" in err
    code, _, err = gov(capsys, project, "memory", "rm", "dec-0123456789")
    assert code == 2 and "memories made of reviewed decisions change with their reviews" in err
    assert len(ledger(project, "KnowledgeChange")) == 1


def test_memory_import_of_the_mcp_memory_server_and_our_format(capsys: Capsys, project: Path,
                                                              tmp_path: Path) -> None:
    mcp = tmp_path / "memory.jsonl"
    mcp.write_text("\n".join(json.dumps(x) for x in [
        {"type": "entity", "name": "gpu-box", "entityType": "host",
         "observations": ["runs ComfyUI on port 8188", "reboots break the NFS mount"]},
        {"type": "relation", "from": "shop-api", "to": "postgres", "relationType": "stores in"},
    ]) + "\n")
    code, out, _ = gov(capsys, project, "memory", "import", str(mcp), "--category", "technical",
                       "--confidence", "0.6")
    assert code == 0 and out.startswith(f"Imported 3 memories from {mcp} (0 already there)\n")
    record = ledger(project)[-1]
    assert (record["event"], record["change"], record["count"]) == ("KnowledgeChange",
                                                                    "memory-import", 3)
    listed = as_json(capsys, project, "memory", "list")
    assert sorted(m["text"] for m in listed) == [
        "gpu-box (host): reboots break the NFS mount", "gpu-box (host): runs ComfyUI on port 8188",
        "shop-api stores in postgres"]
    assert {(m["confidence"], tuple(m["categories"])) for m in listed} == {(0.6, ("technical",))}
    assert {m["source"] for m in listed} == {"mcp-memory:gpu-box", "mcp-memory:relation"}
    again = as_json(capsys, project, "memory", "import", str(mcp))
    assert (again["added"], again["skipped"]) == ([], 3)
    ours = tmp_path / "ours.jsonl"
    ours.write_text(json.dumps({"text": "Rotate the staging token monthly",
                                "categories": ["security"], "confidence": 0.85,
                                "source": "wiki", "created_at": "2026-01-02T03:04:05Z"}) + "\n")
    code, out, _ = gov(capsys, project, "memory", "import", str(ours))
    assert code == 0 and "Imported 1 memories" in out
    rotated = as_json(capsys, project, "memory", "list", "--search", "staging")
    assert [(m["source"], m["confidence"], m["created_at"]) for m in rotated] == [
        ("wiki", 0.85, "2026-01-02T03:04:05Z")]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "fine", "categories": ["process"]}\n{oops\n')
    code, _, err = gov(capsys, project, "memory", "import", str(bad))
    assert code == 2 and f"{bad}: line 2 is not JSON" in err
    code, _, err = gov(capsys, project, "memory", "import", str(mcp), "--confidence", "2")
    assert code == 2 and "confidence must be a number from 0 to 1, got 2.0" in err
    assert len(as_json(capsys, project, "memory", "list")) == 4   # the bad file added nothing


def test_export_round_trips_into_a_second_project(capsys: Capsys, project: Path,
                                                  tmp_path: Path) -> None:
    assert gov(capsys, project, "memory", "export") == (0, "", "")
    memories(project, (NOTE, ["gotchas", "security"], 0.95),
             ("Deploys go through the release train", ["process"], 0.6))
    code, out, _ = gov(capsys, project, "memory", "export")
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and [m["text"] for m in lines] == [NOTE, "Deploys go through the release train"]
    exported = tmp_path / "export.jsonl"
    code, said, _ = gov(capsys, project, "memory", "export", str(exported))
    assert code == 0 and said == f"Exported 2 memories to {exported}\n"
    assert exported.read_text() == out
    other = tmp_path / "billing" / "billing-api"
    (other / ".claude").mkdir(parents=True)
    code, said, _ = gov(capsys, other, "memory", "import", str(exported))
    assert code == 0 and said.startswith("Imported 2 memories")
    again = [json.loads(line) for line in gov(capsys, other, "memory", "export")[1].splitlines()]
    ids, new_ids = {m.pop("id") for m in lines}, {m.pop("id") for m in again}
    assert again == lines and ids.isdisjoint(new_ids)      # text, categories, confidence, source, time


def test_list_decisions_shows_a_reviewed_pattern(capsys: Capsys, project: Path) -> None:
    from governance.decisions.store import DecisionStore

    action = {"description": "switch the queue", "category": "architecture", "stakes": "medium",
              "confidence": 0.7, "reasons": [], "tags": [], "context": "",
              "pattern": "migrate queues with a dual-write window"}
    store = DecisionStore.for_project(str(project))
    try:
        for outcome in ("success", "failure"):
            store.review(store.record(action, "claude")["id"], outcome)
    finally:
        store.close()
    assert gov(capsys, project, "memory", "list")[1].startswith("No memories.")
    code, out, _ = gov(capsys, project, "memory", "list", "--decisions")
    found = re.search(r"^(dec-[0-9a-f]{10})  \S+  process  confidence 0\.50  "
                      r"source decisions:architecture$", out, re.M)
    assert code == 0 and found is not None
    assert ("    migrate queues with a dual-write window (reviewed decisions: 1 success, "
            "1 failure)") in out
    shown = as_json(capsys, project, "memory", "show", found.group(1))
    assert shown["confidence"] == 0.5 and shown["categories"] == ["process"]
    assert as_json(capsys, project, "memory", "list", "--decisions", "--category", "technical") == []


# -- governance bypass -----------------------------------------------------------------------------
def test_bypass_on_status_and_off(capsys: Capsys, project: Path) -> None:
    assert gov(capsys, project, "bypass") == (0, "No knowledge bypass is on.\n", "")
    done = subprocess.run([sys.executable, "-m", "governance.commands", "bypass", "--minutes", "30",
                           "--reason", "registry down", "--project", str(project)],
                          capture_output=True, text=True, cwd=REPO, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Knowledge bypass is on for 30 minutes")
    data = json.loads((project / ".claude/governance/knowledge/bypass.json").read_text())
    assert data["reason"] == "registry down" and 1790 < data["until"] - time.time() <= 1800
    assert bypass.active(str(project)) is not None
    [on] = ledger(project, "KnowledgeBypass")
    assert (on["bypass"], on["minutes"], on["reason"]) == ("on", 30, "registry down")
    code, out, _ = gov(capsys, project, "bypass")
    assert code == 0 and re.fullmatch(
        r"Knowledge bypass is on for (29\.\d|30\.0) more minutes: registry down\n", out)
    assert gov(capsys, project, "bypass", "--off") == (0, "Knowledge bypass is off.\n", "")
    assert not (project / ".claude/governance/knowledge/bypass.json").exists()
    assert gov(capsys, project, "bypass") == (0, "No knowledge bypass is on.\n", "")
    assert gov(capsys, project, "bypass", "--off")[1] == "No knowledge bypass was on.\n"
    records = ledger(project, "KnowledgeBypass")
    assert [(r["bypass"], r.get("was_on")) for r in records] == [
        ("on", None), ("off", True), ("off", False)]


@pytest.mark.parametrize(("args", "said"), [
    (["--minutes", "30"], "a bypass needs a reason Fix: add --reason"),
    (["--minutes", "30", "--reason", "  "], "a bypass needs a reason"),
    (["--minutes", "0", "--reason", "x"], "--minutes must be from 1 to 1440, got 0 Fix:"),
    (["--minutes", "2000", "--reason", "x"], "--minutes must be from 1 to 1440, got 2000"),
    (["--off", "--minutes", "5", "--reason", "x"], "give either --minutes or --off"),
])
def test_bypass_rejects_bad_options(capsys: Capsys, project: Path, args: list[str],
                                    said: str) -> None:
    code, out, err = gov(capsys, project, "bypass", *args)
    assert code == 1 and out == "" and said in err
    assert bypass.active(str(project)) is None and ledger(project) == []


# -- governance knowledge --------------------------------------------------------------------------
def test_reindex_prints_counts_and_fails_on_a_malformed_sop(capsys: Capsys, project: Path) -> None:
    sop(project, "deploy", DOCKER_SOP)
    memories(project, (NOTE, ["gotchas"], 0.9))
    code, out, _ = gov(capsys, project, "knowledge", "reindex")
    assert code == 0 and "error:" not in out
    assert re.match(r"Knowledge index: 1 SOPs, 1 memories, \d+ keys, \d+ bytes in [\d.]+ s\n$", out)
    summary = as_json(capsys, project, "knowledge", "reindex")
    assert (summary["sops"], summary["memories"], summary["problems"]) == (1, 1, [])
    sop(project, "broken", "---\nmatch: [\n---\n## Gotchas\nx\n")
    code, out, _ = gov(capsys, project, "knowledge", "reindex")
    assert code == 1 and "Knowledge index: 1 SOPs, 1 memories" in out
    errors = [line for line in out.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "broken.ai.sop" in errors[0] and "not valid YAML" in errors[0]


def test_explain_names_sop_detector_memory_and_what_each_level_would_do(
        capsys: Capsys, project: Path) -> None:
    sop(project, "deploy", DOCKER_SOP)
    [memory_id] = memories(project, (NOTE, ["gotchas"], 0.9))
    call = 'Bash {"command": "docker compose up"}'
    code, out, _ = gov(capsys, project, "knowledge", "explain", call)
    assert code == 0 and re.search(r"^  technology docker\s+by the word 'docker'$", out, re.M)
    assert f"  deploy ({project}/.claude/sops/deploy.ai.sop): credentials, preflight" in out
    assert "      applies because of: technology docker" in out
    assert f"  {memory_id} confidence 0.90 (gotchas) shares: " in out and f"      {NOTE}" in out
    assert "knowledge level: advisory" in out
    assert out.endswith("Would:     inject into the model's context (advisory)\n")
    out = gov(capsys, project, "knowledge", "explain", 'Bash {"command": "ls -la"}')[1]
    assert out.endswith("SOPs:      none apply\nMemories:  none apply\n"
                        "Would:     none: no SOP or memory applies\n")
    level(project, "strict")
    code, out, _ = gov(capsys, project, "knowledge", "explain", call)
    assert code == 0 and "knowledge level: strict" in out
    assert out.endswith(
        "Would:     block once (strict): the retry of the same call acknowledges it\n")
    result = as_json(capsys, project, "knowledge", "explain", call)
    assert result["level"] == "strict" and result["tool"] == "Bash"
    assert result["detected_by"]["technology docker"] == "the word 'docker'"
    assert [(s["name"], s["why"]) for s in result["sops"]] == [("deploy", ["technology docker"])]
    assert [(m["id"], m["confidence"]) for m in result["memories"]] == [(memory_id, 0.9)]
    assert result["would"].startswith("block once (strict)") and "docker" in result["commands"]
    denied = 'Bash {"command": "docker compose down -v && git push --force"}'
    code, out, _ = gov(capsys, project, "knowledge", "explain", denied, "--state", "DO")
    assert code == 0 and "Would:     none: the matrix denies this call" in out


@pytest.mark.parametrize(("call", "said"), [
    ("Bash {not json", "the call's input is not JSON"),
    ("Bash [1]", "give a tool name and a JSON object"),
])
def test_explain_rejects_a_bad_call(capsys: Capsys, project: Path, call: str, said: str) -> None:
    code, out, err = gov(capsys, project, "knowledge", "explain", call)
    assert code == PayloadError.exit_code and out == ""
    assert said in err and "Fix: " in err and "Traceback" not in err
    code, _, err = gov(capsys, project, "knowledge", "explain", "Bash {}", "--state", "NOPE")
    assert code == PayloadError.exit_code and "unknown state 'NOPE'" in err


def test_stats_from_calls_through_the_installed_hook(capsys: Capsys, project: Path) -> None:
    install(project)
    set_state(project, "implementation-cycle/DO")
    sop(project, "deploy", DOCKER_SOP)
    level(project, "strict")
    pre = hook_command(project, "PreToolUse")

    def hook(command: str, session: str) -> bool:
        """Whether the installed PreToolUse hook denies the call."""
        done = run_command(pre, json.dumps({
            "session_id": session, "transcript_path": "/dev/null", "cwd": str(project),
            "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": "toolu_1",
            "tool_input": {"command": command}, "permission_mode": "default"}))
        assert done.returncode == 0, done.stderr
        answer: dict[str, Any] = json.loads(done.stdout)["hookSpecificOutput"]
        return answer.get("permissionDecision") == "deny"

    assert hook("docker compose up", "s1")                 # blocked (index built)
    assert not hook("docker compose up", "s1")             # the retry acknowledges (hit)
    assert not hook("docker ps", "s1")                     # acknowledged: a repeat (hit)
    level(project, "advisory")
    assert not hook("docker compose up", "s2")             # injected (built again)
    result = as_json(capsys, project, "knowledge", "stats")
    assert {k: result[k] for k in ("consulted", "with_knowledge", "injected", "blocked",
                                   "acknowledged", "repeat", "errors")} == {
        "consulted": 4, "with_knowledge": 4, "injected": 1, "blocked": 1, "acknowledged": 1,
        "repeat": 1, "errors": 0}
    assert (result["acknowledgment_rate"], result["cache_hit_rate"]) == (1.0, 0.5)
    assert result["cache"] == {"hit": 2, "built": 2, "stale": 0} and result["sops"] == {"deploy": 4}
    times = result["lookup_ms"]
    assert 0 < times["p50"] <= times["p95"] <= times["p99"]
    code, out, _ = gov(capsys, project, "knowledge", "stats")
    assert code == 0 and "Calls consulted:     4  (with knowledge: 4)" in out
    assert "Injected (advisory): 1   repeats not shown again: 1" in out
    assert "Blocked (strict):    1   acknowledged: 1   rate: 100%   ignored: 0" in out
    assert "Index:               2 hits, 2 rebuilt, 0 stale   hit rate 50%" in out
    assert re.search(r"Lookup time:\s+p50 [\d.]+ ms  p95 [\d.]+ ms  p99 [\d.]+ ms", out)
    assert "  SOP deploy: 4 calls" in out


# -- how the agent's attempt to run them is classified ---------------------------------------------
@pytest.mark.parametrize(("command", "primitive"), [
    ("governance bypass --minutes 5 --reason x", "governance-admin"),
    ("governance memory add x --category process", "governance-admin"),
    ("governance memory rm mem-1", "governance-admin"),
    ("governance memory import f.jsonl", "governance-admin"),
    ("echo x > .claude/sops/a.ai.sop", "governance-admin"),
    ("governance memory list", "shell-read"),
    ("""governance knowledge explain 'Bash {"command": "ls"}'""", "shell-read"),
    ("governance knowledge stats", "shell-read"),
])
def test_the_agents_knowledge_commands_are_classified(capsys: Capsys, project: Path, command: str,
                                                      primitive: str) -> None:
    decision = GovernanceLayer(str(project)).decide("Bash", {"command": command}, str(project))
    assert decision.primitive == primitive
    assert decision.denies == (primitive == "governance-admin")
    assert decision.action == ("block" if decision.denies else "allow")
    explained = as_json(capsys, project, "explain-command", command)
    assert primitive in [a["primitive"] for a in explained["acts"]]
    assert explained["decision"]["action"] == decision.action
