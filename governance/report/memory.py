"""The decision memory in figures: stated confidence against reviewed outcomes (the reliability
bins and the Brier score of ``governance.decisions.calibration``), per category, and the
decisions still awaiting review.

Read from the project's decision store (``decisions.db``) opened read-only, or from its rows in
the team's PostgreSQL database (``GOVERNANCE_DATABASE_URL``), with aggregates computed by the
database: a few rows whatever the number of decisions. A project without a store has no figures
here (the report never creates one).
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from governance.report.selection import Selection

OLDEST = 10
DESCRIPTION_CHARS = 160
_SCORE = "(CASE outcome WHEN 'success' THEN 1.0 WHEN 'partial' THEN 0.5 ELSE 0.0 END)"


@dataclass(frozen=True)
class Dialect:
    """What differs in the report's SQL between the engines: the parameter mark, the ISO text
    of ``created_at`` (as ``governance log`` compares times), the confidence bin (truncated,
    as :mod:`governance.decisions.calibration` bins), and the rows of the project."""

    mark: str
    iso: str
    bin: str
    scope: str = "TRUE"


SQLITE = Dialect("?", "strftime('%Y-%m-%dT%H:%M:%f', created_at, 'unixepoch')",
                 "min(CAST(confidence * 5 AS INTEGER), 4)", "1")
POSTGRES = Dialect("%s", "to_char(to_timestamp(created_at) AT TIME ZONE 'UTC', "
                         "'YYYY-MM-DD\"T\"HH24:MI:SS.MS')",
                   "least(floor(confidence * 5)::int, 4)", "project_id = %s")


def _where(selection: Selection, dialect: Dialect = SQLITE) -> tuple[str, list[Any]]:
    """The selection as SQL conditions on ``decisions`` (time as ``governance log`` compares it:
    on the ISO text of ``created_at``)."""
    mark, iso = dialect.mark, dialect.iso
    parts: list[str] = []
    params: list[Any] = []
    if selection.agent:
        parts.append(f"agent_id = {mark}")
        params.append(selection.agent)
    if selection.state:
        parts.append(f"state = {mark}")
        params.append(selection.state)
    if selection.since:
        parts.append(f"{iso} >= {mark}")
        params.append(selection.since)
    if selection.until:
        parts.append(f"substr({iso}, 1, {mark}) <= {mark}")
        params.extend([len(selection.until), selection.until])
    return "".join(f" AND {part}" for part in parts), params


def figures(project: str, selection: Selection) -> dict[str, Any]:
    """The decision memory's figures (``{"present": False}`` when the project has no store)."""
    from governance.decisions.store import db_path
    from governance.storage.database import database_url

    url = database_url()
    if url is not None:
        return _shared(project, url, selection)
    path = db_path(project)
    if not os.path.exists(path):
        return {"present": False, "path": path}
    try:
        db = sqlite3.connect(f"file:{quote(path)}?mode=ro", uri=True, timeout=10.0)
    except sqlite3.Error as exc:
        return {"present": True, "path": path, "error": f"{type(exc).__name__}: {exc}"}
    try:
        return {"present": True, "path": path, **_read(db, selection)}
    except sqlite3.Error as exc:
        return {"present": True, "path": path, "error": f"{type(exc).__name__}: {exc}"}
    finally:
        db.close()


def _shared(project: str, url: str, selection: Selection) -> dict[str, Any]:
    """The figures of the project's rows in the team's database (its URL shown masked)."""
    from governance.errors import StorageError
    from governance.storage.database import masked, project_id

    where = f"{masked(url)} (project {project_id(project)})"
    try:
        import psycopg
    except ImportError:
        return {"present": True, "path": where, "error": "the team extra (psycopg) is not "
                                                          "installed: pip install "
                                                          "'claude-governance[team]'"}
    from governance.storage.pool import borrowed

    try:
        with borrowed(url) as conn:
            return {"present": True, "path": where,
                    **_read(conn, selection, POSTGRES, [project_id(project)])}
    except (StorageError, psycopg.Error) as exc:
        said = exc.render() if isinstance(exc, StorageError) else f"{type(exc).__name__}: {exc}"
        return {"present": True, "path": where, "error": said}


def _read(db: Any, selection: Selection, dialect: Dialect = SQLITE,
          scoped: list[Any] | None = None) -> dict[str, Any]:
    """The figures, from a SQLite or a psycopg connection (``dialect`` says which; ``scoped``
    the parameters of its ``scope``)."""
    from governance.decisions.calibration import report_from_sums
    from governance.decisions.store import iso

    narrowed, more = _where(selection, dialect)
    where, params = f" AND {dialect.scope}{narrowed}", [*(scoped or []), *more]
    total, reviewed, abandoned, waiting = db.execute(
        "SELECT count(*), count(outcome), "
        "coalesce(sum(CASE WHEN outcome = 'abandoned' THEN 1 ELSE 0 END), 0), "
        "coalesce(sum(CASE WHEN outcome IS NULL THEN 1 ELSE 0 END), 0) "
        f"FROM decisions WHERE TRUE{where}", params).fetchone()
    sums: dict[str, dict[int, tuple[int, float, float, float, float, float]]] = {}
    for category, index, n, conf, score, conf2, conf_score, score2 in db.execute(
            f"SELECT category, {dialect.bin} AS bin, count(*), sum(confidence), sum({_SCORE}), "
            f"sum(confidence * confidence), sum(confidence * {_SCORE}), sum({_SCORE} * {_SCORE}) "
            f"FROM decisions WHERE outcome IN ('success', 'partial', 'failure'){where} "
            "GROUP BY category, bin", params).fetchall():
        sums.setdefault(str(category), {})[int(index)] = (
            int(n), float(conf), float(score), float(conf2), float(conf_score), float(score2))
    calibration = report_from_sums(sums)
    waiting_by_category = {str(category): int(count) for category, count in db.execute(
        f"SELECT category, count(*) FROM decisions WHERE outcome IS NULL{where} "
        "GROUP BY category ORDER BY count(*) DESC, category", params).fetchall()}
    oldest = [{"id": str(decision), "created": iso(created), "category": str(category),
               "stakes": str(stakes), "confidence": float(confidence),
               "agent": str(agent), "description": " ".join(str(text).split())[:DESCRIPTION_CHARS]}
              for decision, created, category, stakes, confidence, agent, text in db.execute(
                  "SELECT id, created_at, category, stakes, confidence, agent_id, description "
                  f"FROM decisions WHERE outcome IS NULL{where} ORDER BY created_at, seq "
                  f"LIMIT {dialect.mark}", [*params, OLDEST]).fetchall()]
    return {"decisions": int(total), "reviewed": int(reviewed), "abandoned": int(abandoned),
            "awaiting_review": int(waiting), "awaiting_by_category": waiting_by_category,
            "oldest_awaiting": oldest, "overall": calibration["overall"],
            "categories": list(calibration["categories"].values())}
