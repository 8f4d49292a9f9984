"""One corpus on both engines, side by side: every query, filter, calibration and pre_action call
gives the same answer on SQLite and on PostgreSQL (ranking included: both rank with FTS5's BM25)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from governance.bench.decisions import _rows, _vocabulary
from governance.decisions import fields
from governance.decisions.calibration import report_from_sums
from governance.decisions.pre_action import pre_action
from governance.decisions.store import DecisionStore

SIZE = 1500
REVIEWS = ("success", "success", "partial", "failure", "abandoned")


@pytest.fixture(scope="module")
def corpus(database: str, tmp_path_factory: pytest.TempPathFactory
           ) -> tuple[DecisionStore, DecisionStore, list[str]]:
    """The same decisions (ids, times, reviews) in a SQLite file and in PostgreSQL."""
    rng = random.Random(11)
    vocab = _vocabulary(rng, 800)
    rows = [(decision_id, agent, fields.action(action), state, created)
            for decision_id, agent, action, state, created in _rows(rng, vocab, 0, SIZE)]
    reviews = [(rng.choice(REVIEWS), f"dec-{k:08x}", 1_800_000_000.0 + k)
               for k in range(0, SIZE, 4)]
    folder = tmp_path_factory.mktemp("same")
    stores = (DecisionStore(str(folder / "decisions.db")),
              DecisionStore.for_project(str(folder), database))
    for store in stores:
        store.insert_many(rows)
        for outcome, decision_id, at in reviews:
            store.review(decision_id, outcome, "reviewed", now=at)
    queries = [" ".join(rng.choice(vocab[:600]) for _ in range(rng.randint(1, 4)))
               for _ in range(60)]
    return stores[0], stores[1], queries


FILTERS: list[dict[str, Any]] = [
    {}, {"category": "tooling"}, {"outcome": "success"}, {"outcome": "unreviewed"},
    {"agent_id": "agent-3"}, {"since": 0.0}, {"until": 1.0},
]


@pytest.mark.parametrize("filters", FILTERS, ids=lambda f: json.dumps(f) if f else "none")
def test_queries_answer_the_same(corpus: tuple[DecisionStore, DecisionStore, list[str]],
                                 filters: dict[str, Any]) -> None:
    sqlite, postgres, queries = corpus
    for text in [*queries, None]:
        assert sqlite.query(text, limit=10, **filters) == \
            postgres.query(text, limit=10, **filters), (text, filters)


def test_tag_filters_answer_the_same(corpus: tuple[DecisionStore, DecisionStore, list[str]]
                                     ) -> None:
    sqlite, postgres, queries = corpus
    tags = sorted({tag for item in sqlite.query(None, limit=40) for tag in item["tags"]})[:8]
    for tag in tags:
        assert sqlite.query(None, tags=[tag]) == postgres.query(None, tags=[tag])
        for text in queries[:10]:
            assert sqlite.query(text, tags=[tag]) == postgres.query(text, tags=[tag])


def test_calibration_answers_the_same(corpus: tuple[DecisionStore, DecisionStore, list[str]]
                                      ) -> None:
    sqlite, postgres, _ = corpus
    for agent in (None, "agent-0", "agent-5"):
        for category in (None, "architecture", "tooling"):
            assert report_from_sums(sqlite.calibration_sums(agent, category), category) == \
                report_from_sums(postgres.calibration_sums(agent, category), category)
            assert sorted(sqlite.reviewed(agent, category)) == \
                sorted(postgres.reviewed(agent, category))
    assert sqlite.count() == postgres.count() == SIZE
    terms = ["ka", "lo", "nosuchword"]
    assert sqlite.doc_counts(terms) == postgres.doc_counts(terms)


def test_pre_action_answers_the_same(corpus: tuple[DecisionStore, DecisionStore, list[str]],
                                     project: Path) -> None:
    sqlite, postgres, queries = corpus
    for text in queries[:10]:
        action = {"description": text, "category": "architecture", "stakes": "low",
                  "confidence": 0.6}
        answers = [pre_action(str(project), "agent-1", action, {"auto_record": False},
                              store=store) for store in (sqlite, postgres)]
        for answer in answers:
            answer.pop("evaluatedAt")
        assert answers[0] == answers[1]
        assert answers[0]["relevant_decisions"] or not sqlite.query(text)


def test_the_reports_decision_memory_and_reviewed_patterns_are_the_same(
        corpus: tuple[DecisionStore, DecisionStore, list[str]], database: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """What the report's decision-memory section and the knowledge index read: the same figures
    from the project's SQLite file as from its rows in the team's database."""
    import sqlite3

    from governance.knowledge.memory import decision_memories
    from governance.report import memory, selection

    sqlite, _, _ = corpus
    project = Path(sqlite.path).parent
    (project / ".claude" / "governance").mkdir(parents=True, exist_ok=True)
    copy = sqlite3.connect(str(project / ".claude" / "governance" / "decisions.db"))
    sqlite.db.backup(copy)
    copy.close()
    chosen = [selection.parse(None, None, None, None),
              selection.parse(None, None, None, "agent-3"),
              selection.parse("2020-01-01", "2030-12-31", None, None)]

    def read() -> tuple[list[dict[str, Any]], list[Any]]:
        found = [memory.figures(str(project), s) for s in chosen]
        for figures in found:
            assert figures["present"] and "error" not in figures, figures
            figures.pop("path")
        return found, decision_memories(str(project))

    monkeypatch.delenv("GOVERNANCE_DATABASE_URL", raising=False)
    on_sqlite = read()
    monkeypatch.setenv("GOVERNANCE_DATABASE_URL", database)
    on_postgres = read()
    assert on_sqlite[0][0]["decisions"] == SIZE and on_sqlite[1]
    assert_alike(on_sqlite, on_postgres)


def assert_alike(left: Any, right: Any, where: str = "") -> None:
    """Equal, but for floats: the engines add a column's values in different orders, so a mean
    rounded to 4 places may differ in its last place."""
    if isinstance(left, float) or isinstance(right, float):
        assert left == pytest.approx(right, abs=2e-4), where
    elif isinstance(left, dict) and isinstance(right, dict):
        assert left.keys() == right.keys(), where
        for key in left:
            assert_alike(left[key], right[key], f"{where}.{key}")
    elif isinstance(left, list | tuple) and isinstance(right, list | tuple):
        assert len(left) == len(right), where
        for index, (a, b) in enumerate(zip(left, right, strict=True)):
            assert_alike(a, b, f"{where}[{index}]")
    else:
        assert left == right, where
