"""The decision memory in figures: stated confidence against reviewed outcomes (the reliability
bins and the Brier score of ``governance.decisions.calibration``), per category, and the
decisions still awaiting review.

Read from the project's decision store (``decisions.db``) opened read-only, with aggregates
computed by SQLite: a few rows whatever the number of decisions. A project without a store has
no figures here (the report never creates one); neither has one whose decisions are in a shared
PostgreSQL database (``GOVERNANCE_DATABASE_URL``), which the report does not read yet.
"""

from __future__ import annotations

import os
import sqlite3
from typing import Any
from urllib.parse import quote

from governance.report.selection import Selection

OLDEST = 10
SHARED_DATABASE = "GOVERNANCE_DATABASE_URL"   # a team's PostgreSQL store (not read here yet)
DESCRIPTION_CHARS = 160
_ISO = "strftime('%Y-%m-%dT%H:%M:%f', created_at, 'unixepoch')"
_SCORE = "(CASE outcome WHEN 'success' THEN 1.0 WHEN 'partial' THEN 0.5 ELSE 0.0 END)"
_BIN = "min(CAST(confidence * 5 AS INTEGER), 4)"


def _where(selection: Selection) -> tuple[str, list[Any]]:
    """The selection as SQL conditions on ``decisions`` (time as ``governance log`` compares it:
    on the ISO text of ``created_at``)."""
    parts: list[str] = []
    params: list[Any] = []
    if selection.agent:
        parts.append("agent_id = ?")
        params.append(selection.agent)
    if selection.state:
        parts.append("state = ?")
        params.append(selection.state)
    if selection.since:
        parts.append(f"{_ISO} >= ?")
        params.append(selection.since)
    if selection.until:
        parts.append(f"substr({_ISO}, 1, ?) <= ?")
        params.extend([len(selection.until), selection.until])
    return "".join(f" AND {part}" for part in parts), params


def figures(project: str, selection: Selection) -> dict[str, Any]:
    """The decision memory's figures (``{"present": False}`` when the project has no store)."""
    from governance.decisions.store import db_path

    path = db_path(project)
    if os.environ.get(SHARED_DATABASE):
        return {"present": False, "path": path, "note": (
            f"the decisions are in a shared database ({SHARED_DATABASE}); the report reads a "
            "project's own SQLite store only, for now")}
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


def _read(db: sqlite3.Connection, selection: Selection) -> dict[str, Any]:
    from governance.decisions.calibration import report_from_sums
    from governance.decisions.store import iso

    where, params = _where(selection)
    total, reviewed, abandoned, waiting = db.execute(
        "SELECT count(*), count(outcome), coalesce(sum(outcome = 'abandoned'), 0), "
        f"coalesce(sum(outcome IS NULL), 0) FROM decisions WHERE 1{where}", params).fetchone()
    sums: dict[str, dict[int, tuple[int, float, float, float, float, float]]] = {}
    for category, index, n, conf, score, conf2, conf_score, score2 in db.execute(
            f"SELECT category, {_BIN} AS bin, count(*), sum(confidence), sum({_SCORE}), "
            f"sum(confidence * confidence), sum(confidence * {_SCORE}), sum({_SCORE} * {_SCORE}) "
            f"FROM decisions WHERE outcome IN ('success', 'partial', 'failure'){where} "
            "GROUP BY category, bin", params):
        sums.setdefault(str(category), {})[int(index)] = (
            int(n), float(conf), float(score), float(conf2), float(conf_score), float(score2))
    calibration = report_from_sums(sums)
    waiting_by_category = {str(category): int(count) for category, count in db.execute(
        f"SELECT category, count(*) FROM decisions WHERE outcome IS NULL{where} "
        "GROUP BY category ORDER BY count(*) DESC, category", params)}
    oldest = [{"id": str(decision), "created": iso(created), "category": str(category),
               "stakes": str(stakes), "confidence": float(confidence),
               "agent": str(agent), "description": " ".join(str(text).split())[:DESCRIPTION_CHARS]}
              for decision, created, category, stakes, confidence, agent, text in db.execute(
                  "SELECT id, created_at, category, stakes, confidence, agent_id, description "
                  f"FROM decisions WHERE outcome IS NULL{where} ORDER BY created_at, seq LIMIT ?",
                  [*params, OLDEST])]
    return {"decisions": int(total), "reviewed": int(reviewed), "abandoned": int(abandoned),
            "awaiting_review": int(waiting), "awaiting_by_category": waiting_by_category,
            "oldest_awaiting": oldest, "overall": calibration["overall"],
            "categories": list(calibration["categories"].values())}
