"""Schema migrations on a real PostgreSQL server, ``governance db`` and ``serve --database``, and
what a user sees when the database is down."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from governance.commands.cli import main
from governance.errors import StorageError
from governance.storage import migration
from governance.storage.database import database_url, masked, project_id
from tests.storage.conftest import Cluster

DOWN = "postgresql:///nope?host=/nonexistent&user=governance"


def _governance(*words: str, env: dict[str, str] | None = None
                ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "governance.commands.cli", *words],
                          capture_output=True, text=True, timeout=60,
                          cwd=Path(__file__).resolve().parents[2],
                          env={**os.environ, **(env or {})})


def test_a_fresh_database_migrates_once_and_says_where_it_stands(cluster: Cluster) -> None:
    url = cluster.new_database()
    before = migration.status(url)
    shipped = [f"{m.version:04d}_{m.name}" for m in migration.available()]
    assert before["version"] == 0 and before["pending"] == shipped
    assert migration.migrate(url) == shipped
    assert migration.migrate(url) == []            # idempotent
    after = migration.status(url)
    assert after == {**before, "version": migration.latest(),
                     "applied": [m.version for m in migration.available()], "pending": []}


def test_two_migrations_started_at_once_apply_the_schema_once(cluster: Cluster) -> None:
    url = cluster.new_database()
    code = ("import json, sys; from governance.storage import migration; "
            "print(json.dumps(migration.migrate(sys.argv[1])))")
    runs = [subprocess.Popen([sys.executable, "-c", code, url], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True,
                             cwd=Path(__file__).resolve().parents[2]) for _ in range(2)]
    results = [run.communicate(timeout=60) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], results
    applied = sorted(json.loads(out) for out, _ in results)
    shipped = [f"{m.version:04d}_{m.name}" for m in migration.available()]
    assert applied == [[], shipped]     # one applied them, the other found them done
    import psycopg

    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT count(*) FROM schema_migrations").fetchone() == (len(shipped),)


def test_db_commands(cluster: Cluster, capsys: pytest.CaptureFixture[str]) -> None:
    url = cluster.new_database()
    assert main(["db", "status", "--database", url]) == 3
    assert "pending: 0001_decisions" in capsys.readouterr().out
    assert main(["db", "migrate", "--database", url]) == 0
    assert "Applied 0001_decisions" in capsys.readouterr().out
    assert main(["db", "migrate", "--database", url, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["applied_now"] == []
    assert main(["db", "status", "--database", url, "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["engine"] == "postgresql" and found["version"] == migration.latest() and not found["pending"]


def test_a_store_refuses_a_database_not_migrated(cluster: Cluster, project: Path) -> None:
    from governance.decisions.store import DecisionStore

    url = cluster.new_database()
    with pytest.raises(StorageError, match=r"schema version 0.*governance db migrate"):
        DecisionStore.for_project(str(project), url)


def test_serve_refuses_pending_migrations_unless_told_to_migrate(
        cluster: Cluster, project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from governance.commands import serve

    url = cluster.new_database()
    assert main(["serve", "--project", str(project), "--database", url, "--port", "0",
                 "--status"]) == 3   # status and stop never touch the database
    capsys.readouterr()
    import argparse

    args = argparse.Namespace(database=url, migrate=False)
    with pytest.raises(StorageError, match="migrations pending: 0001_decisions"):
        serve._database(args)
    os.environ.pop("GOVERNANCE_DATABASE_URL", None)
    try:
        serve._database(argparse.Namespace(database=url, migrate=True))
        assert os.environ["GOVERNANCE_DATABASE_URL"] == url   # the workers' database
    finally:
        os.environ.pop("GOVERNANCE_DATABASE_URL", None)
    assert "Applied 0001_decisions" in capsys.readouterr().out
    assert migration.status(url)["pending"] == []


def test_a_database_that_is_down_is_one_clear_line(tmp_path: Path) -> None:
    for words in (["db", "status", "--database", DOWN], ["db", "migrate", "--database", DOWN],
                  ["decisions", "query", "--project", str(tmp_path), "x"]):
        done = _governance(*words, env={"GOVERNANCE_DATABASE_URL": DOWN})
        assert done.returncode == 1, done
        assert "Traceback" not in done.stderr
        [line] = done.stderr.strip().splitlines()
        assert line.startswith("governance: error: cannot reach the decision database "
                               "postgresql:///nope?host=/nonexistent")
        assert "Fix: start PostgreSQL" in line


def test_the_password_never_shows(tmp_path: Path) -> None:
    url = "postgresql://bob:hunter2@127.0.0.1:1/gov?connect_timeout=2"
    done = _governance("db", "status", "--database", url)
    assert done.returncode == 1 and "hunter2" not in done.stderr + done.stdout
    assert "postgresql://bob:***@127.0.0.1:1/gov" in done.stderr
    assert masked("postgresql://u:p@h/d?password=p2&sslmode=require") == \
        "postgresql://u:***@h/d?password=***&sslmode=require"


def test_sqlite_status_and_migrate_say_what_they_do(project: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["db", "status", "--project", str(project)]) == 0
    assert "engine: sqlite" in capsys.readouterr().out
    assert main(["db", "migrate", "--project", str(project)]) == 0
    assert "nothing to do" in capsys.readouterr().out
    from governance.decisions.store import DecisionStore

    DecisionStore.for_project(str(project)).close()
    assert main(["db", "status", "--project", str(project), "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["engine"] == "sqlite" and found["version"] == found["latest"]


def test_urls_and_project_ids(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert database_url() is None
    monkeypatch.setenv("GOVERNANCE_DATABASE_URL", "mysql://x/y")
    with pytest.raises(StorageError, match="not a PostgreSQL URL"):
        database_url()
    assert database_url("postgres://h/d") == "postgres://h/d"
    first = project_id(str(tmp_path / "shop api"))
    assert first.startswith("shop-api-") and first == project_id(str(tmp_path / "shop api"))
    assert first != project_id(str(tmp_path / "other" / "shop api"))
    monkeypatch.setenv("GOVERNANCE_PROJECT_ID", "shop-api")
    assert project_id(str(tmp_path)) == "shop-api"
    monkeypatch.setenv("GOVERNANCE_PROJECT_ID", "../etc")
    with pytest.raises(StorageError, match="not a project id"):
        project_id(str(tmp_path))


def test_every_gin_index_keeps_a_short_pending_list(cluster: Cluster) -> None:
    """A GIN index's pending list is read whole by every match: a long one (4 MB by default) cost
    a preAction more than its match did. Each GIN index the schema has keeps it at 64 kB."""
    import psycopg

    url = cluster.new_database()
    migration.migrate(url)
    with psycopg.connect(url) as conn:
        found = conn.execute(
            "SELECT c.relname, coalesce(c.reloptions, '{}') FROM pg_class c "
            "JOIN pg_index i ON i.indexrelid = c.oid JOIN pg_am a ON a.oid = c.relam "
            "WHERE a.amname = 'gin'").fetchall()
    assert {name for name, _ in found} >= {"decisions_search", "decisions_tags"}
    assert all("gin_pending_list_limit=64" in options for _, options in found), found
