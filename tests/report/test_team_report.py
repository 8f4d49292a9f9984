"""``GET /report`` across projects on a real server (``governance serve`` in its own process):
two projects' ledgers shipped into its central copy (``governance ledger ship``), then reported
one by one and together, with the filters, and the scope of a project's token. The central copy
read back streamed, on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from governance.ledger import chain
from governance.ledger.shipping import Central, ship
from governance.report.figures import build
from governance.report.selection import Selection, parse
from governance.storage.central import Row, SqliteCopy
from tests.helpers import REPO
from tests.report import fixture
from tests.report.test_live import figures_of
from tests.server.conftest import Served, start_server, stop_server
from tests.storage.conftest import cluster, database  # noqa: F401  (the PostgreSQL fixtures)

SHOP, BILLING = "shop-api", "billing"      # the shipped projects' ids; the server's is BILLING
B_RECORDS: list[dict[str, Any]] = [
    {"ts": "2026-05-02T08:00:00.000Z", "event": "PreToolUse", "session": "b-1", "tool": "Bash",
     "tool_use_id": "b1", "primitive": "shell-execute", "action": "allow", "state": "DO"},
    {"ts": "2026-05-02T08:00:02.000Z", "event": "PostToolUse", "session": "b-1", "tool": "Bash",
     "tool_use_id": "b1", "primitive": "shell-execute", "state": "DO", "outcome": "success"},
    {"ts": "2026-05-02T08:05:00.000Z", "event": "PreToolUse", "session": "b-1", "tool": "Bash",
     "tool_use_id": "b2", "primitive": "vcs-push", "action": "block", "state": "DO",
     "reason": "Push only from CHECK.",
     "acts": [{"action": "block", "primitive": "vcs-push", "segment": "git push"}]},
    {"ts": "2026-05-03T10:00:00.000Z", "event": "PreToolUse", "session": "b-2", "tool": "Write",
     "tool_use_id": "b3", "primitive": "file-write", "action": "block", "state": "EXPLORE",
     "agent_type": "Explore", "agent_id": "agent-7"},
]


class Team:
    def __init__(self, served: Served, shop: Path, billing: Path, scoped: str) -> None:
        self.served, self.shop, self.billing, self.scoped = served, shop, billing, scoped

    def get(self, query: str, token: str | None = "default") -> tuple[int, bytes]:
        status, _, body = self.served.request("GET", "/report" + query, token=token)
        return status, body


def gov(project: Path) -> str:
    return str(project / ".claude" / "governance")


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Team]:
    """A server whose project id is ``billing``, holding the shipped ledgers of ``shop-api``
    (the fixture's, whose figures are known) and ``billing`` (four records); and an admin token
    scoped to ``billing``."""
    root = tmp_path_factory.mktemp("team").resolve()
    shop, billing, hub = root / "shop-api", root / "billing-repo", root / "hub"
    for folder in (shop, billing, hub):
        (folder / ".claude").mkdir(parents=True)
    fixture.write(shop)
    for record in B_RECORDS:
        chain.append(gov(billing), dict(record))
    env = {**os.environ, "PYTHONPATH": str(REPO), "GOVERNANCE_PROJECT_ID": BILLING}
    minted = subprocess.run(
        [sys.executable, "-m", "governance.commands", "token", "add", "--agent", "lead",
         "--role", "admin", "--project", str(hub)], cwd=str(REPO), env=env,
        capture_output=True, text=True, timeout=60)
    assert minted.returncode == 0, minted.stderr
    before = os.environ.get("GOVERNANCE_PROJECT_ID")
    os.environ["GOVERNANCE_PROJECT_ID"] = BILLING        # the server's own id (start_server's env)
    try:
        served = start_server(hub)
    finally:
        if before is None:
            del os.environ["GOVERNANCE_PROJECT_ID"]
        else:
            os.environ["GOVERNANCE_PROJECT_ID"] = before
    try:
        central = Central(f"http://127.0.0.1:{served.port}", served.token)
        try:
            assert ship(central, gov(shop), SHOP).sent == len(fixture.RECORDS)
            assert ship(central, gov(billing), BILLING).sent == len(B_RECORDS)
        finally:
            central.close()
        yield Team(served, shop, billing, minted.stdout.strip().splitlines()[-1])
    finally:
        stop_server(served)


SHARED = ("activity", "denials", "asks", "knowledge")


def test_one_shipped_project_reports_as_its_own_ledger_does(team: Team) -> None:
    status, body = team.get(f"?project={SHOP}")
    assert status == 200
    found = figures_of(body)
    local = build(str(team.shop), Selection(), verify=False, show_progress=False)
    for section in SHARED:
        assert found[section] == local[section], section
    assert found["intents"]["refused"] == local["intents"]["refused"]
    assert found["tamper"]["evidence"] == local["tamper"]["evidence"]
    assert found["activity"]["records"] == 24 and found["denials"]["total"] == 5
    # what the central copy lacks is said, not guessed
    page = body.decode()
    assert "the trace is kept on each project&#39;s machine" in page
    assert "Not shown: the decision store is kept on each project&#39;s machine" in page
    assert 'id="t-projects"' not in page          # one project: no per-project table
    head = json.loads((team.shop / ".claude" / "governance" / chain.LEDGER).read_text()
                      .splitlines()[-1])
    assert found["team"]["projects"][0]["head"] == {"seq": 24, "hash": head["hash"], "rows": 24,
                                                    "links": "hold"}
    assert f"<code>{head['hash']}</code>" in page and "copy's chain holds" in page


def test_every_project_together_with_a_table_per_project(team: Team) -> None:
    status, body = team.get("?project=*")
    assert status == 200
    found = figures_of(body)
    local = build(str(team.shop), Selection(), verify=False, show_progress=False)
    assert found["activity"]["records"] == 24 + 4
    assert found["denials"]["decisions"] == 15 + 3 and found["denials"]["total"] == 5 + 2
    assert found["activity"]["actions"] == {**local["activity"]["actions"],
                                            "allow": local["activity"]["actions"]["allow"] + 1,
                                            "block": local["activity"]["actions"]["block"] + 2}
    assert found["asks"] == local["asks"]          # billing asked nothing
    assert (found["activity"]["first"], found["activity"]["last"]) == (
        local["activity"]["first"], "2026-05-03T10:00:00.000Z")
    rows = {row["project"]: row for row in found["team"]["projects"]}
    assert list(rows) == [BILLING, SHOP]
    assert rows[BILLING]["records"] == 4 and rows[BILLING]["denials"] == 2
    assert rows[BILLING]["actions"] == {"allow": 1, "warn": 0, "ask": 0, "block": 2}
    assert {k: v for k, v in rows[SHOP]["actions"].items() if v} == local["activity"]["actions"]
    assert rows[SHOP]["decisions"] == 15 and rows[SHOP]["denials"] == 5
    page = body.decode()
    assert 'id="t-projects"' in page and 'id="t-central-heads"' in page
    assert '<tr><th scope="row">billing</th><td class="num">4</td><td class="num">3</td>' in page
    assert "From the server's central copy of ledgers: every project (2)" in page
    assert 'name="project" value="*"' in page       # the filter form keeps the scope


def test_the_filters_apply_across_projects(team: Team) -> None:
    for query, selection in (("state=EXPLORE", parse(state="EXPLORE")),
                             ("agent=main&since=2026-05-02", parse(agent="main",
                                                                   since="2026-05-02")),
                             ("agent=Explore", parse(agent="Explore"))):
        status, body = team.get(f"?project=*&{query}")
        assert status == 200, body
        found = figures_of(body)
        local = build(str(team.shop), selection, verify=False, show_progress=False)
        extra = sum(1 for rec in B_RECORDS if rec["event"] == "PreToolUse" and selection(rec))
        assert found["denials"]["decisions"] == local["denials"]["decisions"] + extra, query
        rows = {row["project"]: row for row in found["team"]["projects"]}
        assert rows[SHOP]["decisions"] == local["denials"]["decisions"]
        assert rows[BILLING]["decisions"] == extra
        assert found["selection"] == selection.active
    status, body = team.get(f"?project={BILLING}&since=2026-05-03")
    assert status == 200 and figures_of(body)["activity"]["records"] == 1


def test_a_scoped_token_reports_its_own_project_only(team: Team) -> None:
    status, body = team.get(f"?project={SHOP}", token=team.scoped)
    assert status == 403
    assert f"acts in project {BILLING}; it may report that project only, not {SHOP}" in \
        json.loads(body)["error"]
    status, body = team.get("?project=*", token=team.scoped)
    found = figures_of(body)
    assert status == 200 and [row["project"] for row in found["team"]["projects"]] == [BILLING]
    assert found["activity"]["records"] == 4 and 'id="t-projects"' not in body.decode()
    status, body = team.get(f"?project={BILLING}", token=team.scoped)
    assert status == 200 and figures_of(body)["activity"]["records"] == 4
    status, body = team.get("", token=team.scoped)          # the served project's own ledger
    assert status == 200 and "team" not in figures_of(body)
    assert team.get(f"?project={SHOP}")[0] == 200           # the project's own token: any


def test_on_a_team_server_a_token_of_another_project_reports_that_one(team: Team) -> None:
    """A team server lets a token scoped to any project in; the report keeps it to that one."""
    from governance.server.report_page import answer

    hub = str(team.served.project)
    for query in (b"", b"project=*", f"project={SHOP}&state=DO".encode()):
        status, body, _ = answer(hub, "GET", query, scoped=SHOP)
        found = figures_of(body)
        assert status == 200 and [row["project"] for row in found["team"]["projects"]] == [SHOP]
    status, body, _ = answer(hub, "GET", f"project={BILLING}".encode(), scoped=SHOP)
    assert status == 403 and f"acts in project {SHOP}" in json.loads(body)["error"]
    status, body, _ = answer(hub, "GET", b"project=hub", scoped=SHOP)   # not the served one's
    assert status == 403


def test_an_unknown_project_is_a_404_that_says_why(team: Team) -> None:
    status, body = team.get("?project=payments")
    assert status == 404
    said = json.loads(body)["error"]
    assert "no project payments here" in said and "central copy holds no ledger of that id" in \
        said and "governance ledger ship --server URL" in said


def test_without_a_central_copy_another_project_is_a_404(project: Path) -> None:
    from governance.server.report_page import answer

    status, body, _ = answer(str(project), "GET", b"project=*")
    assert status == 404 and "no ledger was shipped to it" in json.loads(body)["error"]
    assert not (project / ".claude" / "governance" / "central-ledger.db").exists()


def test_the_command_fetches_the_page_from_the_server(team: Team, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from governance.commands import cli

    server = f"http://127.0.0.1:{team.served.port}"
    out = tmp_path / "team.html"
    monkeypatch.setenv("GOVERNANCE_SERVER_TOKEN", team.served.token)
    assert cli.main(["report", "--server", server, "--project", "*", "--state", "DO",
                     "--out", str(out)]) == 0
    assert f"Wrote {out}: " in capsys.readouterr().out
    page = out.read_text()
    assert 'id="t-projects"' in page and 'data-filter="state">state DO' in page
    assert cli.main(["report", "--server", server, "--project", SHOP, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["activity"]["records"] == 24
    assert cli.main(["report", "--server", server, "--project", SHOP, "--token",
                     team.scoped]) == 1
    said = capsys.readouterr().err
    assert "answered 403" in said and f"acts in project {BILLING}" in said


def _rows(lines: list[str]) -> list[Row]:
    return [Row(rec["seq"], rec["hash"], rec["prev"], line)
            for line, rec in ((line, json.loads(line)) for line in lines)]


def _ledger(tmp: Path, name: str, count: int) -> list[str]:
    folder = tmp / name
    for n in range(count):
        chain.append(str(folder), {"event": "PreToolUse", "ts": f"2026-05-01T00:00:{n:02d}Z",
                                   "action": "allow", "n": n})
    return [line for line in (folder / chain.LEDGER).read_text().splitlines() if line]


@pytest.mark.parametrize("engine", ["sqlite", "postgres"])
def test_the_copy_is_read_back_streamed_in_order(engine: str, tmp_path: Path,
                                                 request: pytest.FixtureRequest) -> None:
    from governance.storage import central

    if engine == "postgres":
        url = str(request.getfixturevalue("database"))   # skips, saying why, without PostgreSQL
        copy: central.CentralCopy = central.PostgresCopy(url)
        a, b = f"a-{tmp_path.name}"[:90], f"b-{tmp_path.name}"[:90]   # the database is shared
    else:
        copy = SqliteCopy(str(tmp_path / "copy" / central.FILE))
        a, b = "a", "b"
    try:
        first, second = _ledger(tmp_path, "one", 7), _ledger(tmp_path, "two", 3)
        copy.add(b, _rows(second))
        copy.add(a, _rows(first[:4]))
        copy.add(a, _rows(first[4:]))
        assert {a, b} <= set(copy.projects())
        read = copy.iter_lines(a)
        assert next(read) == (a, _rows(first)[0])       # a generator: rows come as asked
        assert [row.line for _pid, row in read] == first[1:]
        every = [(pid, row.seq) for pid, row in copy.iter_lines() if pid in (a, b)]
        assert every == [(a, n) for n in range(1, 8)] + [(b, n) for n in range(1, 4)]
        if engine == "sqlite":
            assert copy.projects() == [a, b] and list(copy.iter_lines("none")) == []
    finally:
        copy.close()


def test_the_cross_project_page_in_a_browser(team: Team) -> None:
    from tests.report import test_browser as browsing  # skips, saying why, without Chromium

    origin = f"http://127.0.0.1:{team.served.port}"
    with browsing.sync_api.sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=browsing.CHROMIUM, args=browsing.FLAGS)
        try:
            context = launched.new_context(viewport={"width": 1280, "height": 900}, extra_http_headers={
                "Authorization": f"Bearer {team.served.token}"})
            watched = browsing.Watched(context.new_page())
            response = watched.page.goto(f"{origin}/report?project=*")
            assert response.status == 200
            assert watched.text("#sum-records") == "28" and watched.text("#sum-denials") == "7"
            assert watched.rows("t-projects") == {
                BILLING: ["4", "3", "1", "0", "0", "2", "2"],
                SHOP: ["24", "15", "7", "1", "2", "5", "5"]}
            assert watched.text("#sum-chain") == "copy's chain holds"
            watched.page.fill("input[name=state]", "EXPLORE")
            with watched.page.expect_navigation():
                watched.page.click("form.filters button")
            assert "project=%2A" in watched.page.url or "project=*" in watched.page.url
            assert watched.rows("t-projects")[BILLING][:2] == ["1", "1"]
            assert all(url.startswith(f"{origin}/report") for url in watched.requests)
            assert watched.errors == []
            context.close()
        finally:
            launched.close()


def _peak_of_a_copy(tmp_path: Path, count: int) -> int:
    """The peak Python memory of a report across three projects of ``count`` records each,
    read from a SQLite central copy."""
    import tracemalloc

    from governance.report import team
    from tests.report.test_streaming import _stream

    copy = SqliteCopy(str(tmp_path / f"copy-{count}" / "central-ledger.db"))
    try:
        for project in ("p1", "p2", "p3"):
            rows, prev = [], chain.GENESIS
            for seq, rec in enumerate(_stream(count // 2), 1):
                digest = f"{project}{seq:060d}"
                rows.append(Row(seq, digest, prev, json.dumps({**rec, "seq": seq})))
                prev = digest
            copy.add(project, rows)
        del rows
        tracemalloc.start()
        try:
            found = team.build(copy.iter_lines(), Selection(), team.EVERY)
            assert found["activity"]["records"] == 3 * (count // 2) * 2
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    finally:
        copy.close()


def test_memory_does_not_grow_with_the_copy(tmp_path: Path) -> None:
    small, large = _peak_of_a_copy(tmp_path, 4_000), _peak_of_a_copy(tmp_path, 40_000)
    assert large < small * 1.3 + 300_000, (small, large)
