"""The knowledge delta (``knowledge.increment``): memories added (and reviews) update the index
incrementally, with the same answers as a full rebuild, and a full rebuild (compaction) when the
delta cannot say the change or has grown too large."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from governance.commands.cli import main as cli
from governance.knowledge import increment, indexer, lookup
from governance.knowledge.indexer import build, rebuild
from governance.knowledge.lookup import DELTA_NAME, Index
from governance.knowledge.memory import MemoryStore
from governance.policy import seal
from governance.project import cache_file
from tests.helpers import hook_command, install, set_state
from tests.knowledge.test_hook_knowledge import hook, payload
from tests.knowledge.test_lookup import DOCKER_SOP, memories, sop

WORDS = [f"w{i:02d}" for i in range(40)] + ["docker", "compose", "volumes", "payments"]
CASES = [("Bash", {"command": "docker compose up -d"}, "shell-execute", "DO"),
         ("Bash", {"command": "psql -c 'truncate payments'"}, "destructive", "DO"),
         ("Bash", {"command": "ls payments"}, "shell-read", "EXPLORE")]


@pytest.fixture(autouse=True)
def small_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Bounds small enough that a corpus of a few hundred memories has common terms and cut
    posting lists (the full rebuild and the delta read the same module constants)."""
    monkeypatch.setattr(indexer, "COMMON_MIN", 40)
    monkeypatch.setattr(indexer, "COMMON_SHARE", 0.15)
    monkeypatch.setattr(indexer, "POSTINGS_MAX", 25)
    monkeypatch.setattr(lookup, "POSTINGS_MAX", 25)


def corpus(count: int, seed: int) -> list[tuple[str, list[str], float, str, float]]:
    rng = random.Random(seed)
    items = []
    for i in range(count):
        words = [WORDS[min(int(rng.paretovariate(1.2)) - 1, len(WORDS) - 1)]
                 if rng.random() < 0.5 else rng.choice(WORDS) for _ in range(rng.randint(3, 7))]
        items.append((" ".join(words) + f" note{seed}x{i}", ["technical"],
                      rng.choice((0.3, 0.5, 0.6, 0.8, 0.9, 1.0)), "test",
                      1_700_000_000.0 + rng.randint(0, 50)))   # ties: the id decides
    return items


def add(project: Path, items: list[tuple[str, list[str], float, str, float]]) -> list[str]:
    with MemoryStore.for_project(str(project)) as store:
        return store.add_many(items)[0]


def queries() -> list[tuple[str, dict[str, Any], str, str]]:
    rng = random.Random(3)
    found = list(CASES)
    for _ in range(60):
        command = " ".join(rng.sample(WORDS, rng.randint(2, 4)))
        found.append(("Bash", {"command": command}, rng.choice(
            ("shell-execute", "destructive")), rng.choice(("DO", "EXPLORE"))))
    return found


def answers(project: Path, index: Index) -> list[list[tuple[str, tuple[str, ...]]]]:
    """Every query's memories (id and why, in order) and SOPs."""
    out = []
    for tool, tool_input, primitive, state in queries():
        acts = [{"primitive": primitive, "segment": tool_input["command"]}]
        found = lookup.find(index, str(project), tool, tool_input, str(project), acts,
                            {primitive}, state)
        out.append([(m["id"], tuple(m["why"])) for m in found.memories] +
                   [(s["name"], ()) for s in found.sops])
    return out


def incremental_and_full(project: Path) -> tuple[Any, Any]:
    index, how = indexer.current(str(project))
    try:
        assert how == "hit" and index.delta is not None
        incremental = answers(project, index)
    finally:
        index.close()
    full = answers(project, Index.of_bytes(build(str(project))[0]))
    return incremental, full


@pytest.fixture
def corpus_project(project: Path) -> Path:
    (project / ".claude" / "governance").mkdir(parents=True)
    (project / ".claude" / "governance" / "knowledge.yaml").write_text(
        "enforcement:\n  max_memories: 50\n")
    sop(project, "deploy", DOCKER_SOP)
    add(project, corpus(400, seed=1))
    rebuild(str(project))
    return project


def test_added_memories_answer_as_a_full_rebuild(corpus_project: Path) -> None:
    for seed in (2, 3, 4):                 # three deltas, each building on the one before
        add(corpus_project, corpus(4, seed))
        _index, summary = increment.refresh(str(corpus_project))
        assert summary["how"] == "delta", summary
    assert summary["delta"] == 12 and summary["memories"] == 412
    incremental, full = incremental_and_full(corpus_project)
    assert any(len(a) > 3 for a in full)            # the queries find memories
    assert incremental == full


def test_a_term_that_becomes_common_is_dropped_as_a_rebuild_drops_it(
        corpus_project: Path) -> None:
    index = Index.of_bytes(build(str(corpus_project))[0])
    extra = index.extra()
    counts = {w: extra["cut"].get(w) or len(index.postings({"m:" + w}).get("m:" + w, ()))
              for w in WORDS if w not in extra["common"]}
    near = max(counts, key=lambda w: counts[w])      # the most frequent word not yet common
    more = 1
    while not (counts[near] + more > indexer.COMMON_MIN and
               counts[near] + more > indexer.COMMON_SHARE * (400 + more)):
        more += 1
    add(corpus_project, [(f"{near} fresh{i} docker", ["technical"], 0.9, "t", 1_800_000_000.0)
                         for i in range(more)])
    _index, summary = increment.refresh(str(corpus_project))
    assert summary["how"] == "delta", summary
    index, _ = indexer.current(str(corpus_project))
    assert index.delta is not None and "m:" + near in index.delta.header["dropped"]
    index.close()
    incremental, full = incremental_and_full(corpus_project)
    assert incremental == full


def test_a_reviewed_decision_replaces_its_memory_in_the_delta(corpus_project: Path) -> None:
    from governance.decisions.store import DecisionStore

    def decide(outcome: str) -> None:
        store = DecisionStore.for_project(str(corpus_project))
        try:
            decision = store.record(
                {"description": "pin images", "category": "tooling", "stakes": "low",
                 "confidence": 0.7, "reasons": [], "tags": [], "context": "",
                 "pattern": "pin docker compose images by digest"}, "test")
            store.review(decision["id"], outcome)
        finally:
            store.close()

    decide("success")
    rebuild(str(corpus_project))
    decide("failure")                          # the pattern's memory changes: 1 of 2 succeeded
    _index, summary = increment.refresh(str(corpus_project))
    assert summary["how"] == "delta" and summary["replaced"] == 1, summary
    incremental, full = incremental_and_full(corpus_project)
    assert incremental == full


def test_a_common_term_that_no_longer_is_forces_a_rebuild(corpus_project: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(increment, "DELTA_MIN", 1000)
    monkeypatch.setattr(increment, "DELTA_BYTES", 1 << 24)
    extra = Index.of_bytes(build(str(corpus_project))[0]).extra()
    term, count = min(extra["common"].items(), key=lambda item: item[1])
    more = 1
    while count > indexer.COMMON_SHARE * (400 + more):
        more += 1
    add(corpus_project, [(f"unrelated{i} words{i}", ["technical"], 0.5, "t", None)
                         for i in range(more - 1)])
    assert increment.refresh(str(corpus_project))[1]["how"] == "delta"   # still common
    add(corpus_project, [("one more unrelated", ["technical"], 0.5, "t", None)])
    _index, summary = increment.refresh(str(corpus_project))
    assert summary["rebuilt"].startswith(f"the term {term!r} is no longer too common")


def test_compaction_when_the_delta_passes_its_bound(corpus_project: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(increment, "DELTA_MIN", 5)
    monkeypatch.setattr(increment, "DELTA_MAX", 5)
    add(corpus_project, corpus(5, seed=8))
    assert increment.refresh(str(corpus_project))[1]["how"] == "delta"
    add(corpus_project, corpus(1, seed=9))
    _index, summary = increment.refresh(str(corpus_project))
    assert "6 memories" in summary["rebuilt"]
    assert summary["memories"] == 406
    assert not Path(cache_file(str(corpus_project), DELTA_NAME)).exists()
    assert DELTA_NAME not in seal.derived_entries(seal.read(str(corpus_project)))
    index, how = indexer.current(str(corpus_project))
    assert how == "hit" and index.delta is None and index.header["memories"] == 406
    index.close()


def test_a_delta_too_large_in_bytes_is_compacted(corpus_project: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(increment, "DELTA_BYTES", 500)
    add(corpus_project, corpus(5, seed=8))
    assert "bytes" in increment.refresh(str(corpus_project))[1]["rebuilt"]


def test_an_sop_change_forces_a_rebuild(corpus_project: Path) -> None:
    add(corpus_project, corpus(2, seed=5))
    sop(corpus_project, "other", DOCKER_SOP.replace("docker]", "payments]"))
    _index, summary = increment.refresh(str(corpus_project))
    assert "SOPs" in summary["rebuilt"]
    assert summary["sops"] == 2 and summary["memories"] == 402


def test_a_settings_change_forces_a_rebuild(corpus_project: Path) -> None:
    add(corpus_project, corpus(2, seed=5))
    (corpus_project / ".claude" / "governance" / "knowledge.yaml").write_text(
        "enforcement:\n  max_memories: 7\n")
    assert "settings" in increment.refresh(str(corpus_project))[1]["rebuilt"]


def test_a_deleted_memory_is_gone_from_the_results(corpus_project: Path) -> None:
    """A removal (of a memory in the delta or in the index) is a full rebuild."""
    [in_delta] = add(corpus_project, [("payments w01 w02 must never be truncated", ["gotchas"],
                                       0.95, "t", None)])
    assert increment.refresh(str(corpus_project))[1]["how"] == "delta"
    with MemoryStore.for_project(str(corpus_project)) as store:
        in_index = next(m.id for m in store.all() if m.text.startswith("w"))
    for removed in (in_delta, in_index):
        with MemoryStore.for_project(str(corpus_project)) as store:
            assert store.remove(removed)
        add(corpus_project, corpus(1, seed=hash(removed) % 1000))
        _index, summary = increment.refresh(str(corpus_project))
        assert summary["rebuilt"] == "a memory was removed or changed"
        index, how = indexer.current(str(corpus_project))
        assert how == "hit" and index.delta is None
        assert removed not in {i for answer in answers(corpus_project, index) for i, _ in answer}
        assert all(index.memory(n)["id"] != removed for n in range(index.header["memories"]))
        index.close()
    # the next addition is a delta again
    add(corpus_project, corpus(2, seed=12))
    assert increment.refresh(str(corpus_project))[1]["how"] == "delta"


def test_a_memory_changed_outside_governance_is_a_rebuild(corpus_project: Path) -> None:
    import sqlite3

    add(corpus_project, corpus(1, seed=13))
    db = sqlite3.connect(corpus_project / ".claude" / "governance" / "knowledge.db")
    db.execute("UPDATE memories SET confidence = 0.1 WHERE seq = 1")
    db.commit()
    db.close()
    assert increment.refresh(str(corpus_project))[1]["rebuilt"] == "a memory was removed or changed"


def test_the_slot_search_equals_an_exhaustive_count(corpus_project: Path) -> None:
    index = Index.of_bytes(build(str(corpus_project))[0])
    keys = [(-index.memory(n)["confidence"], -index.memory(n)["created_at"], index.memory(n)["id"])
            for n in range(index.header["memories"])]
    assert keys == sorted(keys)
    rng = random.Random(5)
    for _ in range(50):
        probe = (-rng.choice((0.3, 0.5, 0.9, 1.0)), -1_700_000_000.0 - rng.randint(-1, 51),
                 f"mem-{rng.randrange(16**10):010x}")
        assert increment._slot(index, probe) == sum(1 for k in keys if k < probe)


def test_a_tampered_delta_is_noted_and_not_used(corpus_project: Path) -> None:
    add(corpus_project, [("payments table must never be truncated", ["gotchas"], 0.95, "t",
                          None)])
    increment.refresh(str(corpus_project))
    path = Path(cache_file(str(corpus_project), DELTA_NAME))
    data = path.read_bytes()
    path.write_bytes(data.replace(b"never be truncated", b"always be truncated"))
    seal.changed(str(corpus_project))
    index, how = indexer.current(str(corpus_project))
    assert index.delta is None and how == "built"       # not used: built from the sources
    index.close()
    assert DELTA_NAME in seal.changed(str(corpus_project))


def test_the_hook_answers_with_a_memory_added_after_the_index(project: Path) -> None:
    install(project)
    set_state(project, "implementation-cycle/DO")
    sop(project, "deploy", DOCKER_SOP)
    memories(project, ("docker compose volumes hold the uploads", ["technical"], 0.9))
    pre = hook_command(project, "PreToolUse")
    first = hook(pre, payload(project, "docker compose up -d", session="s1"))
    assert "uploads" in first["hookSpecificOutput"]["additionalContext"]
    assert cli(["memory", "add", "Never run docker compose down -v on the shared box",
                "--category", "gotchas", "--confidence", "0.95",
                "--project", str(project)]) == 0
    assert Path(cache_file(str(project), DELTA_NAME)).exists()
    answer = hook(pre, payload(project, "docker compose up -d", session="s2"))
    context = answer["hookSpecificOutput"]["additionalContext"]
    assert "down -v on the shared box" in context and "uploads" in context
    assert "systemMessage" not in answer
    # a rewritten delta is told like a rewritten index, and not used
    path = Path(cache_file(str(project), DELTA_NAME))
    path.write_bytes(path.read_bytes().replace(b"the shared box", b"any box, it is fine"))
    answer = hook(pre, payload(project, "docker compose up -d", session="s3"))
    assert cache_file(str(project), DELTA_NAME) in answer["systemMessage"]
    assert "changed outside governance" in answer["systemMessage"]
    assert "on the shared box" in answer["hookSpecificOutput"]["additionalContext"]
