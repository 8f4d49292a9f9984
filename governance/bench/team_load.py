"""Bulk load of generated decisions into the team database with ``COPY``, and its verification.

The decisions are the decision benchmark's (:mod:`governance.bench.decisions`: its vocabulary, its
sentences, one in three reviewed), dealt round-robin over ``projects`` projects and given one of
``agents`` agents at random. Each row holds what the PostgreSQL engine
(:mod:`governance.storage.postgres`) writes for it: the project's ``seq``, the ``search`` tsvector,
the weighted ``frequencies`` and ``words`` (:func:`governance.storage.bm25.indexed`). Around the
``COPY`` the secondary indexes are dropped and the calibration and postings triggers are disabled;
afterwards the derived tables are written in one statement each (``projects``' counts and
``decision_terms`` from the counts made while generating, ``calibration_sums`` and
``decision_postings`` with one ``INSERT ... SELECT`` each), the indexes are rebuilt from their own
definitions and the triggers are enabled again.

:func:`verify` checks the result: counts per project, calibration sums against a recount,
``decision_terms`` against a recount of a sample of words, and rows written here against the
same decisions written by the engine itself.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

from governance.bench.decisions import OUTCOMES, _rows, _vocabulary
from governance.decisions.store import _record
from governance.storage import bm25
from governance.storage.engine import Record

SEED = 11          # the vocabulary bench/server.py's request bodies are drawn from
COLUMNS = ("project_id", "seq", "id", "agent_id", "description", "category", "stakes",
           "confidence", "reasons", "tags", "pattern", "context", "state", "cycle", "phase",
           "work_item", "created_at", "outcome", "outcome_note", "reviewed_at", "tag_list",
           "words", "frequencies", "search")
SECONDARY = ("decisions_search", "decisions_tags", "decisions_created", "decisions_calibration",
             "decision_postings_words")
TRIGGERS = ("calibration_insert", "postings_insert")
# what the postings trigger writes for each decision (governance_postings_of, migration 0009),
# for all of them at once
POSTINGS = ("INSERT INTO decision_postings (project_id, term, gid, f, words) "
            "SELECT p.* FROM decisions d, governance_postings_of(d) AS p")


def project_name(index: int) -> str:
    return f"team-p{index:03d}"


def agent_name(index: int) -> str:
    return f"agent-{index:02d}"


def share(index: int, count: int, projects: int) -> int:
    """How many of ``count`` decisions project ``index`` holds (they are dealt round-robin)."""
    return count // projects + (index < count % projects)


def generated(count: int, projects: int, agents: int, start: float
              ) -> Iterator[tuple[int, int, Record, str | None]]:
    """(project index, seq, record, outcome) for ``count`` decisions, oldest first, one a minute
    from ``start`` (epoch seconds)."""
    rng = random.Random(SEED)
    vocabulary = _vocabulary(rng)
    picks = random.Random(SEED + 1)
    for index, (decision_id, _agent, action, state, _created) in enumerate(
            _rows(rng, vocabulary, 0, count)):
        agent = agent_name(picks.randrange(agents))
        outcome = picks.choice(OUTCOMES) if index % 3 == 0 else None
        yield (index % projects, index // projects + 1,
               _record(decision_id, agent, action, state, start + index * 60.0), outcome)


def row(project: str, seq: int, record: Record, outcome: str | None
        ) -> tuple[tuple[Any, ...], int]:
    """The decisions row the engine writes for ``record`` (reviewed as ``outcome``), and its
    number of words."""
    words, frequencies, vector = bm25.indexed(record)
    return ((project, seq, *record[:15], outcome, None,
             record.created_at if outcome else None, list(record.tag_list), words,
             json.dumps(frequencies), vector), words)


def load(url: str, count: int, projects: int, agents: int, start: float) -> dict[str, float]:
    """Load ``count`` decisions (made one a minute from ``start``) into the migrated database at
    ``url``; each phase's seconds."""
    import psycopg

    spent: dict[str, float] = {}
    terms = [Counter[str]() for _ in range(projects)]
    words = [0] * projects
    decisions = [0] * projects
    with psycopg.connect(url, autocommit=True) as conn:
        began = time.perf_counter()
        indexes = [str(r[0]) for r in conn.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = ANY(%s) ORDER BY indexname",
            [list(SECONDARY)]).fetchall()]
        with conn.transaction():
            for name in SECONDARY:
                conn.execute(f"DROP INDEX {name}")
            for trigger in TRIGGERS:
                conn.execute(f"ALTER TABLE decisions DISABLE TRIGGER {trigger}")
            with conn.cursor().copy("COPY projects (project_id) FROM STDIN") as copy:
                for index in range(projects):
                    copy.write_row((project_name(index),))
        spent["prepare_s"] = time.perf_counter() - began
        began = time.perf_counter()
        with conn.transaction(), conn.cursor().copy(
                f"COPY decisions ({', '.join(COLUMNS)}) FROM STDIN") as copy:
            for project, seq, record, outcome in generated(count, projects, agents, start):
                values, length = row(project_name(project), seq, record, outcome)
                copy.write_row(values)
                terms[project].update(record.terms)
                words[project] += length
                decisions[project] += 1
        spent["copy_decisions_s"] = time.perf_counter() - began
        began = time.perf_counter()
        with conn.transaction():
            with conn.cursor().copy("COPY decision_terms (project_id, term, docs) FROM STDIN"
                                    ) as copy:
                for index, counted in enumerate(terms):
                    for term, docs in sorted(counted.items()):
                        copy.write_row((project_name(index), term, docs))
            with conn.cursor() as cursor:
                cursor.executemany("UPDATE projects SET decisions = %s, words = %s "
                                   "WHERE project_id = %s",
                                   [(decisions[i], words[i], project_name(i))
                                    for i in range(projects)])
        spent["terms_and_projects_s"] = time.perf_counter() - began
        began = time.perf_counter()
        conn.execute(
            "INSERT INTO calibration_sums SELECT project_id, agent_id, category, "
            "governance_bin(confidence), count(*), sum(confidence), "
            "sum(governance_score(outcome)), sum(confidence * confidence), "
            "sum(confidence * governance_score(outcome)), "
            "sum(governance_score(outcome) * governance_score(outcome)) FROM decisions "
            "WHERE outcome IN ('success', 'partial', 'failure') "
            "GROUP BY project_id, agent_id, category, governance_bin(confidence)")
        spent["calibration_sums_s"] = time.perf_counter() - began
        began = time.perf_counter()
        conn.execute(POSTINGS)
        spent["postings_s"] = time.perf_counter() - began
        began = time.perf_counter()
        conn.execute("SET maintenance_work_mem = '512MB'")
        for definition in indexes:
            conn.execute(definition)
        for trigger in TRIGGERS:
            conn.execute(f"ALTER TABLE decisions ENABLE TRIGGER {trigger}")
        spent["indexes_s"] = time.perf_counter() - began
        began = time.perf_counter()
        conn.execute("VACUUM (ANALYZE) decisions")
        conn.execute("VACUUM (ANALYZE) decision_postings")
        conn.execute("ANALYZE decision_terms")
        conn.execute("ANALYZE calibration_sums")
        conn.execute("ANALYZE projects")
        spent["analyze_s"] = time.perf_counter() - began
    spent["total_s"] = sum(spent.values())
    return {key: round(value, 2) for key, value in spent.items()}


SUMS = "n, conf, score, conf2, conf_score, score2"
RECOUNT = ("SELECT project_id, agent_id, category, governance_bin(confidence) AS bin, count(*) AS n,"
           " sum(confidence) AS conf, sum(governance_score(outcome)) AS score, "
           "sum(confidence * confidence) AS conf2, "
           "sum(confidence * governance_score(outcome)) AS conf_score, "
           "sum(governance_score(outcome) * governance_score(outcome)) AS score2 FROM decisions "
           "WHERE outcome IN ('success', 'partial', 'failure') "
           "GROUP BY project_id, agent_id, category, governance_bin(confidence)")


def verify(url: str, count: int, projects: int, agents: int, start: float, sample: int = 300
           ) -> dict[str, Any]:
    """What was loaded, checked; raises AssertionError naming the first difference."""
    import psycopg

    from governance.decisions.store import DecisionStore
    from governance.storage.postgres import PostgresEngine

    found: dict[str, Any] = {}
    with psycopg.connect(url, autocommit=True) as conn:
        per_project: dict[str, int] = dict(conn.execute(
            "SELECT project_id, count(*) FROM decisions GROUP BY project_id").fetchall())
        kept: dict[str, int] = dict(conn.execute("SELECT project_id, decisions FROM projects").fetchall())
        expected = {project_name(i): share(i, count, projects) for i in range(projects)}
        assert per_project == expected == kept, "decisions per project differ"
        assert int(_one(conn, "SELECT count(*) FROM decisions")) == count
        found["per_project"] = "equal"
        # calibration sums equal a recount (rounded: sums of floats in another order)
        differ = _one(conn, f"SELECT count(*) FROM ({RECOUNT}) r FULL JOIN calibration_sums c "
                            f"USING (project_id, agent_id, category, bin) WHERE c.n IS "
                            f"DISTINCT FROM r.n OR abs(c.conf - r.conf) > 1e-6 "
                            f"OR abs(c.score - r.score) > 1e-6 "
                            f"OR abs(c.conf_score - r.conf_score) > 1e-6")
        assert int(differ) == 0, f"{differ} calibration sums differ from a recount"
        found["calibration_rows"] = int(_one(conn, "SELECT count(*) FROM calibration_sums"))
        # decision_terms: a recount of some words through the GIN index
        sampled = conn.execute("SELECT project_id, term, docs FROM decision_terms "
                               "TABLESAMPLE BERNOULLI (1) REPEATABLE (7) LIMIT 20").fetchall()
        for project, term, docs in sampled:
            recount = _one(conn, "SELECT count(*) FROM decisions WHERE project_id = %s "
                                 "AND search @@ %s::tsquery", (project, bm25.lexeme(term)))
            assert int(recount) == int(docs), f"docs of {term!r} in {project}: {docs} != {recount}"
        found["terms_recounted"] = len(sampled)
    # the engine writes the same rows: a sample of one project's decisions, inserted again
    # through PostgresEngine under another project id, compared column by column
    project = project_name(min(1, projects - 1))
    records = [(seq, record, outcome)
               for index, seq, record, outcome in generated(min(count, sample * projects),
                                                            projects, agents, start)
               if project_name(index) == project]
    twin = "verify-" + project
    engine = PostgresEngine(url, twin)
    engine.insert([record for _, record, _ in records])
    for _, record, outcome in records:
        if outcome:
            engine.review(record.id, outcome, "", record.created_at)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE decisions SET outcome_note = NULL WHERE project_id = %s", [twin])
        names = ", ".join(c for c in COLUMNS if c != "project_id")
        differ = _one(conn, f"SELECT count(*) FROM ((SELECT {names} FROM decisions WHERE "
                            f"project_id = %s AND seq <= %s EXCEPT SELECT {names} FROM decisions "
                            f"WHERE project_id = %s)) AS d", (project, len(records), twin))
        assert int(differ) == 0, f"{differ} of {len(records)} rows differ from the engine's"
        conn.execute("DELETE FROM decisions WHERE project_id = %s", [twin])
        for table in ("decision_terms", "calibration_sums", "projects"):
            conn.execute(f"DELETE FROM {table} WHERE project_id = %s", [twin])
    found["rows_as_engine_writes"] = len(records)
    # a few answers through the decision store
    store = DecisionStore(engine=PostgresEngine(url, project))
    try:
        assert store.count() == expected[project]
        for _, record, _ in records[:20]:
            hits = store.query(record.description, limit=5)
            assert record.id in [hit["id"] for hit in hits], f"{record.id}'s text misses it"
        found["queries_find_their_decision"] = min(20, len(records))
    finally:
        store.close()
    return found


def _one(conn: Any, sql: str, params: Any = None) -> Any:
    got = conn.execute(sql, params).fetchone()
    assert got is not None
    return got[0]
