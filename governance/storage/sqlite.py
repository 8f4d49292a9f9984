"""The SQLite engine: one embedded database per project (WAL, FTS5), the default.

``<project>/.claude/governance/decisions.db`` holds every decision, an FTS5 index of its searchable
fields ranked with BM25, the number of decisions holding each word (``decision_terms``), the tags
for filtering, sentence vectors for hybrid ranking, and calibration sums per agent x category x
confidence bin kept by triggers (a review changes one row). The schema is given whenever the file's
``user_version`` is not :data:`SCHEMA_VERSION`.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from governance.project import open_private_db
from governance.storage.engine import (
    COLUMNS,
    FIELD_WEIGHTS,
    CalibrationRow,
    Later,
    Record,
    Row,
    T,
    Where,
    column_filters,
)

SCHEMA_VERSION = 2
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
SELECT = ", ".join(f"d.{name}" for name in COLUMNS)
BM25 = ", ".join(str(w) for w in FIELD_WEIGHTS)


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


def insert_records(cursor: sqlite3.Cursor, records: Iterable[Record]) -> int:
    """Insert ``records`` inside the caller's transaction (the group-commit writer's batch)."""
    count = 0
    for rec in records:
        cursor.execute(
            "INSERT INTO decisions (id, agent_id, description, category, stakes, "
            "confidence, reasons, tags, pattern, context, state, cycle, phase, work_item, "
            "created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rec[:15])
        seq = cursor.lastrowid
        cursor.executemany("INSERT INTO decision_tags (tag, seq) VALUES (?, ?)",
                           [(tag, seq) for tag in rec.tag_list])
        cursor.execute(
            "INSERT INTO decisions_fts (rowid, description, reasons, tags, pattern) "
            "VALUES (?,?,?,?,?)",
            (seq, rec.description, rec.reasons_text, " ".join(rec.tag_list), rec.pattern))
        cursor.executemany(
            "INSERT INTO decision_terms (term, docs) VALUES (?, 1) "
            "ON CONFLICT (term) DO UPDATE SET docs = docs + 1",
            [(word,) for word in rec.terms])
        count += 1
    return count


class SqliteEngine:
    """One project's decisions in one SQLite file."""

    name = "sqlite"
    integrity_errors: tuple[type[BaseException], ...] = (sqlite3.IntegrityError,)

    def __init__(self, path: str) -> None:
        self.where = path
        self.db = open_store(path)

    def close(self) -> None:
        self.db.close()

    @staticmethod
    def beside(work: Callable[[], T]) -> Later[T]:
        """Run when its result is asked for: one connection, one statement at a time."""
        return Later(work)

    # -- writing -------------------------------------------------------------------------------
    def insert(self, records: Sequence[Record]) -> int:
        cursor = self.db.cursor()
        cursor.execute("BEGIN IMMEDIATE")
        try:
            count = insert_records(cursor, records)
            cursor.execute("COMMIT")
        except BaseException:
            cursor.execute("ROLLBACK")
            raise
        return count

    def review(self, decision_id: str, outcome: str, note: str, at: float) -> bool:
        return bool(self.db.execute(
            "UPDATE decisions SET outcome = ?, outcome_note = ?, reviewed_at = ? WHERE id = ?",
            (outcome, note, at, decision_id)).rowcount)

    # -- reading -------------------------------------------------------------------------------
    def get(self, decision_id: str) -> Row | None:
        row: Row | None = self.db.execute(
            f"SELECT {', '.join(COLUMNS)} FROM decisions WHERE id = ?", (decision_id,)).fetchone()
        return row

    def count(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM decisions").fetchone()[0])

    def doc_counts(self, terms: list[str]) -> tuple[int, dict[str, int]]:
        total = int(self.db.execute("SELECT coalesce(max(seq), 0) FROM decisions").fetchone()[0])
        marks = ",".join("?" * len(terms))
        docs = dict(self.db.execute(
            f"SELECT term, docs FROM decision_terms WHERE term IN ({marks})", terms).fetchall())
        return total, {term: int(docs.get(term, 0)) for term in terms}

    def filters(self, category: str | None, tags: Sequence[str], outcome: str | None,
                agent_id: str | None, since: float | None, until: float | None) -> Where:
        where, params = column_filters("?", category, outcome, agent_id, since, until)
        for tag in tags:
            where.append("d.seq IN (SELECT seq FROM decision_tags WHERE tag = ?)")
            params.append(tag.lower())
        return where, params

    def newest(self, where: Where, limit: int) -> list[Row]:
        conditions, params = where
        sql = (f"SELECT {SELECT} FROM decisions d"
               + (" WHERE " + " AND ".join(conditions) if conditions else "")
               + " ORDER BY d.created_at DESC, d.seq DESC LIMIT ?")
        return self.db.execute(sql, [*params, limit]).fetchall()

    def keyword_hits(self, terms: list[str], total: int, docs: dict[str, int], where: Where,
                     ranked: int | None, limit: int, recent: tuple[int, int] | None
                     ) -> list[Row]:
        conditions, params = where
        # The full-text index ranks its matches alone, to a limit; only those rows are joined
        # with the decisions (and filtered).
        inner = (f"SELECT rowid AS seq, bm25(decisions_fts, {BM25}) AS score "
                 f"FROM decisions_fts WHERE decisions_fts MATCH ? ORDER BY score LIMIT ?")
        if recent:   # the newest matches only (the index stops after them), then by score
            window, budget = recent
            inner = (f"SELECT seq, score FROM (SELECT rowid AS seq, bm25(decisions_fts, "
                     f"{BM25}) AS score FROM decisions_fts WHERE decisions_fts MATCH ? "
                     f"AND rowid > {int(total - window)} ORDER BY rowid DESC "
                     f"LIMIT {int(budget)}) ORDER BY score LIMIT ?")
        sql = (f"SELECT {SELECT}, d.seq FROM ({inner}) AS hits "
               f"JOIN decisions d ON d.seq = hits.seq"
               + (" WHERE " + " AND ".join(conditions) if conditions else "")
               + " ORDER BY hits.score LIMIT ?")
        match = " OR ".join(f'"{term}"' for term in terms)
        return self.db.execute(sql, [match, -1 if ranked is None else ranked, *params,
                                     limit]).fetchall()

    def rows_by_seq(self, seqs: Sequence[int], where: Where) -> list[Row]:
        conditions, params = where
        marks = ",".join("?" * len(seqs))
        sql = (f"SELECT {SELECT}, d.seq FROM decisions d WHERE d.seq IN ({marks})"
               + "".join(" AND " + c for c in conditions))
        return self.db.execute(sql, [*seqs, *params]).fetchall()

    def calibration_rows(self, agent_id: str | None, category: str | None
                         ) -> list[CalibrationRow]:
        sql, params = _whose("SELECT category, bin, sum(n), sum(conf), sum(score), sum(conf2), "
                             "sum(conf_score), sum(score2) FROM calibration_sums WHERE n > 0",
                             agent_id, category)
        return self.db.execute(sql + " GROUP BY category, bin", params).fetchall()

    def reviewed(self, agent_id: str | None, category: str | None
                 ) -> list[tuple[str, float, str]]:
        sql, params = _whose("SELECT category, confidence, outcome FROM decisions "
                             "WHERE outcome IN ('success', 'partial', 'failure')",
                             agent_id, category)
        return [(str(c), float(p), str(o)) for c, p, o in self.db.execute(sql, params)]

    # -- sentence vectors ----------------------------------------------------------------------
    def seq_of(self, decision_id: str) -> int | None:
        row = self.db.execute("SELECT seq FROM decisions WHERE id = ?", (decision_id,)).fetchone()
        return None if row is None else int(row[0])

    def unembedded(self, seqs: Sequence[int] | None) -> list[tuple[int, str, str, str, str]]:
        sql = ("SELECT d.seq, d.description, d.pattern, d.tags, d.reasons FROM decisions d "
               "LEFT JOIN decision_vectors v ON v.seq = d.seq WHERE v.seq IS NULL")
        params: list[Any] = []
        if seqs is not None:
            sql += f" AND d.seq IN ({','.join('?' * len(seqs))})"
            params = list(seqs)
        return self.db.execute(sql, params).fetchall()

    def put_vectors(self, pairs: Sequence[tuple[int, bytes]]) -> None:
        self.db.executemany("INSERT OR REPLACE INTO decision_vectors (seq, vec) VALUES (?, ?)",
                            pairs)

    def vectors(self, seqs: Sequence[int] | None) -> list[tuple[int, bytes]]:
        if seqs is None:
            return self.db.execute("SELECT seq, vec FROM decision_vectors").fetchall()
        marks = ",".join("?" * len(seqs))
        return self.db.execute(f"SELECT seq, vec FROM decision_vectors WHERE seq IN ({marks})",
                               list(seqs)).fetchall()


def _whose(sql: str, agent_id: str | None, category: str | None) -> tuple[str, list[Any]]:
    """``sql`` narrowed to one agent and one category, when given, with its parameters."""
    params: list[Any] = []
    for column, value in (("agent_id", agent_id), ("category", category)):
        if value:
            sql += f" AND {column} = ?"
            params.append(value)
    return sql, params


def schema_version(path: str) -> int | None:
    """The ``user_version`` of the store at ``path``, read without creating or changing it; None
    when there is no file."""
    if not os.path.exists(path):
        return None
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=OPEN_TIMEOUT)
    try:
        return int(db.execute("PRAGMA user_version").fetchone()[0])
    finally:
        db.close()
