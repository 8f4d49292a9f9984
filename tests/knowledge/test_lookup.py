"""The knowledge index (``knowledge.indexer`` builds it, ``knowledge.lookup`` reads it) and the
lookup of what applies to a call (``knowledge.lookup``)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from governance.knowledge import indexer, lookup
from governance.knowledge.indexer import build, rebuild
from governance.knowledge.lookup import Index, bucket_of, stem, terms
from governance.knowledge.memory import MemoryStore

DOCKER_SOP = """---
match:
  technologies: [docker]
  hosts: ["deploy-*.internal"]
---
# Docker deploys
## Preflight
Run docker compose config first.
## Credentials
Registry login: 1Password, vault infra.
"""


def sop(project: Path, name: str, text: str) -> Path:
    folder = project / ".claude" / "sops"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.ai.sop"
    path.write_text(text)
    return path


def memories(project: Path, *items: tuple[str, list[str], float]) -> list[str]:
    with MemoryStore.for_project(str(project)) as store:
        added, _ = store.add_many([(t, c, conf, "test", None) for t, c, conf in items])
    return added


def find(project: Path, tool: str, tool_input: dict[str, Any], primitive: str = "shell-execute",
         state: str = "DO") -> lookup.Found:
    index, _ = indexer.current(str(project))
    segment = tool_input.get("command")
    acts = [{"primitive": primitive, "segment": segment}] if segment else []
    try:
        return lookup.find(index, str(project), tool, tool_input, str(project), acts, {primitive},
                           state, explain=True)
    finally:
        index.close()


def test_terms_are_stemmed_split_and_free_of_stop_words() -> None:
    assert terms("Deploying the shop-api to 10.0.0.163") == {
        "deploy", "shop-api", "shop", "api", "10.0.0.163", "163"}
    assert stem("truncated") == stem("truncate") == "truncat"
    assert stem("deploys") == stem("deployed") == "deploy"
    assert terms("a -v x") == set()


def test_bucket_hash_is_stable_across_processes() -> None:
    assert bucket_of("k:technology:docker", 1 << 20) == bucket_of("k:technology:docker", 1 << 20)
    assert bucket_of("", 7) == 0x811C9DC5 % 7


def test_an_empty_project_builds_an_empty_index(project: Path) -> None:
    data, summary = build(str(project))
    index = Index.of_bytes(data)
    assert index.header["empty"] and summary["sops"] == summary["memories"] == 0
    assert not find(project, "Bash", {"command": "docker compose up"})


def test_an_sop_is_found_by_a_detected_technology_and_a_host_glob(project: Path) -> None:
    sop(project, "deploy", DOCKER_SOP)
    found = find(project, "Bash", {"command": "docker compose up -d"})
    assert [s["name"] for s in found.sops] == ["deploy"]
    assert found.sops[0]["why"] == ["technology docker"]
    assert found.why["technology docker"] == "the word 'docker'"
    found = find(project, "Bash", {"command": "ssh deploy-3.internal uptime"})
    assert [s["why"] for s in found.sops] == [["the host deploy-3.internal (deploy-*.internal)"]]
    assert not find(project, "Bash", {"command": "ls -la"})


def test_an_sop_without_match_applies_by_its_file_name(project: Path) -> None:
    sop(project, "docker", "## Gotchas\nNever down -v.\n")
    sop(project, "docker-deploy", "## Gotchas\nNot by its parts.\n")
    sop(project, "shop-api", "## Preflight\nRun just test.\n")
    names = [s["name"] for s in find(project, "Bash", {"command": "docker ps"}).sops]
    assert names == ["docker", "shop-api"]           # shop-api: the project folder
    names = [s["name"] for s in find(project, "Read", {"file_path": "/etc/hosts"}).sops]
    assert names == ["shop-api"]


def user_sop(name: str, text: str) -> Path:
    folder = Path(os.environ["HOME"]) / ".claude" / "sops"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.ai.sop"
    path.write_text(text)
    return path


def named_project(tmp_path: Path, name: str) -> Path:
    root = tmp_path / name
    (root / ".claude").mkdir(parents=True)
    return root.resolve()


@pytest.mark.parametrize(("sop_name", "folder", "applies"), [
    ("shop-api", "shop-api", True),
    ("shop-api", "shop", False),           # not by the parts of the file name ...
    ("shop-api", "api", False),
    ("shop", "shop-api", False),           # ... nor by the parts of the folder's name
    ("billing-api-v2", "billing-api-v2", True),   # a name of many words matches as a whole
    ("billing-api-v2", "billing-api", False),
    ("billing_api.v2", "billing_api.v2", True),
    ("billing_api.v2", "billing", False),
    ("shop-api", "Shop-API", True),        # names are compared in lower case
])
def test_a_file_name_matches_a_whole_name(tmp_path: Path, sop_name: str, folder: str,
                                          applies: bool) -> None:
    user_sop(sop_name, "## Preflight\nRun just test.\n")   # the user's SOPs serve every project
    project = named_project(tmp_path, folder)
    names = [s["name"] for s in find(project, "Read", {"file_path": "/etc/hosts"}).sops]
    assert names == ([sop_name] if applies else [])


def test_a_file_name_matches_a_whole_detected_name(project: Path) -> None:
    (project / ".claude" / "governance").mkdir(parents=True)
    (project / ".claude" / "governance" / "knowledge.yaml").write_text(
        "detectors:\n  - {kind: service, name: payments-api, words: [payctl]}\n")
    sop(project, "payments-api", "## Gotchas\nThe service.\n")
    sop(project, "payments", "## Gotchas\nNot the service's first part.\n")
    sop(project, "kubernetes-upgrade", "## Gotchas\nNot the technology kubernetes.\n")
    found = find(project, "Bash", {"command": "payctl status"})
    assert [s["name"] for s in found.sops] == ["payments-api"]
    assert found.sops[0]["why"] == ["service payments-api"]
    assert not find(project, "Bash", {"command": "kubectl get pods"}).sops


def test_command_entries_need_all_their_words(project: Path) -> None:
    sop(project, "down", "---\nmatch:\n  commands: [docker compose down]\n---\n## Gotchas\nx\n")
    assert find(project, "Bash", {"command": "docker compose down"}).sops
    assert not find(project, "Bash", {"command": "docker compose up"}).sops


@pytest.mark.parametrize(("entry", "command", "applies"), [
    ("docker-compose", "docker-compose up -d", True),
    ("docker-compose", "docker compose up -d", False),
    ("docker", "docker-compose up -d", False),     # a command word matches as a whole word
    ("compose", "docker-compose up -d", False),
    ("docker compose", "/usr/local/bin/docker compose up", True),   # a program by its base name
    ("Docker Compose", "docker compose up", True),
    ("pg_dump", "pg_dump -Fc shop", True),
    ("pg", "pg_dump -Fc shop", False),
    ("deploy", "deploying now", False),             # no stemming of command words
])
def test_command_entries_match_whole_words(project: Path, entry: str, command: str,
                                           applies: bool) -> None:
    sop(project, "cmd", f"---\nmatch:\n  commands: ['{entry}']\n---\n## Gotchas\nx\n")
    assert bool(find(project, "Bash", {"command": command}).sops) is applies


def test_tools_and_path_globs(project: Path) -> None:
    sop(project, "github", "---\nmatch:\n  tools: ['mcp__github__*']\n---\n## Gotchas\nx\n")
    sop(project, "migrations", "---\nmatch:\n  paths: ['migrations/*']\n---\n## Preflight\nx\n")
    assert [s["name"] for s in find(project, "mcp__github__create_issue", {}).sops] == ["github"]
    found = find(project, "Edit", {"file_path": str(project / "migrations" / "0042.py")},
                 primitive="file-write")
    assert [s["name"] for s in found.sops] == ["migrations"]


def test_memories_need_two_shared_words_or_a_detected_name(project: Path) -> None:
    memories(project,
             ("Never run docker compose down -v on the shared box", ["gotchas"], 0.9),
             ("The payments table must never be truncated", ["process"], 0.9),
             ("Lunch is at noon", ["process"], 0.9))
    found = find(project, "Bash", {"command": "docker ps"})
    assert [m["text"] for m in found.memories] == [
        "Never run docker compose down -v on the shared box"]
    found = find(project, "Bash", {"command": "psql -c 'TRUNCATE payments'"},
                 primitive="shell-execute", state="DO")
    assert [m["text"] for m in found.memories] == ["The payments table must never be truncated"]
    assert sorted(found.memories[0]["why"]) == ["payment", "truncat"]
    assert not find(project, "Bash", {"command": "ls payments"}).memories   # one word: not enough


def test_the_threshold_follows_the_calls_risk(project: Path) -> None:
    memories(project, ("docker volumes hold the team data", ["gotchas"], 0.6))
    assert find(project, "Bash", {"command": "docker volume ls"}, state="DO").memories  # routine
    found = find(project, "Bash", {"command": "docker volume rm x"}, primitive="destructive")
    assert found.risk == "critical" and found.threshold == 0.8 and not found.memories
    found = find(project, "Bash", {"command": "docker deploy x"})              # a critical word
    assert found.risk == "critical"
    found = find(project, "Bash", {"command": "docker volume ls"}, state="EXPLORE")
    assert found.risk == "experimental" and found.memories


def test_max_memories_keeps_the_best_then_most_confident(project: Path) -> None:
    memories(project, *((f"docker note {i}", ["technical"], 0.5 + i / 100) for i in range(9)))
    found = find(project, "Bash", {"command": "docker ps"})
    assert [m["confidence"] for m in found.memories] == pytest.approx([0.58, 0.57, 0.56, 0.55, 0.54])


def test_a_changed_sop_or_setting_rebuilds_on_the_next_lookup(project: Path) -> None:
    path = sop(project, "deploy", DOCKER_SOP)
    assert indexer.current(str(project))[1] == "built"
    assert indexer.current(str(project))[1] == "hit"
    time.sleep(0.01)
    path.write_text(DOCKER_SOP.replace("docker]", "podman]"))
    index, how = indexer.current(str(project))
    index.close()
    assert how == "built"
    assert not find(project, "Bash", {"command": "docker ps"}).sops
    override = project / ".claude" / "governance" / "knowledge.yaml"
    override.write_text("enforcement:\n  level: strict\n")
    index, how = indexer.current(str(project))
    assert how == "built" and index.header["settings"]["level"] == "strict"
    index.close()


def test_a_large_store_that_changed_is_brought_up_to_date_in_the_background(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The background process adds the new memory in a delta (knowledge.increment), then
    removes its marker (a moment after the index is published: both are waited for)."""
    memories(project, ("docker note", ["technical"], 0.9))
    rebuild(str(project))
    monkeypatch.setattr(lookup, "SYNC_MEMORIES", 1)
    memories(project, ("another docker note", ["technical"], 0.9))
    index, how = indexer.current(str(project))
    index.close()
    assert how == "stale"
    marker = Path(lookup.path(str(project)) + ".building")
    deadline = time.time() + 30
    while time.time() < deadline:
        index, how = indexer.current(str(project))
        added = index.delta.header["memories"] if index.delta is not None else 0
        index.close()
        if how == "hit" and not marker.exists():
            break
        time.sleep(0.1)
    assert how == "hit"
    assert not marker.exists()
    assert index.header["memories"] + added == 2


def test_a_broken_sop_is_reported_and_the_rest_still_serve(project: Path) -> None:
    sop(project, "deploy", DOCKER_SOP)
    sop(project, "broken", "---\nmatch: [\n---\n## Gotchas\nx\n")
    _index, summary = rebuild(str(project))
    assert len(summary["problems"]) == 1 and "broken.ai.sop" in summary["problems"][0]
    assert [s["name"] for s in find(project, "Bash", {"command": "docker ps"}).sops] == ["deploy"]


def test_common_terms_are_dropped_and_postings_capped(project: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from governance.knowledge import indexer

    monkeypatch.setattr(indexer, "COMMON_MIN", 10)
    memories(project, *((f"service {i} restarts nightly", ["technical"], 0.9)
                        for i in range(300)))
    _index, summary = rebuild(str(project))
    assert summary["common_terms"] >= 3            # service, restart, nightly
    assert not find(project, "Bash", {"command": "systemctl restart service"}).memories


def test_the_index_survives_a_read_only_project(project: Path) -> None:
    sop(project, "deploy", DOCKER_SOP)
    cache = project / ".claude" / "governance" / ".cache"
    cache.mkdir(parents=True)
    os.chmod(cache, 0o500)
    try:
        if os.access(cache, os.W_OK):
            pytest.skip("running as a user who can write anywhere")
        index, summary = rebuild(str(project))
        assert "not_stored" in summary and index.header["sops"] == 1
    finally:
        os.chmod(cache, 0o700)


def test_an_unwatched_sop_edited_in_place_is_rebuilt_before_it_is_shown(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from governance.knowledge import indexer as indexer_module
    from governance.knowledge.enforcement import apply
    from governance.policy.layer import GovernanceLayer

    monkeypatch.setattr(indexer_module, "WATCH_MAX", 0)      # as with more than 200 SOPs
    path = sop(project, "deploy", DOCKER_SOP)
    rebuild(str(project))
    time.sleep(0.01)
    path.write_text(DOCKER_SOP.replace("Run docker compose config first.", "Ask in #deploys."))
    index, how = indexer.current(str(project))
    index.close()
    assert how == "hit"                 # the folder did not change: the index looks current
    data: dict[str, Any] = {"tool_name": "Bash", "tool_input": {"command": "docker ps"},
                            "cwd": str(project)}
    decision = GovernanceLayer(str(project)).decide("Bash", data["tool_input"], str(project))
    outcome = apply(str(project), "s1", data, decision)
    assert outcome is not None and outcome.record["cache"] == "built"
    assert "Ask in #deploys." in outcome.context
