"""``GET /report`` on a real server (``governance serve`` in its own process): the token, the
filters of the query string, and answers that say what is wrong."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.report import fixture
from tests.server.conftest import Served, start_server, stop_server


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One server for the module: its requests only read."""
    project = (tmp_path_factory.mktemp("live") / "shop-api").resolve()
    (project / ".claude").mkdir(parents=True)
    fixture.write(project)
    server = start_server(project)
    try:
        yield server
    finally:
        stop_server(server)


def figures_of(body: bytes) -> dict[str, Any]:
    page = body.decode()
    found: dict[str, Any] = json.loads(
        page.split('<script type="application/json" id="figures">', 1)[1].split("</script>")[0])
    return found


def test_the_live_report_needs_the_token_and_takes_filters(live: Served) -> None:
    for token in (None, "wrong-token"):
        status, headers, body = live.request("GET", "/report", token=token)
        assert status == 401 and json.loads(body) == {"error": "unauthorized"}
    status, headers, body = live.request("GET", "/report")
    assert status == 200 and headers["content-type"] == "text/html; charset=utf-8"
    assert "default-src 'none'" in headers["content-security-policy"]
    found = figures_of(body)
    assert found["denials"]["decisions"] == 15 and found["activity"]["records"] == 24
    assert found["tamper"]["chain"]["ok"] and found["memory"]["awaiting_review"] == 2
    assert b'<form class="filters" method="get" action="/report">' in body
    status, _, body = live.request("GET", "/report?state=EXPLORE&agent=main&project=shop-api")
    found = figures_of(body)
    assert status == 200 and found["selection"] == {"state": "EXPLORE", "agent": "main"}
    assert found["denials"]["decisions"] == 2 and found["denials"]["by_state"] == {"EXPLORE": 1}
    assert b'name="state" value="EXPLORE"' in body
    status, _, body = live.request("GET", f"/report?since={fixture.DAY2}&until={fixture.DAY2}"
                                          f"&project={live.project}")
    assert status == 200 and figures_of(body)["denials"]["decisions"] == 9


@pytest.mark.parametrize(("query", "status", "said"), [
    ("?project=billing-api", 404, "no project billing-api here: this server serves shop-api"),
    ("?project=/elsewhere/shop-api", 404, "and no ledger was shipped to it"),
    ("?sate=DO", 400, "unknown filter 'sate': the report takes project, agent, state, since"),
    ("?since=yesterday", 400, "since: not a time: 'yesterday'"),
])
def test_a_bad_query_is_refused_with_its_reason(live: Served, query: str, status: int,
                                                said: str) -> None:
    found, headers, body = live.request("GET", "/report" + query)
    assert found == status and said in json.loads(body)["error"]
    assert headers["content-type"] == "application/json"
    found, headers, _ = live.request("POST", "/report", b"{}")
    assert found == 405 and headers["allow"] == "GET"
