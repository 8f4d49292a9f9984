"""The SQLite decision store: recording, reviewing, filters and keyword ranking."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from governance.decisions import fields
from governance.decisions.fields import DecisionInputError
from governance.decisions.search_text import query_terms
from governance.decisions.store import DecisionStore


def act(description: str, **overrides: Any) -> dict[str, Any]:
    raw: dict[str, Any] = {"description": description, "category": "architecture",
                           "stakes": "medium", "confidence": 0.7, "tags": ["general"],
                           "pattern": "default pattern"}
    raw.update(overrides)
    return fields.action(raw)


@pytest.fixture
def store(tmp_path: Path) -> DecisionStore:
    return DecisionStore(str(tmp_path / "gov" / "decisions.db"))


def test_record_and_show_round_trip(store: DecisionStore) -> None:
    action = act("Adopt expand-contract migrations", reasons=[
        {"type": "precedent", "text": "the users table went well"}, "plain reason"],
        tags=["Database", "migration", "database"], context={"ticket": "W-7"})
    decision = store.record(action, "agent-1", {"state": "DO", "cycle": "impl",
                                                "phase": "DO", "work_item": "W-7"},
                            now=1_700_000_000.0)
    assert decision["id"].startswith("dec-") and len(decision["id"]) == 12
    assert decision["reasons"] == [{"type": "precedent", "text": "the users table went well"},
                                   {"type": "other", "text": "plain reason"}]
    assert decision["tags"] == ["database", "migration"]
    assert decision["context"] == {"ticket": "W-7"}
    assert (decision["state"], decision["cycle"], decision["work_item"]) == ("DO", "impl", "W-7")
    assert decision["created_at"] == "2023-11-14T22:13:20Z"
    assert decision["outcome"] is None
    assert store.get(decision["id"]) == decision


def test_database_is_wal_with_fts5(store: DecisionStore) -> None:
    assert oct(Path(store.path).stat().st_mode & 0o777) == "0o600"
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = {row[0] for row in store.db.execute("SELECT name FROM sqlite_master")}
    assert {"decisions", "decisions_fts", "decision_tags", "decision_terms"} <= tables


def test_review(store: DecisionStore) -> None:
    decision = store.record(act("Use Redis"), "a")
    reviewed = store.review(decision["id"], "partial", "slower than hoped", now=1_700_000_100.0)
    assert reviewed["outcome"] == "partial" and reviewed["outcome_note"] == "slower than hoped"
    assert reviewed["reviewed_at"] == "2023-11-14T22:15:00Z"
    with pytest.raises(DecisionInputError, match="expected one of success"):
        store.review(decision["id"], "great")
    with pytest.raises(DecisionInputError, match="no decision with id"):
        store.review("dec-ffffffff", "success")


def test_failed_insert_leaves_nothing_half_recorded(store: DecisionStore) -> None:
    good = act("first decision")
    store.insert_many([("dec-00000001", "a", good, {}, 1.0)])
    with pytest.raises(sqlite3.IntegrityError):
        store.insert_many([("dec-00000002", "a", good, {}, 2.0),
                           ("dec-00000001", "a", good, {}, 3.0)])
    assert store.count() == 1
    assert store.db.execute("SELECT count(*) FROM decision_tags").fetchone()[0] == 1
    assert [d["id"] for d in store.query("first")] == ["dec-00000001"]


def test_bm25_ranking_and_similarity(store: DecisionStore) -> None:
    exact = store.record(act("Cache product catalogue reads in Redis",
                             tags=["redis", "cache"], pattern="read-through cache"), "a")
    partial = store.record(act("Store sessions in Redis", tags=["redis"]), "a")
    store.record(act("Write architecture decision records"), "a")
    hits = store.query("redis catalogue cache")
    assert [h["id"] for h in hits] == [exact["id"], partial["id"]]
    assert hits[0]["similarity"] == 1.0
    assert 0 < hits[1]["similarity"] < hits[0]["similarity"]
    assert store.query("kubernetes") == []
    assert store.query("the and of") == []  # only stop words


def test_filters(store: DecisionStore) -> None:
    now = time.time()
    old = store.record(act("Old cache choice", category="tooling", tags=["cache"]), "a",
                       now=now - 10 * 86400)
    new = store.record(act("New cache choice", tags=["cache", "redis"]), "b", now=now)
    store.review(old["id"], "failure")
    ids = lambda found: [d["id"] for d in found]  # noqa: E731
    assert ids(store.query()) == [new["id"], old["id"]]  # newest first without text
    assert ids(store.query("cache", category="tooling")) == [old["id"]]
    assert ids(store.query("cache", tags=["redis"])) == [new["id"]]
    assert ids(store.query(None, tags=["cache", "redis"])) == [new["id"]]
    assert ids(store.query(None, outcome="failure")) == [old["id"]]
    assert ids(store.query(None, outcome="unreviewed")) == [new["id"]]
    assert ids(store.query(None, agent_id="a")) == [old["id"]]
    assert ids(store.query(None, since=now - 86400)) == [new["id"]]
    assert ids(store.query(None, until=now - 86400)) == [old["id"]]
    assert store.reviewed("a", "tooling") == [("tooling", 0.7, "failure")]
    assert store.reviewed("b") == []


def test_common_terms_do_not_drive_large_matches(store: DecisionStore) -> None:
    rows = [(f"dec-{i:08x}", "a", act(f"shared filler words item{i}"), {}, float(i))
            for i in range(1200)]
    rows.append(("dec-rare0001", "a", act("shared filler zebra crossing"), {}, 5000.0))
    store.insert_many(rows)
    hits = store.query("shared zebra", limit=3)
    assert hits[0]["id"] == "dec-rare0001" and hits[0]["similarity"] == 1.0
    assert len(hits) == 1  # 'shared' is in every decision: it scores but does not match alone
    assert len(store.query("shared filler", limit=3)) == 3  # only common terms: still answered


def test_query_terms() -> None:
    assert query_terms("The Redis cache, the redis_cache and café!") == [
        "redis", "cache", "café"]


def test_an_open_waits_for_another_connection_switching_to_wal(tmp_path: Path) -> None:
    """``PRAGMA journal_mode=WAL`` answers "database is locked" at once, skipping the busy
    timeout, while another connection writes to a file not yet in WAL: two server threads that
    opened a new store together made one call fail (-32603). The open now waits."""
    path = tmp_path / "decisions.db"
    other = sqlite3.connect(str(path), isolation_level=None)
    other.execute("CREATE TABLE first_writer (x)")
    other.execute("BEGIN IMMEDIATE")
    other.execute("INSERT INTO first_writer VALUES (1)")
    counted: list[int | BaseException] = []
    import threading

    def open_and_count() -> None:
        try:
            store = DecisionStore(str(path))
        except sqlite3.Error as exc:
            counted.append(exc)
            return
        counted.append(store.count())
        store.close()

    thread = threading.Thread(target=open_and_count)
    thread.start()
    time.sleep(0.3)
    assert not counted                      # waiting, not failed
    other.execute("COMMIT")
    other.close()
    thread.join(10)
    assert counted == [0]
