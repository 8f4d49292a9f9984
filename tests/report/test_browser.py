"""The report in a real browser: headless Chromium (Debian's ``chromium``, driven by Playwright,
never a downloaded browser) opens the generated file and the server's ``/report``. The figures it
shows are the fixture's, the filters change them, no request leaves the page and the console
stays clean. Screenshots are kept as artifacts (``$GOVERNANCE_TEST_ARTIFACTS``, else pytest's
temporary folder). One browser for the module; skipped, saying why, without Chromium or
Playwright.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from governance.report.figures import build
from governance.report.page import render
from governance.report.selection import Selection
from tests.report import fixture, realistic
from tests.server.conftest import Served, start_server, stop_server

CHROMIUM = os.environ.get("GOVERNANCE_CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]

if not os.path.exists(CHROMIUM):
    pytest.skip(f"no Chromium at {CHROMIUM} (`apt-get install chromium`, as .ci/run does; or "
                "set GOVERNANCE_CHROMIUM): the browser tests of the report are skipped",
                allow_module_level=True)
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="the Python package playwright is not installed (`pip install "
                                  "-e .[dev]`): the browser tests of the report are skipped")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = Path(os.environ.get("GOVERNANCE_TEST_ARTIFACTS") or
                  tmp_path_factory.getbasetemp() / "artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


class Watched:
    """A page with every request and every console error or page error it caused."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.requests: list[str] = []
        self.errors: list[str] = []
        page.on("request", lambda request: self.requests.append(request.url))
        page.on("console", lambda message: self.errors.append(message.text)
                if message.type in ("error", "warning") else None)
        page.on("pageerror", lambda error: self.errors.append(str(error)))
        page.on("requestfailed", lambda request: self.errors.append(f"failed: {request.url}"))

    def text(self, selector: str) -> str:
        return " ".join(str(self.page.inner_text(selector)).split())

    def rows(self, table: str) -> dict[str, list[str]]:
        """A table's body rows as {first cell: the other cells}, as the browser shows them."""
        cells: list[list[str]] = self.page.eval_on_selector_all(
            f"#{table} tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.innerText))")
        return {" ".join(row[0].split()): [" ".join(c.split()) for c in row[1:]]
                for row in cells if row}


@pytest.fixture
def watched(browser: Any) -> Iterator[Watched]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        yield Watched(context.new_page())
    finally:
        context.close()


def test_the_generated_file_shows_the_fixtures_figures(project: Path, tmp_path: Path,
                                                       watched: Watched,
                                                       artifacts: Path) -> None:
    fixture.write(project)
    page_file = tmp_path / "report.html"
    page_file.write_text(render(build(str(project), Selection(), show_progress=False)))
    watched.page.goto(page_file.as_uri())
    assert watched.text("#sum-records") == "24" and watched.text("#sum-denials") == "5"
    assert watched.text("#sum-traced") == "75.0%" and watched.text("#sum-awaiting") == "2"
    assert watched.text("#sum-chain") == "chain OK"
    assert watched.rows("t-actions") == {"allow": ["7", "46.7%"], "block": ["5", "33.3%"],
                                         "ask": ["2", "13.3%"], "warn": ["1", "6.7%"]}
    assert watched.rows("t-denials-primitive") == {"file-write": ["3", "60.0%"],
                                                   "vcs-push": ["2", "40.0%"]}
    assert watched.rows("t-denied-commands")["git push --force origin main"][:3] == [
        "1", "vcs-push", "DO"]
    assert watched.rows("t-sops")["docker-deploy"] == ["1", "1", "1", "0", "100.0%"]
    assert watched.rows("t-reliability") == {
        "0.0–0.2": ["1", "0.100", "0.000", "0.100"], "0.2–0.4": ["1", "0.300", "0.500", "-0.200"],
        "0.6–0.8": ["1", "0.650", "1.000", "-0.350"], "0.8–1.0": ["2", "0.850", "0.500", "0.350"]}
    assert watched.rows("t-categories")["deploy"][:3] == ["3", "0.500", "0.230"]
    # the charts are drawn: one bar per action, one point per reliability bin
    assert watched.page.locator("#chart-actions rect").count() == 4
    assert watched.page.locator("#chart-reliability circle").count() == 4
    assert watched.page.locator("svg.chart").count() == 9
    watched.page.screenshot(path=str(artifacts / "report-fixture.png"), full_page=True)
    assert watched.requests == [page_file.as_uri()], watched.requests
    assert watched.errors == []


def test_a_realistic_report_renders_cleanly(tmp_path: Path, watched: Watched,
                                            artifacts: Path) -> None:
    """The page of docs/report.png and docs/report-memory.png: a week of work (run with
    GOVERNANCE_TEST_ARTIFACTS=DIR and copy those two from DIR to docs/ to refresh them)."""
    project = tmp_path / "shop-api"
    (project / ".claude").mkdir(parents=True)
    realistic.write(project)
    page_file = tmp_path / "report.html"
    page_file.write_text(render(build(str(project), Selection(), show_progress=False)))
    watched.page.goto(page_file.as_uri())
    assert watched.text("#sum-chain") == "chain OK"
    assert int(watched.text("#sum-records").replace(",", "")) > 500
    watched.page.screenshot(path=str(artifacts / "report.png"),
                            clip={"x": 0, "y": 0, "width": 1280, "height": 1180})
    watched.page.locator("#memory").screenshot(path=str(artifacts / "report-memory.png"))
    watched.page.screenshot(path=str(artifacts / "report-full.png"), full_page=True)
    assert watched.requests == [page_file.as_uri()] and watched.errors == []


@pytest.fixture
def live(project: Path) -> Iterator[Served]:
    fixture.write(project)
    server = start_server(project)
    try:
        yield server
    finally:
        stop_server(server)


def test_the_live_report_filters_in_the_browser(browser: Any, live: Served,
                                                artifacts: Path) -> None:
    origin = f"http://127.0.0.1:{live.port}"
    context = browser.new_context(viewport={"width": 1280, "height": 900},
                                  extra_http_headers={"Authorization": f"Bearer {live.token}"})
    try:
        watched = Watched(context.new_page())
        response = watched.page.goto(f"{origin}/report")
        assert response.status == 200
        assert watched.text("#sum-decisions") == "15" and watched.text("#sum-denials") == "5"
        watched.page.fill("input[name=state]", "EXPLORE")
        with watched.page.expect_navigation():
            watched.page.click("form.filters button")
        assert watched.page.url.startswith(f"{origin}/report?") and "state=EXPLORE" in \
            watched.page.url
        assert watched.text("#sum-decisions") == "2" and watched.text("#sum-denials") == "1"
        assert watched.rows("t-denials-state") == {"EXPLORE": ["1", "100.0%"]}
        assert watched.text("[data-filter=state]") == "state EXPLORE"
        watched.page.fill("input[name=state]", "")
        watched.page.fill("input[name=agent]", "Explore")
        with watched.page.expect_navigation():
            watched.page.click("form.filters button")
        assert watched.text("#sum-decisions") == "1" and watched.rows("t-actions") == {
            "warn": ["1", "100.0%"]}
        watched.page.screenshot(path=str(artifacts / "report-live.png"), full_page=True)
        assert all(url.startswith(f"{origin}/report") for url in watched.requests), \
            watched.requests
        assert watched.errors == []
    finally:
        context.close()
