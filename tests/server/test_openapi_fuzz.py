"""A property-based run against the served OpenAPI description (schemathesis): for every
operation, requests generated from the schema and requests that break it, with the token, to a
real server. No answer is a 5xx, and every answer is one the description declares (status,
content type, body schema, headers). Skips where schemathesis is not installed (it is in the dev
extra)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

schemathesis = pytest.importorskip("schemathesis")

from hypothesis import HealthCheck, settings  # noqa: E402

from tests.helpers import install, set_state  # noqa: E402
from tests.server.conftest import Served, start_server, stop_server  # noqa: E402


@pytest.fixture(scope="module")
def fuzzed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    project = Path(tmp_path_factory.mktemp("fuzz")) / "shop-api"
    (project / ".claude").mkdir(parents=True)
    install(project)
    set_state(project, "implementation-cycle/DO/WORK-064")
    server = start_server(project, "--rate", "0")
    try:
        yield server
    finally:
        assert stop_server(server) == 0


# JSON-RPC answers a call it refuses (bad params, unknown method) with HTTP 200 and an error
# object, by design: the checks that want a 4xx for data outside the schema do not apply.
JSON_RPC_ANSWERS_200 = [schemathesis.checks.negative_data_rejection,
                        schemathesis.checks.positive_data_acceptance]


def test_no_5xx_and_every_answer_as_described(fuzzed: Served) -> None:
    from hypothesis import given
    from hypothesis.errors import Unsatisfiable

    auth = {"Authorization": f"Bearer {fuzzed.token}"}
    api = schemathesis.openapi.from_url(f"http://127.0.0.1:{fuzzed.port}/openapi.json",
                                        headers=auth)
    tried = []
    for found in api.get_all_operations():
        operation = found.ok()
        for mode in schemathesis.GenerationMode:
            @given(operation.as_strategy(generation_mode=mode))
            @settings(max_examples=100, deadline=None, derandomize=True, database=None,
                      suppress_health_check=list(HealthCheck))
            def run(case: Any) -> None:
                case.call_and_validate(headers=auth, excluded_checks=JSON_RPC_ANSWERS_200)

            try:
                run()
            except Unsatisfiable:   # nothing in the operation to break (GET /healthz)
                assert mode is schemathesis.GenerationMode.NEGATIVE and operation.method == "get"
                continue
            tried.append(f"{operation.method.upper()} {operation.path} {mode.value}")
    assert {"POST /cstp negative", "POST /hooks/{event} negative", "GET /healthz positive",
            "POST /cstp positive", "POST /hooks/{event} positive", "GET /readyz positive",
            "GET /report positive", "GET /ledger/head positive", "POST /ledger/ship positive",
            "POST /ledger/ship negative", "GET /org/bundle positive", "PUT /org/bundle positive",
            "PUT /org/bundle negative"} <= set(tried), tried
