"""The CSTP documents' printed requests, sent verbatim to a real ``governance serve`` and to the
MCP tool ``pre_action`` (the SDK's own stdio client); our answers have the printed shapes
(``spec_shape``). One test per acceptance criterion of the checkGuardrails document; the response
time criterion is measured by ``python -m governance.bench.server`` (not a timed test)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from governance.decisions.store import DecisionStore
from tests.helpers import REPO, install, set_state
from tests.server.conftest import Served, start_server, stop_server
from tests.server.spec_shape import fill_from, mismatches, printed

JWT = [("Chose JWT for API auth in microservice layer", 0.9),
       ("JWT auth for the public API gateway", 0.85),
       ("Stateless JWT auth for the admin service", 0.8)]
STATELESS = "Stateless auth scales better than session-based"


def ledger(project: Path) -> list[dict[str, Any]]:
    path = project / ".claude" / "governance" / "ledger.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def count(project: Path) -> int:
    store = DecisionStore.for_project(str(project))
    try:
        return store.count()
    finally:
        store.close()


def seed(served: Served) -> None:
    """Confirmed decisions of the printed agent in the printed category, as an agent records and
    reviews them over CSTP."""
    agent = {"id": "claude-code"}
    for index, (text, confidence) in enumerate(JWT):
        got = served.rpc({"jsonrpc": "2.0", "method": "cstp.recordDecision", "id": index,
                          "params": {"decision": text, "category": "architecture",
                                     "stakes": "medium", "confidence": confidence,
                                     "tags": ["auth"], "pattern": STATELESS, "agent": agent}})
        served.rpc({"jsonrpc": "2.0", "method": "cstp.reviewDecision", "id": index,
                    "params": {"id": got["result"]["id"], "outcome": "success",
                               "agent": agent}})


@pytest.fixture(scope="module")
def spec_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    project = Path(tmp_path_factory.mktemp("spec")) / "shop-api"
    (project / ".claude").mkdir(parents=True)
    install(project)
    set_state(project, "implementation-cycle/DO/WORK-064")
    server = start_server(project, "--rate", "0")
    try:
        seed(server)
        yield server
    finally:
        assert stop_server(server) == 0


def send_verbatim(served: Served, name: str) -> Any:
    """The printed request's own bytes, as printed."""
    status, _, body = served.request("POST", "/cstp",
                                     (printed_path(name)).read_bytes())
    assert status == 200, (status, body)
    return json.loads(body)


def printed_path(name: str) -> Path:
    from tests.server.spec_shape import SPEC

    return SPEC / name


# -- cstp.preAction ------------------------------------------------------------------------------

def test_the_printed_pre_action_request_gets_the_printed_answer(spec_server: Served) -> None:
    before = count(spec_server.project)
    got = send_verbatim(spec_server, "preAction.request.json")
    spec = printed("preAction.response.json")
    assert "error" not in got, got
    assert mismatches(spec, got) == []
    result = got["result"]
    assert got["id"] is None and got["jsonrpc"] == "2.0"   # the short form is answered
    assert result["allowed"] is True and result["decision_id"].startswith("dec-")
    assert count(spec_server.project) == before + 1
    assert result["relevant_decisions"] and result["patterns_summary"] == [
        f"{STATELESS} (3 confirmations)"]
    assert {item["status"] for item in result["guardrail_results"]} == {"pass"}
    calibration = result["calibration_context"]
    assert calibration["category_accuracy"] == 1.0 and calibration["sample_size"] == 3
    # agent_id at the top of params is the declared identity, recorded as declared
    store = DecisionStore.for_project(str(spec_server.project))
    recorded = store.get(result["decision_id"])
    store.close()
    assert recorded is not None and recorded["agent_id"] == "claude-code"
    assert result["requesting_agent"] == "claude-code" and result["agent"] == "claude-governance"
    # no tags, no pattern: both derived and said so; the pattern from the confirmed JWT decisions
    quality = result["quality"]
    assert quality["derived"]["pattern"] == STATELESS and recorded["pattern"] == STATELESS
    assert recorded["tags"] == quality["derived"]["tags"] and "architecture" in recorded["tags"]
    assert quality["hint"] and quality["rule"] == "derive"
    assert result["fail_mode"] == "open" and result["decided_by"] == "guardrails"
    audit = [r for r in ledger(spec_server.project) if r.get("event") == "CSTP"][-1]
    from governance.server.cstp import credential_key

    # the credential is recorded as it is keyed (a digest, which the ledger's redaction keeps)
    assert audit["declared_agent"] == "claude-code"
    assert audit["credential"] == credential_key(spec_server.token)


def test_the_blocked_example_answers_blocked_records_nothing_and_is_no_error(
        spec_server: Served) -> None:
    before = count(spec_server.project)
    got = send_verbatim(spec_server, "preAction.blocked.request.json")
    assert "error" not in got, got
    spec = printed("preAction.blocked.response.txt")
    fill = fill_from(printed("preAction.response.json"))
    assert mismatches(spec, got, fill=fill) == []
    result = got["result"]
    assert result["allowed"] is False and result["decision_id"] is None
    assert [r["guardrail"] for r in result["block_reasons"]] == ["no-high-stakes-low-confidence"]
    assert all(r["message"] and r["suggestion"] for r in result["block_reasons"])
    assert result["relevant_decisions"] and result["calibration_context"]["sample_size"] == 3
    assert count(spec_server.project) == before
    assert "quality" not in result


def test_the_printed_request_in_json_rpc_form_keeps_its_id(spec_server: Served) -> None:
    request = json.loads(printed_path("preAction.request.json").read_text())
    request["params"]["options"]["auto_record"] = False
    got = spec_server.rpc({"jsonrpc": "2.0", "id": "p-7", **request})
    assert got["id"] == "p-7" and got["result"]["decision_id"] is None
    assert mismatches({**printed("preAction.response.json"), "id": "p-7"},
                      {**got, "result": {**got["result"], "decision_id": "dec-x"}}) == []


def test_the_strict_quality_rule_refuses_naming_the_missing_field(project: Path) -> None:
    install(project)
    (project / ".claude" / "governance" / "guardrails.yaml").write_text(
        "settings: {require_tags: true, require_pattern: true}\n")
    server = start_server(project, "--rate", "0")
    try:
        got = send_verbatim(server, "preAction.request.json")
        assert got["error"]["code"] == -32602
        assert got["error"]["message"].startswith("action.tags: ")
        assert got["error"]["data"][0]["field"] == "action.tags"
        blocked = send_verbatim(server, "preAction.blocked.request.json")
        assert blocked["result"]["allowed"] is False      # blocked, not refused
        assert count(project) == 0
    finally:
        stop_server(server)


@pytest.mark.parametrize("mode", ["open", "closed"])
def test_the_fail_mode_decides_a_warning_and_the_answer_says_so(project: Path, mode: str
                                                                 ) -> None:
    install(project)
    (project / ".claude" / "governance" / "guardrails.yaml").write_text(
        f"settings: {{fail_mode: {mode}}}\n")
    request = json.loads(printed_path("preAction.request.json").read_text())
    request["params"]["action"]["context"] = {"affectsProduction": True,
                                              "codeReviewCompleted": True}
    server = start_server(project, "--rate", "0")
    try:
        result = server.rpc(request)["result"]
        assert result["fail_mode"] == mode and result["decided_by"] == "fail_mode"
        assert result["allowed"] is (mode == "open")
        assert (result["decision_id"] is None) is (mode == "closed")
        warned = [r for r in result["guardrail_results"] if r["status"] == "warn"]
        assert [r["name"] for r in warned] == ["prefer-staged-rollout"]
        assert mismatches(printed("preAction.response.json")["result"]["guardrail_results"],
                          result["guardrail_results"]) == []
        guard = server.rpc(json.loads(printed_path("checkGuardrails.blocked.request.json")
                                      .read_text().replace("false", "true")))["result"]
        assert guard["allowed"] is True and guard["warnings"]   # warnings never block there
    finally:
        stop_server(server)


# -- the MCP tool pre_action -----------------------------------------------------------------------

def _mcp_payload(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    data = result.structured_content
    if data is None:
        loaded: dict[str, Any] = json.loads(result.content[0].text)
        return loaded
    return dict(data.get("result", data) if set(data) == {"result"} else data)


async def _mcp(project: Path, calls: list[dict[str, Any]]) -> tuple[Any, list[dict[str, Any]]]:
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters

    env = {**os.environ, "PYTHONPATH": str(REPO), "GOVERNANCE_AGENT_ID": "claude-code"}
    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "governance.decisions.mcp_server", "--project", str(project)], env=env,
        cwd=str(project))
    async with Client(params) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        answers = [_mcp_payload(await client.call_tool("pre_action", arguments))
                   for arguments in calls]
    return tools["pre_action"], answers


def _arguments(name: str) -> dict[str, Any]:
    """The printed request's action and auto_record as the printed tool's arguments."""
    params = json.loads(printed_path(name).read_text())["params"]
    return {**params["action"], "auto_record": params["options"]["auto_record"]}


def _resolve(schema: Any, defs: dict[str, Any]) -> Any:
    if isinstance(schema, dict):
        if "$ref" in schema:
            return _resolve(defs[schema["$ref"].rsplit("/", 1)[-1]], defs)
        return {key: _resolve(value, defs) for key, value in schema.items()}
    if isinstance(schema, list):
        return [_resolve(item, defs) for item in schema]
    return schema


def test_the_mcp_tool_declares_the_printed_schema_and_answers_like_cstp(
        spec_server: Served) -> None:
    pytest.importorskip("mcp")
    before = count(spec_server.project)
    tool, (allowed, blocked) = asyncio.run(_mcp(spec_server.project, [
        _arguments("preAction.request.json"), _arguments("preAction.blocked.request.json")]))
    definition = json.loads(printed_path("pre_action.mcp_tool.json").read_text())
    assert tool.name == definition["name"]
    assert tool.description.startswith(definition["description"])
    ours = _resolve(tool.input_schema, tool.input_schema.get("$defs", {}))
    want = definition["inputSchema"]
    assert ours["type"] == want["type"] and sorted(ours["required"]) == sorted(want["required"])
    for name, spec in want["properties"].items():
        got = ours["properties"][name]
        for key in ("type", "enum", "minimum", "maximum", "default"):
            if key in spec:
                assert got.get(key) == spec[key], (name, key, got)
        if "items" in spec:
            assert got["items"]["type"] == spec["items"]["type"], name
            for field, shape in spec["items"].get("properties", {}).items():
                assert got["items"]["properties"][field]["type"] == shape["type"], (name, field)

    assert mismatches(printed("preAction.response.json")["result"], allowed) == []
    assert allowed["allowed"] is True and allowed["decision_id"].startswith("dec-")
    assert allowed["quality"]["derived"]["pattern"] == STATELESS
    fill = fill_from(printed("preAction.response.json"))
    assert mismatches(printed("preAction.blocked.response.txt")["result"], blocked,
                      fill=fill) == []
    assert blocked["allowed"] is False and blocked["decision_id"] is None
    assert count(spec_server.project) == before + 1          # the blocked one recorded nothing
    # the same keys as cstp.preAction's answer to the same request
    over_http = send_verbatim(spec_server, "preAction.blocked.request.json")["result"]
    assert set(blocked) == set(over_http)


# -- cstp.checkGuardrails: the printed request and one test per acceptance criterion --------------

def test_the_printed_check_request_is_allowed_in_the_printed_shape(spec_server: Served) -> None:
    got = send_verbatim(spec_server, "checkGuardrails.request.json")
    assert mismatches(printed("checkGuardrails.allowed.response.json"), got) == []
    result = got["result"]
    assert got["id"] == "req-001" and result["allowed"] is True and result["violations"] == []
    # the reviewed production change passes the review rule; the missing rollout only warns
    assert [w["guardrailId"] for w in result["warnings"]] == ["prefer-staged-rollout"]
    assert result["agent"] == "claude-governance"            # the responding agent, not emerson
    assert result["requesting_agent"] == "emerson"


def test_violations_return_allowed_false_in_the_printed_shape(spec_server: Served) -> None:
    got = send_verbatim(spec_server, "checkGuardrails.blocked.request.json")
    assert mismatches(printed("checkGuardrails.blocked.response.json"), got) == []
    result = got["result"]
    assert result["allowed"] is False
    assert [v["guardrailId"] for v in result["violations"]] == ["no-production-without-review"]
    assert all(v["severity"] == "block" for v in result["violations"])


def test_warnings_are_included_but_never_block(spec_server: Served) -> None:
    result = send_verbatim(spec_server, "checkGuardrails.request.json")["result"]
    assert result["allowed"] is True and result["warnings"][0]["severity"] == "warn"
    assert set(result["warnings"][0]) >= {"guardrailId", "name", "message", "severity",
                                           "suggestion"}


def test_every_check_is_audited_in_the_printed_format(spec_server: Served) -> None:
    for name, allowed in (("checkGuardrails.request.json", True),
                          ("checkGuardrails.blocked.request.json", False)):
        answer = send_verbatim(spec_server, name)["result"]
        audit = [r for r in ledger(spec_server.project)
                 if r.get("event") == "guardrail_check"][-1]
        assert mismatches(printed("checkGuardrails.audit.json"), audit) == []
        assert audit["requesting_agent"] == "emerson" and audit["allowed"] is allowed
        assert audit["action"] == "Deploy authentication service to production"
        assert audit["violations"] == [v["guardrailId"] for v in answer["violations"]]
        assert audit["evaluated"] == answer["evaluated"]
        assert audit["credential"].startswith("bearer:") and "REDACTED" not in audit["credential"]


def test_a_missing_description_is_32602(spec_server: Served) -> None:
    request = json.loads(printed_path("checkGuardrails.request.json").read_text())
    del request["params"]["action"]["description"]
    got = spec_server.rpc(request)
    codes = {e["code"]: e for e in printed("checkGuardrails.errors.json")}
    assert got["error"]["code"] == -32602
    assert codes[-32602]["when"] == "Missing action.description"
    assert "action.description" in got["error"]["message"] and got["id"] == "req-001"


def test_an_evaluation_error_is_32004(project: Path) -> None:
    install(project)
    (project / ".claude" / "governance" / "guardrails.yaml").write_text(
        "guardrails:\n  - id: broken\n    condition: {field: stakes, '~~': 1}\n")
    server = start_server(project, "--rate", "0")
    try:
        got = send_verbatim(server, "checkGuardrails.request.json")
        assert got["error"]["code"] == -32004 and "guardrails.yaml" in got["error"]["message"]
    finally:
        stop_server(server)


def test_rate_limiting_blocks_excessive_requests_whatever_agent_is_declared(project: Path
                                                                            ) -> None:
    install(project)
    server = start_server(project, "--rate", "0.2", "--burst", "3")
    try:
        request = json.loads(printed_path("checkGuardrails.request.json").read_text())
        answers = []
        for index in range(5):   # a new declared agent on every call
            request["params"]["agent"]["id"] = f"emerson-{index}"
            answers.append(server.rpc(request))
        pre = json.loads(printed_path("preAction.request.json").read_text())
        pre["params"]["agent_id"] = "someone-else"
        answers.append(server.rpc({"jsonrpc": "2.0", "id": 9, **pre}))
        codes = [a.get("error", {}).get("code") for a in answers]
        assert codes == [None, None, None, -32002, -32002, -32002]
        assert answers[3]["error"]["data"]["retryAfter"] > 0
    finally:
        stop_server(server)


def test_the_responding_agent_is_configurable(project: Path) -> None:
    install(project)
    (project / ".claude" / "governance" / "guardrails.yaml").write_text(
        "settings: {agent_name: cognition-engines}\n")
    server = start_server(project, "--rate", "0")
    try:
        result = send_verbatim(server, "checkGuardrails.request.json")["result"]
        assert result == {**result, "agent": "cognition-engines"}
        assert mismatches(printed("checkGuardrails.allowed.response.json")["result"],
                          result) == []
    finally:
        stop_server(server)


# -- the OpenAPI description keeps in step with the models and the answers ------------------------

def test_openapi_schemas_are_the_models_and_real_answers_fit_the_result_models(
        spec_server: Served) -> None:
    from pydantic.json_schema import models_json_schema

    from governance.server.messages import PARAMS, RESULTS
    from governance.server.openapi import REF, document, shipped

    assert shipped() == document(), ("regenerate: governance serve --openapi > "
                                     "governance/server/openapi.json")
    schemas = shipped()["components"]["schemas"]
    _, built = models_json_schema([(m, "validation") for m in PARAMS.values()]
                                  + [(m, "serialization") for m in RESULTS.values()],
                                  ref_template=REF)
    for model in [*PARAMS.values(), *RESULTS.values()]:
        assert schemas[model.__name__] == built["$defs"][model.__name__], model.__name__
    assert "agent_id" in schemas["PreAction"]["properties"]
    for method, model in RESULTS.items():
        assert schemas["Results"]["properties"][method] == {
            "$ref": REF.format(model=model.__name__)}
    # every field of the real answers is in its model (extra="forbid"): no undocumented field
    for name in ("preAction.request.json", "preAction.blocked.request.json"):
        RESULTS["cstp.preAction"].model_validate(send_verbatim(spec_server, name)["result"])
    for name in ("checkGuardrails.request.json", "checkGuardrails.blocked.request.json"):
        RESULTS["cstp.checkGuardrails"].model_validate(send_verbatim(spec_server, name)["result"])
