"""The decision memory: one embedded SQLite database per project (WAL, FTS5).

``<project>/.claude/governance/decisions.db`` holds every recorded decision with its cycle state
and, once reviewed, its outcome. Text queries rank with FTS5's BM25; each hit gets a ``similarity``
in 0..1: the IDF-weighted share of the query's terms that the decision contains (1 when it holds
every term; rare terms weigh more than common ones).
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import time
from collections.abc import Iterable, Sequence
from typing import Any

from governance.decisions.fields import OUTCOMES, DecisionInputError
from governance.decisions.search_text import decision_text, query_terms, words
from governance.project import (
    REVIEWS_STAMP,
    governance_dir,
    open_private_db,
    replace_file,
)

DB_NAME = "decisions.db"
SCHEMA_VERSION = 2
BM25_WEIGHTS = (1.0, 0.5, 1.0, 1.0)  # description, reasons, tags, pattern
COMMON_SHARE = 0.05  # a term in more than 5% of the decisions ...
COMMON_MIN = 500  # ... and in more than 500 of them is too common to drive a match
MATCH_BUDGET = 1500   # a match scores at most about this many decisions: the rarest terms first
RECENT_WINDOW = 20000  # a store larger than this, whose rarest query term is over the budget,
RECENT_TERMS = 3       # is matched on its rarest few terms, newest first, to
RECENT_BUDGET = 500    # this many matches
FILTERED_WIDTH = 20    # with filters, the index's best limit x this are joined and filtered
OPEN_TIMEOUT = 10.0    # seconds an open waits for another connection (SQLite's busy timeout)
SCHEMA = """
CREATE TABLE IF NOT EXISTS decisions (
    seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, agent_id TEXT NOT NULL,
    description TEXT NOT NULL, category TEXT NOT NULL, stakes TEXT NOT NULL,
    confidence REAL NOT NULL, reasons TEXT NOT NULL, tags TEXT NOT NULL, pattern TEXT NOT NULL,
    context TEXT NOT NULL, state TEXT, cycle TEXT, phase TEXT, work_item TEXT,
    created_at REAL NOT NULL, outcome TEXT, outcome_note TEXT, reviewed_at REAL);
CREATE INDEX IF NOT EXISTS decisions_calibration ON decisions (agent_id, category, outcome);
CREATE INDEX IF NOT EXISTS decisions_created ON decisions (created_at);
CREATE TABLE IF NOT EXISTS decision_tags (
    tag TEXT NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (tag, seq)) WITHOUT ROWID;
CREATE VIRTUAL TABLE IF NOT EXISTS decisions_fts USING fts5 (
    description, reasons, tags, pattern, content='', tokenize='unicode61 remove_diacritics 2');
CREATE TABLE IF NOT EXISTS decision_terms (term TEXT PRIMARY KEY, docs INTEGER NOT NULL)
    WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS decision_vectors (seq INTEGER PRIMARY KEY, vec BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS calibration_sums (
    agent_id TEXT NOT NULL, category TEXT NOT NULL, bin INTEGER NOT NULL, n INTEGER NOT NULL,
    conf REAL NOT NULL, score REAL NOT NULL, conf2 REAL NOT NULL, conf_score REAL NOT NULL,
    score2 REAL NOT NULL, PRIMARY KEY (agent_id, category, bin)) WITHOUT ROWID;
DELETE FROM calibration_sums;
INSERT INTO calibration_sums
    SELECT agent_id, category, BIN, count(*), sum(confidence), sum(SCORE),
           sum(confidence * confidence), sum(confidence * SCORE), sum(SCORE * SCORE)
    FROM decisions WHERE outcome IN ('success', 'partial', 'failure')
    GROUP BY agent_id, category, BIN;
CREATE TRIGGER IF NOT EXISTS calibration_insert AFTER INSERT ON decisions
    WHEN NEW.outcome IN ('success', 'partial', 'failure') BEGIN ADD_NEW END;
CREATE TRIGGER IF NOT EXISTS calibration_update
    AFTER UPDATE OF outcome, confidence, category, agent_id ON decisions BEGIN
    SUB_OLD ADD_NEW END;
CREATE TRIGGER IF NOT EXISTS calibration_delete AFTER DELETE ON decisions BEGIN SUB_OLD END;
"""
# Calibration from sums kept per agent x category x confidence bin by the triggers above (a
# review changes one row), never from the agent's whole history.
_SCORE = ("(CASE {r}.outcome WHEN 'success' THEN 1.0 WHEN 'partial' THEN 0.5 "
          "WHEN 'failure' THEN 0.0 END)")
_BIN = "min(CAST({r}.confidence * 5 AS INTEGER), 4)"
_ADD = ("INSERT INTO calibration_sums SELECT NEW.agent_id, NEW.category, BIN, 1, NEW.confidence, "
        "SCORE, NEW.confidence * NEW.confidence, NEW.confidence * SCORE, SCORE * SCORE "
        "WHERE NEW.outcome IN ('success', 'partial', 'failure') "
        "ON CONFLICT (agent_id, category, bin) DO UPDATE SET n = n + 1, "
        "conf = conf + excluded.conf, score = score + excluded.score, "
        "conf2 = conf2 + excluded.conf2, conf_score = conf_score + excluded.conf_score, "
        "score2 = score2 + excluded.score2;").replace("BIN", _BIN).replace("SCORE", _SCORE) \
    .format(r="NEW")
_SUB = ("UPDATE calibration_sums SET n = n - 1, conf = conf - OLD.confidence, "
        "score = score - SCORE, conf2 = conf2 - OLD.confidence * OLD.confidence, "
        "conf_score = conf_score - OLD.confidence * SCORE, score2 = score2 - SCORE * SCORE "
        "WHERE OLD.outcome IN ('success', 'partial', 'failure') AND agent_id = OLD.agent_id "
        "AND category = OLD.category AND bin = BIN;").replace("BIN", _BIN) \
    .replace("SCORE", _SCORE).format(r="OLD")
SCHEMA = SCHEMA.replace("ADD_NEW", _ADD).replace("SUB_OLD", _SUB) \
    .replace("BIN", _BIN.format(r="decisions")).replace("SCORE", _SCORE.format(r="decisions"))
COLUMNS = ("id", "agent_id", "description", "category", "stakes", "confidence", "reasons", "tags",
           "pattern", "context", "state", "cycle", "phase", "work_item", "created_at", "outcome",
           "outcome_note", "reviewed_at")


def db_path(project_dir: str) -> str:
    return os.path.join(governance_dir(project_dir), DB_NAME)


def iso(seconds: float | None) -> str | None:
    if seconds is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


SELECT = ", ".join(f"d.{name}" for name in COLUMNS)


def _row(row: Sequence[Any]) -> dict[str, Any]:
    item = dict(zip(COLUMNS, row, strict=False))
    for key in ("reasons", "tags", "context"):
        item[key] = json.loads(item[key])
    item["created_at"] = iso(item["created_at"])
    item["reviewed_at"] = iso(item["reviewed_at"])
    return item


def open_store(path: str, timeout: float = OPEN_TIMEOUT) -> sqlite3.Connection:
    """The store's connection, waiting up to ``timeout`` for another connection that holds it.

    ``PRAGMA journal_mode=WAL`` (run on every open) answers "database is locked" at once, without
    SQLite's busy timeout, while another connection switches a new file to WAL or writes to it
    before the switch: two threads opening a new store together made one of them fail. So a busy
    open is retried, with a growing pause, until ``timeout``."""
    deadline = time.monotonic() + timeout
    pause = 0.002
    while True:
        try:
            return open_private_db(path, SCHEMA, SCHEMA_VERSION)
        except sqlite3.OperationalError as exc:
            busy = (getattr(exc, "sqlite_errorcode", 0) & 0xFF) in (sqlite3.SQLITE_BUSY,
                                                                    sqlite3.SQLITE_LOCKED)
            if not busy or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


class DecisionStore:
    """Record, review and query decisions in one SQLite file."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.db = open_store(path)

    @classmethod
    def for_project(cls, project_dir: str) -> DecisionStore:
        return cls(db_path(project_dir))

    def close(self) -> None:
        self.db.close()

    # -- writing ---------------------------------------------------------------------------
    def record(self, action: dict[str, Any], agent_id: str, state: dict[str, Any] | None = None,
               now: float | None = None) -> dict[str, Any]:
        """Store a validated action (see :mod:`governance.decisions.fields`); return the decision."""
        state = state or {}
        for _ in range(8):
            decision_id = "dec-" + os.urandom(4).hex()
            try:
                self.insert_many([(decision_id, agent_id, action, state,
                                   time.time() if now is None else now)])
            except sqlite3.IntegrityError:
                continue
            found = self.get(decision_id)
            assert found is not None
            return found
        raise DecisionInputError("could not allocate a unique decision id.", key="id")

    def insert_many(self, rows: Iterable[tuple[str, str, dict[str, Any], dict[str, Any], float]]
                    ) -> int:
        """Insert (id, agent_id, action, state, created_at) rows in one transaction."""
        cursor = self.db.cursor()
        cursor.execute("BEGIN IMMEDIATE")
        try:
            count = self.insert_rows(cursor, rows)
            cursor.execute("COMMIT")
        except BaseException:
            cursor.execute("ROLLBACK")
            raise
        return count

    @staticmethod
    def insert_rows(cursor: sqlite3.Cursor,
                    rows: Iterable[tuple[str, str, dict[str, Any], dict[str, Any], float]]
                    ) -> int:
        """Insert rows inside the caller's transaction (see :meth:`insert_many`)."""
        count = 0
        for decision_id, agent_id, action, state, created in rows:
            tags = action["tags"]
            reasons = action["reasons"]
            cursor.execute(
                "INSERT INTO decisions (id, agent_id, description, category, stakes, "
                "confidence, reasons, tags, pattern, context, state, cycle, phase, work_item, "
                "created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (decision_id, agent_id, action["description"], action["category"],
                 action["stakes"], action["confidence"], json.dumps(reasons),
                 json.dumps(tags), action["pattern"], json.dumps(action["context"]),
                 state.get("state"), state.get("cycle"), state.get("phase"),
                 state.get("work_item"), created))
            seq = cursor.lastrowid
            cursor.executemany("INSERT INTO decision_tags (tag, seq) VALUES (?, ?)",
                               [(tag, seq) for tag in tags])
            cursor.execute(
                "INSERT INTO decisions_fts (rowid, description, reasons, tags, pattern) "
                "VALUES (?,?,?,?,?)",
                (seq, action["description"], " ".join(r["text"] for r in reasons),
                 " ".join(tags), action["pattern"]))
            cursor.executemany(
                "INSERT INTO decision_terms (term, docs) VALUES (?, 1) "
                "ON CONFLICT (term) DO UPDATE SET docs = docs + 1",
                [(word,) for word in words(decision_text(action))])
            count += 1
        return count

    def review(self, decision_id: str, outcome: str, note: str = "",
               now: float | None = None) -> dict[str, Any]:
        if outcome not in OUTCOMES:
            raise DecisionInputError(f"expected one of {', '.join(OUTCOMES)}, got {outcome!r}.",
                                     key="outcome", fix="pick one of " + ", ".join(OUTCOMES))
        changed = self.db.execute(
            "UPDATE decisions SET outcome = ?, outcome_note = ?, reviewed_at = ? WHERE id = ?",
            (outcome, note, time.time() if now is None else now, decision_id)).rowcount
        if not changed:
            raise DecisionInputError(f"no decision with id {decision_id!r}.", key="decision_id",
                                     fix="use an id from `governance decisions query`.")
        try:   # what watches reviewed outcomes (the knowledge index) sees a review by this stamp
            replace_file(os.path.join(os.path.dirname(self.path), REVIEWS_STAMP),
                         repr(time.time()).encode())
        except OSError:
            pass
        found = self.get(decision_id)
        assert found is not None
        return found

    # -- reading ---------------------------------------------------------------------------
    def get(self, decision_id: str) -> dict[str, Any] | None:
        row = self.db.execute(f"SELECT {', '.join(COLUMNS)} FROM decisions WHERE id = ?",
                              (decision_id,)).fetchone()
        return _row(row) if row else None

    def count(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM decisions").fetchone()[0])

    def doc_counts(self, terms: list[str]) -> tuple[int, dict[str, int]]:
        """(number of decisions, number of decisions holding each term)."""
        total = int(self.db.execute("SELECT coalesce(max(seq), 0) FROM decisions").fetchone()[0])
        marks = ",".join("?" * len(terms))
        docs = dict(self.db.execute(
            f"SELECT term, docs FROM decision_terms WHERE term IN ({marks})", terms).fetchall())
        return total, {term: int(docs.get(term, 0)) for term in terms}

    @staticmethod
    def filters(category: str | None = None, tags: Sequence[str] = (),
                outcome: str | None = None, agent_id: str | None = None,
                since: float | None = None, until: float | None = None
                ) -> tuple[list[str], list[Any]]:
        """SQL conditions (on alias ``d``) and their parameters for the query filters."""
        where: list[str] = []
        params: list[Any] = []
        for column, value in (("d.category", category), ("d.agent_id", agent_id)):
            if value:
                where.append(f"{column} = ?")
                params.append(value)
        if outcome == "unreviewed":
            where.append("d.outcome IS NULL")
        elif outcome:
            where.append("d.outcome = ?")
            params.append(outcome)
        if since is not None:
            where.append("d.created_at >= ?")
            params.append(since)
        if until is not None:
            where.append("d.created_at < ?")
            params.append(until)
        for tag in tags:
            where.append("d.seq IN (SELECT seq FROM decision_tags WHERE tag = ?)")
            params.append(tag.lower())
        return where, params

    def query(self, text: str | None = None, *, limit: int = 10, ranking: str = "keyword",
              **filters: Any) -> list[dict[str, Any]]:
        """Decisions matching ``text`` (best first, with ``similarity``) or, without text, the
        newest first; the filters (category, tags, outcome, agent_id, since, until) narrow the
        result. ``ranking="hybrid"`` adds sentence-embedding similarity when the optional model
        is installed (see :mod:`governance.decisions.ranking`)."""
        where, params = self.filters(**filters)
        terms = query_terms(text or "")
        found: list[dict[str, Any]] | None = None
        if ranking == "hybrid" and text:
            from governance.decisions.ranking import hybrid_query

            found = hybrid_query(self, text, where, params, limit)
        if found is None and terms:
            found = self.keyword_query(terms, where, params, limit)
        if found is None:
            if text:
                return []
            sql = (f"SELECT {SELECT} FROM decisions d"
                   + (" WHERE " + " AND ".join(where) if where else "")
                   + " ORDER BY d.created_at DESC, d.seq DESC LIMIT ?")
            return [_row(row) for row in self.db.execute(sql, [*params, limit])]
        for item in found:
            item.pop("seq", None)
        return found

    def keyword_query(self, terms: list[str], where: list[str], params: list[Any], limit: int
                      ) -> list[dict[str, Any]]:
        """BM25-ranked hits for ``terms`` with a keyword ``similarity`` and their ``seq``.

        Terms held by more than :data:`COMMON_SHARE` of a large store are left out of the match
        (while rarer terms remain) so that one common word cannot make a query score most of the
        store; they still count in ``similarity``."""
        total, docs = self.doc_counts(terms)
        present = [term for term in terms if docs[term]]
        if not present:
            return []
        selective, recent = self.match_terms(present, docs, total)
        weights = ", ".join(str(w) for w in BM25_WEIGHTS)
        # The full-text index ranks its matches alone, to a limit; only those rows are joined
        # with the decisions (and filtered). Filters that leave too few rows widen it once.
        inner = (f"SELECT rowid AS seq, bm25(decisions_fts, {weights}) AS score "
                 f"FROM decisions_fts WHERE decisions_fts MATCH ? ORDER BY score LIMIT ?")
        if recent:   # the newest matches only (the index stops after them), then by score
            inner = (f"SELECT seq, score FROM (SELECT rowid AS seq, bm25(decisions_fts, "
                     f"{weights}) AS score FROM decisions_fts WHERE decisions_fts MATCH ? "
                     f"AND rowid > {int(total - RECENT_WINDOW)} ORDER BY rowid DESC "
                     f"LIMIT {RECENT_BUDGET}) ORDER BY score LIMIT ?")
        sql = (f"SELECT {SELECT}, d.seq, hits.score FROM ({inner}) AS hits "
               f"JOIN decisions d ON d.seq = hits.seq"
               + (" WHERE " + " AND ".join(where) if where else "")
               + " ORDER BY hits.score LIMIT ?")
        match = " OR ".join(f'"{term}"' for term in selective)
        ranked = limit if not where else max(limit * FILTERED_WIDTH, 200)
        rows = self.db.execute(sql, [match, ranked, *params, limit]).fetchall()
        if where and len(rows) < limit:
            rows = self.db.execute(sql, [match, -1, *params, limit]).fetchall()
        # An always-positive IDF per query term: log(1 + (N - n + 0.5) / (n + 0.5)).
        weights_by_term = {term: math.log(1 + (total - count + 0.5) / (count + 0.5))
                           for term, count in docs.items()}
        ideal = sum(weights_by_term.values()) or 1.0
        result = []
        for row in rows:
            item = _row(row[:-2])
            item["seq"] = row[-2]
            held = words(decision_text(item))
            covered = sum(w for term, w in weights_by_term.items() if term in held)
            item["similarity"] = round(covered / ideal, 3)
            result.append(item)
        return result

    @staticmethod
    def match_terms(present: list[str], docs: dict[str, int], total: int
                    ) -> tuple[list[str], bool]:
        """The terms a query matches on, and whether only the newest decisions are matched.

        Rarest first, a term is taken while the decisions the match would score stay within
        :data:`MATCH_BUDGET` (the rarest always); a term in more than :data:`COMMON_SHARE` of a
        large store is never taken (it still counts in ``similarity``). When even the rarest term
        is held by more than the budget in a store over :data:`RECENT_WINDOW`, the match takes
        the :data:`RECENT_TERMS` rarest terms among the newest :data:`RECENT_WINDOW` decisions
        and scores at most its newest :data:`RECENT_BUDGET` matches (the full-text index hands
        them over newest first and stops there: no guess of how a term's decisions spread over
        time, which a burst of alike decisions defeats). So
        the work of a query (BM25 scores each matched decision) is bounded whatever the store's
        size."""
        cutoff = max(COMMON_MIN, COMMON_SHARE * total)
        rarest = sorted(present, key=lambda term: (docs[term], term))
        if docs[rarest[0]] > MATCH_BUDGET and total > RECENT_WINDOW:
            taken = [term for term in rarest if docs[term] <= cutoff][:RECENT_TERMS]
            return [t for t in present if t in taken] or rarest[:1], True
        chosen: list[str] = []
        spent = 0
        for term in rarest:
            if docs[term] > cutoff or (chosen and spent + docs[term] > MATCH_BUDGET):
                break
            chosen.append(term)
            spent += docs[term]
        return [t for t in present if t in chosen] or rarest[:1], False

    def rows_by_seq(self, seqs: Sequence[int], where: list[str], params: list[Any]
                    ) -> list[dict[str, Any]]:
        marks = ",".join("?" * len(seqs))
        sql = (f"SELECT {SELECT}, d.seq FROM decisions d WHERE d.seq IN ({marks})"
               + "".join(" AND " + c for c in where))
        result = []
        for row in self.db.execute(sql, [*seqs, *params]):
            item = _row(row[:-1])
            item["seq"] = row[-1]
            result.append(item)
        return result

    def calibration_sums(self, agent_id: str | None = None, category: str | None = None
                         ) -> dict[str, dict[int, tuple[int, float, float, float, float, float]]]:
        """Per category and confidence bin, the sums calibration needs over reviewed, not
        abandoned decisions: (count, confidence, score, confidence^2, confidence*score,
        score^2). A few rows, whatever the number of decisions."""
        sql, params = _whose("SELECT category, bin, sum(n), sum(conf), sum(score), sum(conf2), "
                             "sum(conf_score), sum(score2) FROM calibration_sums WHERE n > 0",
                             agent_id, category)
        found: dict[str, dict[int, tuple[int, float, float, float, float, float]]] = {}
        for cat, index, n, conf, score, conf2, conf_score, score2 in self.db.execute(
                sql + " GROUP BY category, bin", params):
            found.setdefault(str(cat), {})[int(index)] = (int(n), float(conf), float(score),
                                                          float(conf2), float(conf_score),
                                                          float(score2))
        return found

    def reviewed(self, agent_id: str | None = None, category: str | None = None
                 ) -> list[tuple[str, float, str]]:
        """(category, confidence, outcome) of reviewed, not abandoned decisions."""
        sql, params = _whose("SELECT category, confidence, outcome FROM decisions "
                             "WHERE outcome IN ('success', 'partial', 'failure')",
                             agent_id, category)
        return [(str(c), float(p), str(o)) for c, p, o in self.db.execute(sql, params)]


def _whose(sql: str, agent_id: str | None, category: str | None) -> tuple[str, list[Any]]:
    """``sql`` narrowed to one agent and one category, when given, with its parameters."""
    params: list[Any] = []
    for column, value in (("agent_id", agent_id), ("category", category)):
        if value:
            sql += f" AND {column} = ?"
            params.append(value)
    return sql, params
