"""A server on the team database started with ``--ship-ledger`` records its project's ledger
centrally as it decides (``governance.server.relay``): each hook decision is in
``central_ledger`` moments later, a database that goes away loses nothing, and what the last
calls appended is there once the server has stopped."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from governance.ledger import chain
from governance.storage.central import PostgresCopy
from governance.storage.database import project_id
from tests.helpers import install, recorded, set_state
from tests.server.conftest import Served, start_server, stop_server
from tests.storage.conftest import Cluster


def _local(project: Path) -> list[str]:
    path = project / ".claude" / "governance" / chain.LEDGER
    return [line for line in path.read_text().splitlines() if line.strip()] \
        if path.exists() else []


def _caught_up(copy: PostgresCopy, project: Path, within: float) -> list[str]:
    """The central lines once they equal the local ledger (else fail after ``within`` s)."""
    ident = project_id(str(project))
    deadline = time.monotonic() + within
    while True:
        stored, local = copy.lines(ident), _local(project)
        if stored == local:
            return stored
        assert time.monotonic() < deadline, f"central {len(stored)} records, local {len(local)}"
        time.sleep(0.05)


def _errors(project: Path) -> str:
    path = project / ".claude" / "governance" / chain.ERRORS
    return path.read_text() if path.exists() else ""


def _shipping(project: Path, database: str) -> tuple[PostgresCopy, Served]:
    """The project installed in DO, and its server on the database shipping its ledger."""
    install(project)
    set_state(project, "implementation-cycle/DO/WORK-064")
    return PostgresCopy(database), start_server(project, "--database", database, "--ship-ledger")


def _decision(body: bytes) -> Any:
    return json.loads(body)["hookSpecificOutput"]["permissionDecision"]


def test_each_hook_decision_is_recorded_centrally_moments_later(database: str,
                                                                project: Path) -> None:
    copy, served = _shipping(project, database)
    try:
        status, body = served.hook("PreToolUse", recorded("PreToolUse-WebFetch.json", project))
        assert status == 200 and _decision(body) == "deny"
        stored = _caught_up(copy, project, 10)
        last = json.loads(stored[-1])
        assert last["event"] == "PreToolUse" and last["decision"] == "deny"
        for _ in range(5):    # records other processes append (the command hooks, the CLI)
            chain.append(str(project / ".claude" / "governance"), {"event": "PostToolUse"})
        _caught_up(copy, project, 10)
        served.hook("PreToolUse", recorded("PreToolUse-WebFetch.json", project))
    finally:
        assert stop_server(served) == 0
    assert copy.lines(project_id(str(project))) == _local(project)   # the last, before it exited


def test_a_database_that_goes_away_loses_nothing(cluster: Cluster, database: str,
                                                 project: Path) -> None:
    copy, served = _shipping(project, database)
    try:
        _caught_up(copy, project, 10)
        cluster.stop()
        try:
            for _ in range(3):   # hook decisions need no database: they go on
                status, body = served.hook("PreToolUse",
                                           recorded("PreToolUse-WebFetch.json", project))
                assert status == 200 and _decision(body) == "deny"
            deadline = time.monotonic() + 10
            while "central recording" not in _errors(project):
                assert time.monotonic() < deadline, "the failure was not said"
                time.sleep(0.05)
        finally:
            cluster.start()
        _caught_up(PostgresCopy(database), project, 40)
        deadline = time.monotonic() + 10
        while "resumed" not in _errors(project):
            assert time.monotonic() < deadline, "the recovery was not said"
            time.sleep(0.05)
        said = _errors(project)
        assert said.count("central recording of") == 2, said    # once failed, once resumed
    finally:
        assert stop_server(served) == 0


def test_shipping_the_ledger_needs_a_team_database(project: Path, capsys: Any,
                                                   monkeypatch: Any) -> None:
    from governance.commands import cli

    monkeypatch.delenv("GOVERNANCE_DATABASE_URL", raising=False)
    install(project)
    assert cli.main(["serve", "--project", str(project), "--port", "0", "--ship-ledger"]) == 1
    said = capsys.readouterr().err
    assert "--ship-ledger records the ledger in a team database" in said and "--database" in said
