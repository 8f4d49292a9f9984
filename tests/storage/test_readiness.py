"""``/readyz``: the decision store opens and, on PostgreSQL, answers with no migration pending;
the answer names no host, user or database (it needs no token)."""

from __future__ import annotations

import json
from pathlib import Path

from governance.server.app import readiness
from tests.storage.conftest import Cluster


def _project(project: Path) -> str:
    (project / ".claude" / "governance").mkdir(parents=True, exist_ok=True)
    return str(project)


def test_a_project_store_on_sqlite_is_ready(project: Path) -> None:
    assert readiness(_project(project), None) == (True, {"status": "ready", "engine": "sqlite"})


def test_a_migrated_database_is_ready(project: Path, database: str) -> None:
    ready, found = readiness(_project(project), database)
    assert ready and found["status"] == "ready" and found["version"] >= 1


def test_a_database_with_migrations_pending_is_not_ready(project: Path,
                                                         cluster: Cluster) -> None:
    ready, found = readiness(_project(project), cluster.new_database())
    assert not ready and found["reason"].startswith("migrations pending: 0001_")
    assert found["fix"] == "governance db migrate"


def test_a_database_that_does_not_answer_is_not_ready_and_names_nothing(project: Path) -> None:
    url = "postgresql://ops:s3cret@db.internal.example/gov?host=/nonexistent"
    ready, found = readiness(_project(project), url)
    assert not ready and found["reason"].startswith("the database does not answer")
    shown = json.dumps(found)
    assert "s3cret" not in shown and "db.internal" not in shown and "ops" not in shown
    log = (project / ".claude" / "governance" / "errors.log").read_text()
    assert "readyz" in log and "s3cret" not in log
