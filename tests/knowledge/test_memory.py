"""``governance.knowledge.memory``: the memory store, imports, and reviewed decisions as memories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from governance.knowledge.memory import (
    MemoryInputError,
    MemoryStore,
    check,
    decision_memories,
    export_lines,
    read_import,
)


def test_add_get_list_remove(project: Path) -> None:
    with MemoryStore.for_project(str(project)) as store:
        first = store.add("Never run docker compose down -v on the shared box", ["gotchas"], 0.9,
                          "user")
        assert first is not None and first.startswith("mem-") and len(first) == 14
        again = store.add("never run  DOCKER compose down -v on the shared box", ["gotchas"], 0.5,
                          "user")
        assert again is None                                    # the same words: stored once
        second = store.add("Deploys go through the release train", ["process"], 0.6, "user")
        assert store.count() == 2
        got = store.get(first)
        assert got is not None and got.confidence == 0.9 and got.categories == ["gotchas"]
        assert [m.id for m in store.list(category="process")] == [second]
        assert [m.id for m in store.list(text="release")] == [second]
        assert store.remove(first) and not store.remove(first)
        assert store.count() == 1
    assert (Path(project) / ".claude/governance/knowledge.db").stat().st_mode & 0o077 == 0


@pytest.mark.parametrize(("text", "categories", "confidence", "key"), [
    ("", ["process"], 0.5, "text"),
    ("x" * 2001, ["process"], 0.5, "text"),
    ("ok", ["nonsense"], 0.5, "categories"),
    ("ok", [], 0.5, "categories"),
    ("ok", ["process"], 1.5, "confidence"),
    ("ok", ["process"], True, "confidence"),
])
def test_check_names_the_bad_field(text: str, categories: list[str], confidence: object,
                                   key: str) -> None:
    with pytest.raises(MemoryInputError) as caught:
        check(text, categories, confidence)
    assert caught.value.key == key and caught.value.fix


def test_import_our_export_and_the_mcp_memory_format(project: Path, tmp_path: Path) -> None:
    ours = tmp_path / "export.jsonl"
    ours.write_text(json.dumps({"text": "Rotate the staging token monthly",
                                "categories": ["security"], "confidence": 0.85,
                                "source": "wiki", "created_at": "2026-01-02T03:04:05Z"}) + "\n")
    mcp = tmp_path / "memory.jsonl"
    mcp.write_text("\n".join(json.dumps(x) for x in [
        {"type": "entity", "name": "gpu-box", "entityType": "host",
         "observations": ["runs ComfyUI on port 8188", "reboots break the NFS mount"]},
        {"type": "relation", "from": "shop-api", "to": "postgres", "relationType": "stores in"},
    ]) + "\n")
    items = read_import(str(ours), None, None)
    assert items == [("Rotate the staging token monthly", ["security"], 0.85, "wiki",
                      pytest.approx(1767323045.0))]
    items = read_import(str(mcp), ["technical"], 0.6)
    assert [i[0] for i in items] == ["gpu-box (host): runs ComfyUI on port 8188",
                                     "gpu-box (host): reboots break the NFS mount",
                                     "shop-api stores in postgres"]
    assert {i[2] for i in items} == {0.6}
    with MemoryStore.for_project(str(project)) as store:
        assert len(store.add_many(items)[0]) == 3
        assert store.add_many(items) == ([], 3)                  # importing again adds nothing
        exported = [json.loads(line) for line in export_lines(store)]
    assert exported[0]["text"] == "gpu-box (host): runs ComfyUI on port 8188"


@pytest.mark.parametrize(("line", "said"), [
    ("not json", "line 1 is not JSON"),
    ("[1, 2]", "line 1 is not a JSON object"),
    ('{"type": "entity", "name": "x"}', "needs a name and a list of observations"),
    ('{"foo": 1}', "neither a memory"),
    ('{"text": "ok", "confidence": 7}', "confidence must be"),
])
def test_a_bad_import_line_names_the_file_and_line(tmp_path: Path, line: str, said: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(MemoryInputError) as caught:
        read_import(str(path), None, None)
    assert said in caught.value.render() and str(path) in caught.value.render()


def test_a_missing_import_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(MemoryInputError, match="no such file"):
        read_import(str(tmp_path / "nope.jsonl"), None, None)


def test_reviewed_decisions_become_memories_with_confidence_from_outcomes(project: Path) -> None:
    from governance.decisions.store import DecisionStore

    action = {"description": "switch the queue", "category": "architecture", "stakes": "medium",
              "confidence": 0.7, "reasons": [], "tags": [], "context": "",
              "pattern": "migrate queues with a dual-write window"}
    store = DecisionStore.for_project(str(project))
    try:
        ids = [store.record(action, "claude")["id"] for _ in range(4)]
        for decision_id, outcome in zip(ids, ("success", "success", "partial", "abandoned"),
                                        strict=True):
            store.review(decision_id, outcome)
        store.record({**action, "pattern": "never reviewed"}, "claude")
    finally:
        store.close()
    memories = decision_memories(str(project))
    assert len(memories) == 1
    memory = memories[0]
    assert memory.id.startswith("dec-") and memory.categories == ["process"]
    assert memory.confidence == pytest.approx(2.5 / 3, abs=0.001)
    assert "migrate queues with a dual-write window" in memory.text
    assert "2 success, 1 partial" in memory.text
