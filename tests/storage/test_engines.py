"""The decision store's behaviours on each engine (SQLite, and a real PostgreSQL server): the
same calls give the same answers."""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import pytest

from governance.decisions import embedding, fields, matching
from governance.decisions.calibration import calibration_report, report_from_sums
from governance.decisions.fields import DecisionInputError
from governance.decisions.pre_action import pre_action
from governance.decisions.store import DecisionStore
from tests.storage.conftest import StoreFactory


def act(description: str, **overrides: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {"description": description, "category": "architecture",
                           "stakes": "medium", "confidence": 0.7, "tags": ["general"],
                           "pattern": "default pattern"}
    raw.update(overrides)
    return fields.action(raw)


def ids(found: list[dict[str, Any]]) -> list[str]:
    return [item["id"] for item in found]


def test_record_get_and_review_round_trip(store: DecisionStore) -> None:
    action = act("Adopt expand-contract migrations", reasons=[
        {"type": "precedent", "text": "the users table went well"}, "plain reason"],
        tags=["Database", "migration", "database"], context={"ticket": "W-7", "a": [1, 2.5]})
    decision = store.record(action, "agent-1", {"state": "DO", "cycle": "impl",
                                                "phase": "DO", "work_item": "W-7"},
                            now=1_700_000_000.0)
    assert decision["id"].startswith("dec-")
    assert decision["reasons"] == [{"type": "precedent", "text": "the users table went well"},
                                   {"type": "other", "text": "plain reason"}]
    assert decision["tags"] == ["database", "migration"]
    assert decision["context"] == {"ticket": "W-7", "a": [1, 2.5]}
    assert (decision["state"], decision["cycle"], decision["work_item"]) == ("DO", "impl", "W-7")
    assert decision["created_at"] == "2023-11-14T22:13:20Z" and decision["outcome"] is None
    assert store.get(decision["id"]) == decision
    reviewed = store.review(decision["id"], "partial", "slower than hoped", now=1_700_000_100.0)
    assert reviewed["outcome"] == "partial" and reviewed["outcome_note"] == "slower than hoped"
    assert reviewed["reviewed_at"] == "2023-11-14T22:15:00Z"
    with pytest.raises(DecisionInputError, match="expected one of success"):
        store.review(decision["id"], "great")
    with pytest.raises(DecisionInputError, match="no decision with id"):
        store.review("dec-ffffffff", "success")
    assert store.get("dec-ffffffff") is None and store.count() == 1


def test_a_failed_batch_leaves_nothing(store: DecisionStore) -> None:
    good = act("first decision")
    store.insert_many([("dec-00000001", "a", good, {}, 1.0)])
    with pytest.raises(store.engine.integrity_errors):
        store.insert_many([("dec-00000002", "a", good, {}, 2.0),
                           ("dec-00000001", "a", good, {}, 3.0)])
    assert store.count() == 1
    assert ids(store.query("first")) == ["dec-00000001"]
    assert store.doc_counts(["first"]) == (1, {"first": 1})


def test_ranking_and_similarity(store: DecisionStore) -> None:
    exact = store.record(act("Cache product catalogue reads in Redis",
                             tags=["redis", "cache"], pattern="read-through cache"), "a")
    partial = store.record(act("Store sessions in Redis", tags=["redis"]), "a")
    store.record(act("Write architecture decision records"), "a")
    hits = store.query("redis catalogue cache")
    assert ids(hits) == [exact["id"], partial["id"]]
    assert hits[0]["similarity"] == 1.0
    assert 0 < hits[1]["similarity"] < hits[0]["similarity"]
    assert "seq" not in hits[0]
    assert store.query("kubernetes") == []
    assert store.query("the and of") == []   # only stop words


def test_rare_terms_rank_above_common_ones(store: DecisionStore) -> None:
    """BM25 (SQLite) and IDF-weighted ts_rank (PostgreSQL) both favour the rarer word."""
    for k in range(30):
        store.insert_many([(f"dec-{k:08x}", "a", act(f"Queue worker number {k}"), {},
                            1_700_000_000.0 + k)])
    store.insert_many([("dec-rare0001", "a", act("Kafka topic retention"), {}, 1_800_000_000.0)])
    hits = store.query("queue kafka", limit=3)
    assert hits[0]["id"] == "dec-rare0001"
    assert hits[0]["similarity"] > hits[1]["similarity"]


def test_filters(store: DecisionStore) -> None:
    now = time.time()
    old = store.record(act("Old cache choice", category="tooling", tags=["cache"]), "a",
                       now=now - 10 * 86400)
    new = store.record(act("New cache choice", tags=["cache", "redis"]), "b", now=now)
    store.review(old["id"], "failure")
    assert ids(store.query()) == [new["id"], old["id"]]   # newest first without text
    assert ids(store.query("cache", category="tooling")) == [old["id"]]
    assert ids(store.query("cache", tags=["redis"])) == [new["id"]]
    assert ids(store.query("cache", tags=["REDIS"])) == [new["id"]]
    assert ids(store.query(None, tags=["cache", "redis"])) == [new["id"]]
    assert ids(store.query(None, tags=["cache", "nosuch"])) == []
    assert ids(store.query(None, outcome="failure")) == [old["id"]]
    assert ids(store.query(None, outcome="unreviewed")) == [new["id"]]
    assert ids(store.query(None, agent_id="a")) == [old["id"]]
    assert ids(store.query(None, since=now - 86400)) == [new["id"]]
    assert ids(store.query(None, until=now - 86400)) == [old["id"]]
    assert ids(store.query("choice", limit=1)) and len(store.query(None, limit=1)) == 1
    assert store.reviewed("a", "tooling") == [("tooling", 0.7, "failure")]
    assert store.reviewed("b") == []


def test_common_terms_do_not_drive_large_matches(store: DecisionStore) -> None:
    rows = [(f"dec-{i:08x}", "a", act(f"shared filler words item{i}"), {}, float(i))
            for i in range(1200)]
    rows.append(("dec-rare0001", "a", act("shared filler zebra crossing"), {}, 5000.0))
    store.insert_many(rows)
    hits = store.query("shared zebra", limit=3)
    assert hits[0]["id"] == "dec-rare0001" and hits[0]["similarity"] == 1.0
    assert len(hits) == 1   # 'shared' is in every decision: it scores but does not match alone
    assert len(store.query("shared filler", limit=3)) == 3   # only common terms: still answered


def test_a_burst_of_alike_decisions_is_scored_only_to_the_recent_budget(
        store: DecisionStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(matching, "MATCH_BUDGET", 50)
    monkeypatch.setattr(matching, "RECENT_WINDOW", 100)
    monkeypatch.setattr(matching, "RECENT_BUDGET", 30)
    store.insert_many([(f"dec-{k:08x}", "a", act(f"w{k} filler"), {}, 1_700_000_000.0 + k)
                       for k in range(300)])
    store.insert_many([(f"dec-{k:08x}", "a", act(f"gamma delta w{k}"), {}, 1_700_000_000.0 + k)
                       for k in range(300, 700)])
    total, docs = store.doc_counts(["gamma", "delta"])
    assert (total, docs) == (700, {"gamma": 400, "delta": 400})
    assert matching.match_terms(["gamma", "delta"], docs, total)[1] is True
    found = store.query("gamma delta", limit=50)
    assert len(found) == 30                       # the budget, not the 400 that match
    assert all(int(item["id"][4:], 16) >= 670 for item in found)
    assert len(store.query("gamma delta", limit=50, agent_id="a")) == 30


def test_calibration_sums_follow_records_and_reviews(store: DecisionStore) -> None:
    rng = random.Random(7)
    for _ in range(40):
        decision = store.record(act("choose a queue", category=rng.choice(["architecture",
                                                                           "tooling"]),
                                    confidence=rng.choice([0.1, 0.35, 0.6, 0.7, 0.95, 1.0])),
                                rng.choice(["agent-a", "agent-b"]))
        for outcome in rng.sample(["success", "partial", "failure", "abandoned"],
                                  rng.randint(0, 2)):
            store.review(decision["id"], outcome)
    for agent in (None, "agent-a", "agent-b"):
        for category in (None, "architecture", "tooling"):
            rows = store.reviewed(agent, category)
            expected = calibration_report(rows, category)
            found = report_from_sums(store.calibration_sums(agent, category), category)
            assert found.keys() == expected.keys()
            for left, right in [(found["overall"], expected["overall"]),
                                *zip(found["categories"].values(),
                                     expected["categories"].values(), strict=True)]:
                _close(left, right)


def _close(left: dict[str, Any], right: dict[str, Any]) -> None:
    """Sums kept through reviews and re-reviews carry float residue: equal to 2e-4."""
    for key in ("category", "sample_size", "tendency"):
        assert left[key] == right[key], key
    for key in ("accuracy", "brier", "ece", "gap"):
        assert left[key] == pytest.approx(right[key], abs=2e-4), key
    assert [b["count"] for b in left["bins"]] == [b["count"] for b in right["bins"]]


def test_pre_action_recalls_patterns_and_calibration(store: DecisionStore, project: Path) -> None:
    action = {"description": "Use expand-contract migration for the invoices table",
              "category": "architecture", "stakes": "medium", "confidence": 0.8,
              "tags": ["database", "migration"], "pattern": "expand-contract migration"}
    first = pre_action(str(project), "agent-1", {**action, "description":
                       "Adopt expand-contract migration for the users table"}, store=store)
    assert first["allowed"] and first["decision_id"]
    store.review(first["decision_id"], "success", "no downtime")
    second = pre_action(str(project), "agent-1", action, store=store)
    [relevant] = second["relevant_decisions"]
    assert relevant["id"] == first["decision_id"] and relevant["outcome"] == "success"
    assert second["patterns_summary"] == ["expand-contract migration (1 confirmation)"]
    assert second["calibration_context"]["sample_size"] == 1
    assert second["calibration_context"]["category_brier"] == pytest.approx(0.04)
    assert store.count() == 2


def test_a_decision_recorded_beside_a_query_is_neither_counted_nor_found(
        store: DecisionStore) -> None:
    """``query_beside`` records while it matches (at once on PostgreSQL, after the match on
    SQLite): the new decision, the best hit of its own words, is never among the hits, and the
    hits' similarity is what the query alone gives."""
    older = [store.record(act(f"Partition the audit table by {word}"), "a")
             for word in ("month", "tenant", "region")]
    alone = store.query("partition audit table tenant", limit=5)
    found, recorded = store.query_beside(
        "partition audit table tenant",
        lambda: store.record(act("Partition the audit table by tenant"), "b"), limit=5)
    assert recorded["agent_id"] == "b" and store.get(recorded["id"]) == recorded
    assert ids(found) == ids(alone) and recorded["id"] not in ids(found)
    assert [hit["similarity"] for hit in found] == [hit["similarity"] for hit in alone]
    assert ids(found)[0] == older[1]["id"] and store.count() == 4

    def broken() -> dict[str, Any]:
        raise DecisionInputError("no such thing", key="x")

    with pytest.raises(DecisionInputError, match="no such thing"):
        store.query_beside("partition audit", broken)


def test_hits_past_whole_are_brief_and_keep_their_pattern_and_outcome(
        store: DecisionStore) -> None:
    """A preAction reads the hits past its ``query_limit`` for their pattern and outcome only;
    the first ``whole`` stay whole, even when the new decision was among them (on PostgreSQL it
    is recorded while the match runs)."""
    for word in ("month", "tenant", "region", "quarter", "day"):
        made = store.record(act(f"Partition the audit table by {word}",
                                pattern=f"partition by {word}"), "a")
        store.review(made["id"], "success")
    alone = store.query("partition audit table tenant", limit=5)
    found, recorded = store.query_beside(
        "partition audit table tenant",
        lambda: store.record(act("Partition the audit table by tenant"), "b"), limit=5, whole=2)
    assert ids(found) == ids(alone) and recorded["id"] not in ids(found)
    assert found[:2] == alone[:2] and all("description" in item for item in found[:2])
    # one more than whole is read whole, in case the new decision was among them
    assert [sorted(item) for item in found[3:]] == [["id", "outcome", "pattern"]] * 2
    assert [(item["pattern"], item["outcome"]) for item in found[2:]] == \
           [(item["pattern"], item["outcome"]) for item in alone[2:]]


def test_work_for_later_runs_when_asked_and_never_once_cancelled() -> None:
    from governance.storage.engine import Later

    ran: list[int] = []
    later = Later(lambda: ran.append(1) or 7)
    assert ran == [] and later.result() == 7 and later.result() == 7 and ran == [1]
    assert not later.cancel() and later.exception() is None
    skipped = Later(lambda: ran.append(2))
    assert skipped.cancel() and ran == [1]
    failing = Later(lambda: 1 // 0)
    assert isinstance(failing.exception(), ZeroDivisionError)
    with pytest.raises(ZeroDivisionError):
        failing.result()


HOSTILE = ["it's \"quoted\"", "back\\slash \\x00 \\n", "'; DROP TABLE decisions; --",
           "%s %(x)s $1 ? :name {0}", "naïve café — ünïcödé 日本語 🚀 עברית",
           "a' OR '1'='1", "tab\tnew\nline"]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_text_round_trips_in_every_field(store: DecisionStore, text: str) -> None:
    action = act(f"hostile {text}", reasons=[{"type": text, "text": text}], tags=[text, "x"],
                 pattern=text, context={text: text})
    state = {"state": text, "cycle": text, "phase": text, "work_item": text}
    decision = store.record(action, text, state)
    assert store.get(decision["id"]) == decision
    assert decision["description"] == f"hostile {text}" and decision["agent_id"] == text
    assert decision["pattern"] == text and decision["context"] == {text: text}
    assert decision["reasons"] == [{"type": text, "text": text}]
    assert decision["state"] == text and decision["work_item"] == text
    reviewed = store.review(decision["id"], "success", text)
    assert reviewed["outcome_note"] == text
    assert decision["id"] in ids(store.query(f"hostile {text}", agent_id=text,
                                             tags=[text.lower()]))
    assert decision["id"] in ids(store.query(None, tags=[text], agent_id=text))
    assert store.calibration_sums(text)["architecture"][3][0] == 1
    assert store.query(text, agent_id="'; DROP TABLE decisions; --x") == []
    assert store.count() == 1


needs_model = pytest.mark.skipif(embedding.load_embedder() is None,
                                 reason="the optional embedding packages are not installed")


@needs_model
def test_hybrid_finds_paraphrases(store: DecisionStore) -> None:
    target = store.record(act("Store passwords with argon2id instead of sha1"), "a")
    store.record(act("Put a CDN in front of static assets"), "a")
    assert store.query("secure credential hashing", ranking="keyword") == []
    hits = store.query("secure credential hashing", ranking="hybrid", limit=2)
    assert hits[0]["id"] == target["id"] and hits[0]["keyword_similarity"] == 0.0


def test_each_project_sees_its_own_decisions(open_store: StoreFactory, tmp_path: Path) -> None:
    one = open_store(tmp_path / "one")
    two = open_store(tmp_path / "two")
    mine = one.record(act("Deploy with blue-green switches"), "a")
    theirs = two.record(act("Deploy with canary releases"), "a")
    assert ids(one.query("deploy")) == [mine["id"]] and ids(two.query("deploy")) == [theirs["id"]]
    assert one.get(theirs["id"]) is None and one.count() == 1
    with pytest.raises(DecisionInputError):
        one.review(theirs["id"], "success")


def test_a_projects_match_reads_its_postings_and_ranks_as_the_index_does(
        database: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """On PostgreSQL a project's match sums its words' rows in ``decision_postings``, which a
    trigger keeps for every decision inserted (one by one or in a batch) and deleted. Its hits and
    their order are those of the GIN index's match, which a team-wide match, one of the newest
    decisions and one holding a word too long for the postings still use; each project sees only
    its own decisions."""
    from governance.storage import bm25, pool

    mine = DecisionStore.for_project_id(database, "postings-mine")
    theirs = DecisionStore.for_project_id(database, "postings-theirs")
    rng = random.Random(5)
    words = [f"w{k}" for k in range(40)]
    mine.insert_many((f"dec-{k:04d}", "a", act(" ".join(rng.choices(words, k=rng.randint(3, 9))),
                                               tags=[rng.choice(words)]), {}, 1.7e9 + k)
                     for k in range(300))
    kept = mine.record(act("Shard the zebrafish ledger by tenant"), "a")
    other = theirs.record(act("Shard the zebrafish ledger by region"), "a")
    assert ids(mine.query("zebrafish ledger")) == [kept["id"]]
    assert ids(theirs.query("zebrafish tenant")) == [other["id"]]
    queries = [" ".join(rng.sample(words, rng.randint(1, 6))) for _ in range(25)]
    posted = [mine.query(text, limit=20) for text in queries]
    monkeypatch.setattr(bm25, "posted", lambda word: False)    # the GIN index's match
    indexed = [mine.query(text, limit=20) for text in queries]
    monkeypatch.undo()
    assert [ids(found) for found in posted] == [ids(found) for found in indexed]
    assert [[hit["similarity"] for hit in found] for found in posted] == \
           [[hit["similarity"] for hit in found] for found in indexed]
    assert all(posted)
    long_word = "q" * 2040     # a tsvector holds it; the postings do not
    assert bm25.fits(long_word) and not bm25.posted(long_word)
    found = mine.record(act(f"Keep {long_word} out"), "a")
    assert ids(mine.query(long_word)) == [found["id"]] and theirs.query(long_word) == []
    with pool.borrowed(database) as conn:
        def postings(decision_id: str) -> list[str]:
            return [row[0] for row in conn.execute(
                "SELECT p.term FROM decision_postings p JOIN decisions d ON d.gid = p.gid "
                "WHERE d.project_id = 'postings-mine' AND d.id = %s ORDER BY p.term",
                (decision_id,)).fetchall()]

        held = postings(found["id"])
        assert {"keep", "out"} <= set(held) and long_word not in held
        assert len(postings("dec-0007")) >= 2
        conn.execute("DELETE FROM decisions WHERE project_id = 'postings-mine' AND id = %s",
                     (kept["id"],))
        left = conn.execute("SELECT count(*) FROM decision_postings WHERE project_id = "
                            "'postings-mine' AND term = 'zebrafish'").fetchone()
    assert left == (0,) and mine.query("zebrafish") == []


def test_the_sqlite_path_never_loads_the_postgresql_driver(project: Path) -> None:
    """Without a database URL nothing of the PostgreSQL engine is imported (and a hook never
    opens the store at all)."""
    import subprocess
    import sys

    code = ("import sys; from governance.decisions.store import DecisionStore; "
            "from governance.decisions.pre_action import pre_action; "
            f"pre_action({str(project)!r}, 'a', {{'description': 'Use a queue', "
            "'category': 'tooling', 'stakes': 'low', 'confidence': 0.5}); "
            f"s = DecisionStore.for_project({str(project)!r}); s.query('queue'); "
            "print(sorted(m for m in sys.modules if m.startswith(('psycopg', "
            "'governance.storage.postgres', 'governance.storage.pool', "
            "'governance.storage.migration'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[2], timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
