"""The decision memory: record, review and query decisions, on the storage engine the project uses.

By default one embedded SQLite database per project (``<project>/.claude/governance/decisions.db``,
:mod:`governance.storage.sqlite`); with a database URL (``--database``,
``GOVERNANCE_DATABASE_URL``) a PostgreSQL database a team shares (:mod:`governance.storage.postgres`,
the ``team`` extra), each row carrying its project's id. The logic here does not depend on which:
text queries rank a bounded set of the full-text index's matches with BM25, and each hit gets a
``similarity`` in 0..1 (:mod:`governance.decisions.matching` says which terms a match scores and
how alike a hit is).
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from governance import jsoncodec
from governance.decisions import matching
from governance.decisions.fields import OUTCOMES, DecisionInputError
from governance.decisions.search_text import decision_text, query_terms, words
from governance.project import REVIEWS_STAMP, governance_dir, replace_file
from governance.storage.database import database_url
from governance.storage.engine import COLUMNS, Engine, Pending, Record, Row, T, Where
from governance.storage.sqlite import SCHEMA_VERSION, SqliteEngine, insert_records, open_store

DB_NAME = "decisions.db"
_ID, _PATTERN, _OUTCOME = (COLUMNS.index(name) for name in ("id", "pattern", "outcome"))
__all__ = ["COLUMNS", "SCHEMA_VERSION", "DecisionStore", "db_path", "iso", "open_store"]


def db_path(project_dir: str) -> str:
    return os.path.join(governance_dir(project_dir), DB_NAME)


def iso(seconds: float | None) -> str | None:
    if seconds is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def _row(row: Row) -> dict[str, Any]:
    item = dict(zip(COLUMNS, row, strict=False))
    for key in ("reasons", "tags", "context"):
        item[key] = jsoncodec.loads(item[key])   # json's own parser, without its overhead
    item["created_at"] = iso(item["created_at"])
    item["reviewed_at"] = iso(item["reviewed_at"])
    return item


def _brief(row: Row) -> dict[str, Any]:
    """A hit's ``id``, ``pattern``, ``outcome`` and ``seq`` only."""
    return {"id": row[_ID], "pattern": row[_PATTERN], "outcome": row[_OUTCOME], "seq": row[-1]}


def _with_seq(row: Row) -> dict[str, Any]:
    item = _row(row[:-1])
    item["seq"] = row[-1]
    return item


def _record(decision_id: str, agent_id: str, action: dict[str, Any], state: dict[str, Any],
            created: float) -> Record:
    tags = action["tags"]
    reasons = action["reasons"]
    return Record(decision_id, agent_id, action["description"], action["category"],
                  action["stakes"], action["confidence"], json.dumps(reasons), json.dumps(tags),
                  action["pattern"], json.dumps(action["context"]), state.get("state"),
                  state.get("cycle"), state.get("phase"), state.get("work_item"), created,
                  tags, " ".join(r["text"] for r in reasons), words(decision_text(action)))


class DecisionStore:
    """Record, review and query decisions in one engine: a project's SQLite file (``path``), or
    ``engine`` (a PostgreSQL database, scoped to one project or, read-only, to the team)."""

    def __init__(self, path: str | None = None, *, engine: Engine | None = None,
                 stamp_dir: str | None = None) -> None:
        if engine is None:
            if path is None:
                raise TypeError("DecisionStore needs a path or an engine")
            engine = SqliteEngine(path)
        self.engine = engine
        self.path = path or engine.where
        # where a review is announced to what watches reviewed outcomes (the knowledge index)
        self.stamp_dir = stamp_dir or (os.path.dirname(path) if path else None)

    @classmethod
    def for_project(cls, project_dir: str, database: str | None = None) -> DecisionStore:
        """The project's store: its SQLite file, or, with ``database`` or
        ``GOVERNANCE_DATABASE_URL``, its rows in that PostgreSQL database."""
        url = database_url(database)
        if url is None:
            return cls(db_path(project_dir))
        from governance.storage.database import project_id

        return cls.for_project_id(url, project_id(project_dir),
                                  stamp_dir=governance_dir(project_dir))

    @classmethod
    def for_project_id(cls, database: str, project: str, *, across: bool = False,
                       stamp_dir: str | None = None) -> DecisionStore:
        """Project ``project``'s rows in the PostgreSQL database ``database`` (a server that
        serves many projects opens them by id); with ``across`` its queries, calibration and
        patterns read every project's decisions while it records into its own."""
        from governance.storage.database import require_driver

        require_driver()
        from governance.storage.postgres import PostgresEngine

        return cls(engine=PostgresEngine(database, project, across=across), stamp_dir=stamp_dir)

    @classmethod
    def for_team(cls, database: str | None = None) -> DecisionStore:
        """Every project's decisions in the team's PostgreSQL database, read-only: queries,
        calibration and patterns across projects."""
        from governance.errors import StorageError
        from governance.storage.database import ENV, require_driver

        url = database_url(database)
        if url is None:
            raise StorageError("a team-wide view needs the team's PostgreSQL database",
                               fix=f"pass --database postgresql://... or set {ENV}")
        require_driver()
        from governance.storage.postgres import PostgresEngine

        return cls(engine=PostgresEngine(url, None))

    @property
    def db(self) -> sqlite3.Connection:
        """The SQLite connection (the group-commit writer, benchmarks and tests use it)."""
        if not isinstance(self.engine, SqliteEngine):
            raise TypeError(f"the store at {self.engine.where} is not a SQLite file")
        return self.engine.db

    def close(self) -> None:
        self.engine.close()

    # -- writing ---------------------------------------------------------------------------
    def record(self, action: dict[str, Any], agent_id: str, state: dict[str, Any] | None = None,
               now: float | None = None) -> dict[str, Any]:
        """Store a validated action (see :mod:`governance.decisions.fields`); return the decision."""
        state = state or {}
        for _ in range(8):
            record = _record("dec-" + os.urandom(4).hex(), agent_id, action, state,
                             time.time() if now is None else now)
            try:
                self.engine.insert([record])
            except self.engine.integrity_errors:
                continue
            # the decision as a read gives it back (no outcome yet), without reading it
            return _row((*record[:15], None, None, None))
        raise DecisionInputError("could not allocate a unique decision id.", key="id")

    def insert_many(self, rows: Iterable[tuple[str, str, dict[str, Any], dict[str, Any], float]]
                    ) -> int:
        """Insert (id, agent_id, action, state, created_at) rows in one transaction."""
        return self.engine.insert([_record(*row) for row in rows])

    @staticmethod
    def insert_rows(cursor: sqlite3.Cursor,
                    rows: Iterable[tuple[str, str, dict[str, Any], dict[str, Any], float]]
                    ) -> int:
        """Insert rows inside the caller's SQLite transaction (the group-commit writer's)."""
        return insert_records(cursor, (_record(*row) for row in rows))

    def review(self, decision_id: str, outcome: str, note: str = "",
               now: float | None = None) -> dict[str, Any]:
        if outcome not in OUTCOMES:
            raise DecisionInputError(f"expected one of {', '.join(OUTCOMES)}, got {outcome!r}.",
                                     key="outcome", fix="pick one of " + ", ".join(OUTCOMES))
        if not self.engine.review(decision_id, outcome, note, time.time() if now is None else now):
            raise DecisionInputError(f"no decision with id {decision_id!r}.", key="decision_id",
                                     fix="use an id from `governance decisions query`.")
        if self.stamp_dir:   # what watches reviewed outcomes (the knowledge index) sees this
            try:
                replace_file(os.path.join(self.stamp_dir, REVIEWS_STAMP),
                             repr(time.time()).encode())
            except OSError:
                pass
        found = self.get(decision_id)
        assert found is not None
        return found

    # -- reading ---------------------------------------------------------------------------
    def get(self, decision_id: str) -> dict[str, Any] | None:
        row = self.engine.get(decision_id)
        return _row(row) if row else None

    def count(self) -> int:
        return self.engine.count()

    def doc_counts(self, terms: list[str]) -> tuple[int, dict[str, int]]:
        """(number of decisions, number of decisions holding each term)."""
        return self.engine.doc_counts(terms)

    def filters(self, category: str | None = None, tags: Sequence[str] = (),
                outcome: str | None = None, agent_id: str | None = None,
                since: float | None = None, until: float | None = None) -> Where:
        """The engine's SQL conditions (on alias ``d``) and parameters for the query filters."""
        return self.engine.filters(category, tags, outcome, agent_id, since, until)

    def query(self, text: str | None = None, *, limit: int = 10, ranking: str = "keyword",
              **filters: Any) -> list[dict[str, Any]]:
        """Decisions matching ``text`` (best first, with ``similarity``) or, without text, the
        newest first; the filters (category, tags, outcome, agent_id, since, until) narrow the
        result. ``ranking="hybrid"`` adds sentence-embedding similarity when the optional model
        is installed (see :mod:`governance.decisions.ranking`)."""
        return self._found(text, limit, ranking, filters, None)

    def query_beside(self, text: str, record: Callable[[], dict[str, Any]], *, limit: int = 10,
                     ranking: str = "keyword", whole: int | None = None, **filters: Any
                     ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """:meth:`query` and ``record`` (which records a decision and returns it) in one: the
        recording starts once the match's term counts are read, so they never count the new
        decision, and runs beside the match where the engine lets a store's statements run at
        once (:meth:`beside`), else after it; the new decision is never among the hits. When the
        query fails, a recording not yet started never starts, and one under way ends before the
        error is raised. With ``whole``, a keyword hit after the first ``whole`` may hold only its
        ``id``, ``pattern`` and ``outcome`` (what a pattern count weighs): the rest of it is
        neither decoded nor compared with the query."""
        started: list[Pending[dict[str, Any]]] = []

        def start() -> None:
            started.append(self.beside(record))

        try:
            found = self._found(text, limit + 1, ranking, filters, start,
                                None if whole is None else whole + 1)
        except BaseException:
            if started and not started[0].cancel():
                started[0].exception()   # under way: done before the error is said
            raise
        recorded = started[0].result() if started else record()
        return [item for item in found if item["id"] != recorded["id"]][:limit], recorded

    def beside(self, work: Callable[[], T]) -> Pending[T]:
        """``work`` beside the caller's next statements, or now (:meth:`Engine.beside`)."""
        return self.engine.beside(work)

    def _found(self, text: str | None, limit: int, ranking: str, filters: dict[str, Any],
               then: Callable[[], None] | None, whole: int | None = None
               ) -> list[dict[str, Any]]:
        where, params = self.filters(**filters)
        terms = query_terms(text or "")
        found: list[dict[str, Any]] | None = None
        if ranking == "hybrid" and text:
            from governance.decisions.ranking import hybrid_query

            found = hybrid_query(self, text, where, params, limit)
        if found is None and terms:
            found = self.keyword_query(terms, where, params, limit, then, whole)
        if found is None:
            if text:
                return []
            return [_row(row) for row in self.engine.newest((where, params), limit)]
        for item in found:
            item.pop("seq", None)
        return found

    def keyword_query(self, terms: list[str], where: list[str], params: list[Any], limit: int,
                      then: Callable[[], None] | None = None, whole: int | None = None
                      ) -> list[dict[str, Any]]:
        """Hits for ``terms`` ranked by the engine's full-text index, with a keyword
        ``similarity`` and their ``seq``; ``then`` is called once the terms' counts are read.
        Past the first ``whole`` (None: none), a hit is brief (:func:`_brief`).

        The terms matched on are :func:`governance.decisions.matching.match_terms`'s: a common
        word cannot make a query score most of the store (it still counts in ``similarity``)."""
        total, docs = self.doc_counts(terms)
        if then is not None:
            then()
        present = [term for term in terms if docs[term]]
        if not present:
            return []
        selective, recent = matching.match_terms(present, docs, total)
        # Filters that leave too few of the index's best rows widen the match once.
        ranked = limit if not where else max(limit * matching.FILTERED_WIDTH, 200)
        window = (matching.RECENT_WINDOW, matching.RECENT_BUDGET) if recent else None
        rows = self.engine.keyword_hits(selective, total, docs, (where, params), ranked, limit,
                                        window)
        if where and len(rows) < limit:
            rows = self.engine.keyword_hits(selective, total, docs, (where, params), None, limit,
                                            window)
        alike = matching.Similarity(total, docs)
        result: list[dict[str, Any]] = []
        for row in rows:
            if whole is not None and len(result) >= whole:
                result.append(_brief(row))
                continue
            item = _with_seq(row)
            item["similarity"] = alike(decision_text(item))
            result.append(item)
        return result

    def rows_by_seq(self, seqs: Sequence[int], where: list[str], params: list[Any]
                    ) -> list[dict[str, Any]]:
        return [_with_seq(row) for row in self.engine.rows_by_seq(seqs, (where, params))]

    def calibration_sums(self, agent_id: str | None = None, category: str | None = None
                         ) -> dict[str, dict[int, tuple[int, float, float, float, float, float]]]:
        """Per category and confidence bin, the sums calibration needs over reviewed, not
        abandoned decisions: (count, confidence, score, confidence^2, confidence*score,
        score^2). A few rows, whatever the number of decisions."""
        found: dict[str, dict[int, tuple[int, float, float, float, float, float]]] = {}
        for cat, index, n, conf, score, conf2, conf_score, score2 in \
                self.engine.calibration_rows(agent_id, category):
            found.setdefault(str(cat), {})[int(index)] = (int(n), float(conf), float(score),
                                                          float(conf2), float(conf_score),
                                                          float(score2))
        return found

    def reviewed(self, agent_id: str | None = None, category: str | None = None
                 ) -> list[tuple[str, float, str]]:
        """(category, confidence, outcome) of reviewed, not abandoned decisions."""
        return self.engine.reviewed(agent_id, category)
