"""The PostgreSQL engine: the decisions of many projects in one database a team shares (the
``team`` extra: psycopg 3 and psycopg-pool), each row carrying its project's id.

Search (:mod:`governance.storage.bm25`): a project's match sums the BM25 parts of its query words'
rows in ``decision_postings``; a team-wide match, one of the newest decisions only, and one with a
word too long for the postings find their matches through a GIN index on (project, ``search``), a
``tsvector`` of the words both engines index, and rank them from each decision's ``frequencies``.
Either ranks with BM25 exactly as SQLite's FTS5 does, so both engines give the same hits in the
same order. Like SQLite's, the match
ranks its candidates alone to a limit before they are filtered, and ``recent`` keeps it to the
newest decisions. The ``similarity`` of a hit is computed by the decision store.

An engine opened with ``project_id=None`` reads every project (team-wide calibration, patterns
and queries) and refuses to write.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any, TypeVar

from governance.errors import StorageError
from governance.storage import bm25, pool
from governance.storage.database import masked
from governance.storage.engine import COLUMNS, CalibrationRow, Record, Row, Where, column_filters

T = TypeVar("T")

SELECT = ", ".join(f"d.{name}" for name in COLUMNS)
INSERTED = ("project_id", "seq", *COLUMNS[:15], "tag_list", "words", "frequencies", "search")
_CHECKED: set[tuple[str, str]] = set()   # (url, schema) found current by this process


def _value(row: Row | None) -> Any:
    """The first column of a row a statement always returns."""
    assert row is not None
    return row[0]


def _no_nul(record: Record) -> None:
    for key in ("id", "agent_id", "description", "pattern", "state", "cycle", "phase",
                "work_item"):
        value = getattr(record, key)
        if isinstance(value, str) and "\x00" in value:
            raise StorageError(f"{key} holds a NUL character, which PostgreSQL text cannot store",
                               key=key, fix="remove the NUL (\\0) characters from it")
    if any("\x00" in tag for tag in record.tag_list):
        raise StorageError("a tag holds a NUL character, which PostgreSQL text cannot store",
                           key="tags", fix="remove the NUL (\\0) characters from it")


class PostgresEngine:
    """One project's decisions (or, with ``project_id=None``, every project's, read-only) in the
    PostgreSQL database at ``url``. With ``across``, a project's store reads every project's
    decisions and writes into its own: how an agent with a team-wide token learns across
    repositories while its decisions stay in the project it acts in."""

    name = "postgresql"

    def __init__(self, url: str, project_id: str | None, *, across: bool = False) -> None:
        import psycopg

        self.url = url
        self.project_id = project_id
        self.across = across or project_id is None
        self.where = masked(url) + (f" (project {project_id}" + (", reading the team)" if across
                                                                 else ")")
                                    if project_id else " (team)")
        self.integrity_errors: tuple[type[BaseException], ...] = (psycopg.errors.UniqueViolation,)
        if (url, "current") not in _CHECKED:
            from governance.storage.migration import require_current

            with pool.borrowed(url) as conn:
                require_current(url, conn)
            _CHECKED.add((url, "current"))

    def close(self) -> None:
        return None   # the process's pool stays open for the next store

    @staticmethod
    def beside(work: Callable[[], T]) -> Future[T]:
        """On a thread of the process's (:func:`governance.storage.pool.beside`): every statement
        borrows a connection of its own."""
        return pool.beside(work)

    def _scope(self, alias: str = "d") -> tuple[str, list[Any]]:
        if self.across:
            return "TRUE", []
        return f"{alias}.project_id = %s", [self.project_id]

    def _own(self, alias: str = "d") -> tuple[str, list[Any]]:
        """The rows of the project itself (a decision's id is unique within its project)."""
        if self.project_id is None:
            return "TRUE", []
        return f"{alias}.project_id = %s", [self.project_id]

    def _writable(self) -> str:
        if self.project_id is None:
            raise StorageError("a team-wide store reads every project and writes none",
                               fix="record and review through a project's store "
                                   "(DecisionStore.for_project)")
        return self.project_id

    # -- writing -------------------------------------------------------------------------------
    def insert(self, records: Sequence[Record]) -> int:
        project = self._writable()
        if not records:
            return 0
        for record in records:
            _no_nul(record)
        if len(records) == 1:
            return self._insert_one(project, records[0])
        terms = Counter(term for record in records for term in record.terms)
        index = [bm25.indexed(record) for record in records]
        with pool.borrowed(self.url) as conn, conn.transaction():
            # The project's row numbers its decisions; its lock orders this project's writers.
            last = int(_value(conn.execute(
                "INSERT INTO projects AS p (project_id, decisions, words) VALUES (%s, %s, %s) "
                "ON CONFLICT (project_id) DO UPDATE SET decisions = p.decisions + "
                "excluded.decisions, words = p.words + excluded.words RETURNING decisions",
                (project, len(records), sum(words for words, _, _ in index))).fetchone()))
            first = last - len(records) + 1
            marks = ", ".join(["%s"] * (len(INSERTED) - 2))
            with conn.cursor() as cursor:
                cursor.executemany(
                    f"INSERT INTO decisions ({', '.join(INSERTED)}) "
                    f"VALUES ({marks}, %s::jsonb, %s::tsvector)",
                    [(project, first + number, *record[:15], list(record.tag_list), words,
                      json.dumps(frequencies), vector)
                     for number, (record, (words, frequencies, vector))
                     in enumerate(zip(records, index, strict=True))])
                cursor.executemany(   # in one order, so two writers never wait on each other
                    "INSERT INTO decision_terms AS t (project_id, term, docs) VALUES (%s, %s, %s) "
                    "ON CONFLICT (project_id, term) DO UPDATE SET docs = t.docs + excluded.docs",
                    [(project, term, count) for term, count in sorted(terms.items())])
        return len(records)

    def _insert_one(self, project: str, record: Record) -> int:
        """One decision in one statement (one round trip, its own transaction): the project's
        row first (the CTEs after it read it, so it is locked first, as in a batch), then the
        decision, then its words' counts in one order."""
        words, frequencies, vector = bm25.indexed(record)
        marks = ", ".join(["%s"] * 16)
        with pool.borrowed(self.url) as conn:
            conn.execute(
                "WITH p AS (INSERT INTO projects AS p (project_id, decisions, words) "
                "VALUES (%s, 1, %s) ON CONFLICT (project_id) DO UPDATE SET decisions = "
                "p.decisions + 1, words = p.words + excluded.words RETURNING decisions), "
                f"d AS (INSERT INTO decisions ({', '.join(INSERTED)}) SELECT %s, p.decisions, "
                f"{marks}, %s, %s::jsonb, %s::tsvector FROM p RETURNING 1), "
                "t AS (INSERT INTO decision_terms AS t (project_id, term, docs) "
                "SELECT %s, w.term, 1 FROM p, unnest(%s::text[]) AS w (term) ORDER BY w.term "
                "ON CONFLICT (project_id, term) DO UPDATE SET docs = t.docs + 1 RETURNING 1) "
                "SELECT (SELECT count(*) FROM d), (SELECT count(*) FROM t)",
                (project, words, project, *record[:15], list(record.tag_list), words,
                 json.dumps(frequencies), vector, project, sorted(record.terms)))
        return 1

    def review(self, decision_id: str, outcome: str, note: str, at: float) -> bool:
        project = self._writable()
        if "\x00" in note:
            raise StorageError("the note holds a NUL character, which PostgreSQL text cannot "
                               "store", key="note", fix="remove the NUL (\\0) characters from it")
        with pool.borrowed(self.url) as conn:
            return bool(conn.execute(
                "UPDATE decisions SET outcome = %s, outcome_note = %s, reviewed_at = %s "
                "WHERE project_id = %s AND id = %s",
                (outcome, note, at, project, decision_id)).rowcount)

    # -- reading -------------------------------------------------------------------------------
    def _rows(self, sql: str, params: Sequence[Any]) -> list[Row]:
        with pool.borrowed(self.url) as conn:
            return list(conn.execute(sql, params).fetchall())

    def get(self, decision_id: str) -> Row | None:
        scope, params = self._own()
        found = self._rows(f"SELECT {SELECT} FROM decisions d WHERE {scope} AND d.id = %s "
                           f"ORDER BY d.gid LIMIT 1", [*params, decision_id])
        return found[0] if found else None

    def holders(self, decision_id: str, most: int = 10) -> list[str]:
        """The projects (at most ``most``, by id) that hold a decision with this id: a
        decision's id is unique within its project only. One probe of the (project, id) index
        per project."""
        return [str(project) for project, in self._rows(
            "SELECT p.project_id FROM projects p WHERE EXISTS (SELECT 1 FROM decisions d WHERE "
            "d.project_id = p.project_id AND d.id = %s) ORDER BY p.project_id LIMIT %s",
            [decision_id, most])]

    def count(self) -> int:
        scope, params = self._scope()
        return int(self._rows(f"SELECT count(*) FROM decisions d WHERE {scope}", params)[0][0])

    def doc_counts(self, terms: list[str]) -> tuple[int, dict[str, int]]:
        scope, params = self._scope("p")
        where, _ = self._scope("t")
        found = self._rows(   # one statement: one snapshot, so no term outnumbers the total
            f"SELECT NULL, coalesce(sum(decisions), 0) FROM projects p WHERE {scope} UNION ALL "
            f"SELECT term, sum(docs) FROM decision_terms t WHERE {where} AND term = ANY(%s) "
            f"GROUP BY term", [*params, *params, list(terms)])
        docs = {str(term): int(n) for term, n in found if term is not None}
        total = next(int(n) for term, n in found if term is None)
        return total, {term: docs.get(term, 0) for term in terms}

    def filters(self, category: str | None, tags: Sequence[str], outcome: str | None,
                agent_id: str | None, since: float | None, until: float | None) -> Where:
        where, params = column_filters("%s", category, outcome, agent_id, since, until)
        if tags:
            where.append("d.tag_list @> %s::text[]")
            params.append([tag.lower() for tag in tags])
        return where, params

    def newest(self, where: Where, limit: int) -> list[Row]:
        scope, params = self._scope()
        conditions, more = where
        return self._rows(f"SELECT {SELECT} FROM decisions d WHERE {scope}"
                          + "".join(" AND " + c for c in conditions)
                          + " ORDER BY d.created_at DESC, d.gid DESC LIMIT %s",
                          [*params, *more, limit])

    def keyword_hits(self, terms: list[str], total: int, docs: dict[str, int], where: Where,
                     ranked: int | None, limit: int, recent: tuple[int, int] | None
                     ) -> list[Row]:
        terms = [term for term in terms if bm25.fits(term)]
        if not terms:
            return []
        scope, scoped = self._scope("m")
        mean, meaned = self._scope("p")
        rank, ranking, per_row, read = bm25.rank(terms, total, docs, "m", "a.avgdl")
        lengths = (f"(SELECT coalesce(sum(words), 0)::float8 / greatest(coalesce(sum("
                   f"decisions), 0), 1)::float8 AS avgdl FROM projects p WHERE {mean}) AS a")
        match = bm25.tsquery(terms)
        if not self.across and not recent and all(bm25.posted(term) for term in terms):
            # the project's posting lists (migration 0006): its words' rows, no decision read
            source, sourced, part, parted = bm25.postings_rank(terms, total, docs, "a.avgdl")
            inner = (f"SELECT gid, {bm25.postings_score(len(terms))} AS score FROM (SELECT "
                     f"p.gid, q.k, {part} AS part FROM {source} CROSS JOIN {lengths} WHERE "
                     f"p.project_id = %s) AS parts GROUP BY gid ORDER BY score DESC, gid LIMIT %s")
            inner_params = [*parted, *sourced, *meaned, *scoped, ranked]
        elif recent:   # the newest matches only, then by score
            window, budget = recent
            if self.across:
                newer, floor = ("m.gid > (SELECT coalesce(max(gid), 0) FROM decisions) - %s",
                                window)
                order = "m.gid DESC"
            else:
                newer, floor, order = "m.seq > %s", total - window, "m.seq DESC"
            inner = (f"SELECT gid, score FROM (SELECT m.gid, {rank} AS score FROM decisions m "
                     f"CROSS JOIN {lengths} CROSS JOIN LATERAL ({per_row}) AS f WHERE {scope} "
                     f"AND m.search @@ %s::tsquery AND {newer} ORDER BY {order} LIMIT %s) AS newest "
                     f"ORDER BY score DESC, gid LIMIT %s")
            inner_params = [*ranking, *meaned, *read, *scoped, match, floor, budget, ranked]
        else:
            inner = (f"SELECT m.gid, {rank} AS score FROM decisions m CROSS JOIN {lengths} "
                     f"CROSS JOIN LATERAL ({per_row}) AS f WHERE {scope} "
                     f"AND m.search @@ %s::tsquery ORDER BY score DESC, m.gid LIMIT %s")
            inner_params = [*ranking, *meaned, *read, *scoped, match, ranked]
        conditions, params = where
        sql = (f"SELECT {SELECT}, d.gid FROM ({inner}) AS hits JOIN decisions d "
               f"ON d.gid = hits.gid"
               + (" WHERE " + " AND ".join(conditions) if conditions else "")
               + " ORDER BY hits.score DESC, hits.gid LIMIT %s")
        return self._rows(sql, [*inner_params, *params, limit])

    def rows_by_seq(self, seqs: Sequence[int], where: Where) -> list[Row]:
        scope, params = self._scope()
        conditions, more = where
        return self._rows(f"SELECT {SELECT}, d.gid FROM decisions d WHERE {scope} "
                          f"AND d.gid = ANY(%s)" + "".join(" AND " + c for c in conditions),
                          [*params, list(seqs), *more])

    def calibration_rows(self, agent_id: str | None, category: str | None
                         ) -> list[CalibrationRow]:
        scope, params = self._scope("c")
        sql = (f"SELECT category, bin, sum(n), sum(conf), sum(score), sum(conf2), "
               f"sum(conf_score), sum(score2) FROM calibration_sums c WHERE n > 0 AND {scope}")
        for column, value in (("agent_id", agent_id), ("category", category)):
            if value:
                sql += f" AND {column} = %s"
                params.append(value)
        return [(str(cat), int(b), int(n), float(conf), float(score), float(conf2),
                 float(conf_score), float(score2))
                for cat, b, n, conf, score, conf2, conf_score, score2
                in self._rows(sql + " GROUP BY category, bin ORDER BY category, bin", params)]

    def reviewed(self, agent_id: str | None, category: str | None
                 ) -> list[tuple[str, float, str]]:
        scope, params = self._scope()
        sql = (f"SELECT category, confidence, outcome FROM decisions d WHERE {scope} "
               f"AND outcome IN ('success', 'partial', 'failure')")
        for column, value in (("agent_id", agent_id), ("category", category)):
            if value:
                sql += f" AND {column} = %s"
                params.append(value)
        return [(str(c), float(p), str(o)) for c, p, o in self._rows(sql + " ORDER BY d.gid",
                                                                      params)]

    # -- sentence vectors ----------------------------------------------------------------------
    def seq_of(self, decision_id: str) -> int | None:
        scope, params = self._own()
        found = self._rows(f"SELECT d.gid FROM decisions d WHERE {scope} AND d.id = %s "
                           f"ORDER BY d.gid LIMIT 1", [*params, decision_id])
        return int(found[0][0]) if found else None

    def unembedded(self, seqs: Sequence[int] | None) -> list[tuple[int, str, str, str, str]]:
        scope, params = self._scope()
        sql = (f"SELECT d.gid, d.description, d.pattern, d.tags, d.reasons FROM decisions d "
               f"LEFT JOIN decision_vectors v ON v.gid = d.gid WHERE v.gid IS NULL AND {scope}")
        if seqs is not None:
            sql += " AND d.gid = ANY(%s)"
            params.append(list(seqs))
        return [(int(g), str(d), str(p), str(t), str(r))
                for g, d, p, t, r in self._rows(sql + " ORDER BY d.gid", params)]

    def put_vectors(self, pairs: Sequence[tuple[int, bytes]]) -> None:
        if not pairs:
            return
        with pool.borrowed(self.url) as conn, conn.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO decision_vectors (gid, project_id, vec) "
                "SELECT gid, project_id, %s FROM decisions WHERE gid = %s "
                "ON CONFLICT (gid) DO UPDATE SET vec = excluded.vec",
                [(vec, gid) for gid, vec in pairs])

    def vectors(self, seqs: Sequence[int] | None) -> list[tuple[int, bytes]]:
        scope, params = self._scope("v")
        sql = f"SELECT v.gid, v.vec FROM decision_vectors v WHERE {scope}"
        if seqs is not None:
            sql += " AND v.gid = ANY(%s)"
            params.append(list(seqs))
        return [(int(g), bytes(vec)) for g, vec in self._rows(sql + " ORDER BY v.gid", params)]
