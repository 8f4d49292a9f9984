"""The server over real HTTP: auth, Host check, limits, CSTP methods with their audit, the rate
limit, and hooks over HTTP answering what the command hooks answer."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from governance.server.hooks import HOOKS
from tests.helpers import PAYLOAD_DIR, install, recorded, run_command, set_state
from tests.server.conftest import Served, start_server, stop_server

ACTION = {"description": "Deploy the billing service", "category": "process", "stakes": "high",
          "confidence": 0.3, "context": {"affects_production": True}}


def ledger(project: Path) -> list[dict[str, Any]]:
    path = project / ".claude" / "governance" / "ledger.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_healthz_needs_no_token_and_says_nothing_secret(served: Served) -> None:
    status, _, body = served.request("GET", "/healthz", token=None)
    health = json.loads(body)
    assert status == 200 and health["status"] == "ok"
    assert served.token not in body.decode() and str(served.project) not in body.decode()


@pytest.mark.parametrize("token", [None, "wrong-token", ""])
@pytest.mark.parametrize("path", ["/cstp", "/hooks/PreToolUse", "/openapi.json", "/nowhere"])
def test_without_the_token_every_endpoint_is_401_and_nothing_else(
        served: Served, token: str | None, path: str) -> None:
    status, headers, body = served.request("POST", path, b'{"jsonrpc": "2.0"}', token=token)
    assert status == 401 and json.loads(body) == {"error": "unauthorized"}
    assert headers["www-authenticate"] == "Bearer"


def test_a_basic_or_malformed_authorization_header_is_401(served: Served) -> None:
    for value in (f"Basic {served.token}", served.token, f"Bearer  {served.token}x"):
        status, _, _ = served.request("GET", "/openapi.json", token=None,
                                      headers={"Authorization": value})
        assert status == 401


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8765", "127.0.0.1.nip.io",
                                  "192.168.1.10", "localhost.evil.example"])
def test_a_host_that_is_not_loopback_is_refused_before_anything(served: Served,
                                                                host: str) -> None:
    status, _, body = served.request("POST", "/cstp", b"{}", headers={"Host": host})
    assert status == 403 and served.token.encode() not in body


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost:1234", "[::1]:8765", "LOCALHOST"])
def test_loopback_hosts_are_served(served: Served, host: str) -> None:
    status, _, _ = served.request("GET", "/healthz", headers={"Host": host})
    assert status == 200


def test_an_oversized_body_is_413_without_being_read(served: Served) -> None:
    status, _, _ = served.request("POST", "/cstp", b"x" * (1024 * 1024 + 1))
    assert status == 413


def test_a_slow_body_is_408(project: Path) -> None:
    install(project)
    server = start_server(project, "--rate", "0")
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
            sock.sendall(b"POST /cstp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
                         + server.token.encode() + b"\r\nContent-Length: 100\r\n\r\n{")
            started = time.monotonic()
            reply = sock.recv(4096)
            assert reply.startswith(b"HTTP/1.1 408") and time.monotonic() - started < 20
    finally:
        stop_server(server)


def test_headers_that_never_finish_are_cut_off(served: Served) -> None:
    from governance.server.connection import HEADER_TIMEOUT

    with socket.create_connection(("127.0.0.1", served.port), timeout=HEADER_TIMEOUT + 20) as sock:
        sock.sendall(b"POST /cstp HTTP/1.1\r\nHost: 127.0.0.1\r\n")   # and nothing more
        started = time.monotonic()
        assert sock.recv(4096) == b""                                # closed by the server
        assert HEADER_TIMEOUT - 1 < time.monotonic() - started < HEADER_TIMEOUT + 10
    assert served.request("GET", "/healthz")[0] == 200


def test_wrong_methods_and_paths(served: Served) -> None:
    assert served.request("GET", "/cstp")[0] == 405
    assert served.request("GET", "/hooks/PreToolUse")[0] == 405
    assert served.request("POST", "/hooks/Stop", b"{}")[0] == 404
    assert served.request("GET", "/elsewhere")[0] == 404


def test_openapi_is_served_and_equals_the_shipped_file(served: Served) -> None:
    from governance.server.openapi import document, shipped

    status, _, body = served.request("GET", "/openapi.json")
    assert status == 200 and json.loads(body) == document()
    assert shipped() == document(), ("regenerate: governance serve --openapi > "
                                     "governance/server/openapi.json")


def test_check_guardrails_answers_the_seed_shape_and_is_audited(served: Served) -> None:
    got = served.rpc({"jsonrpc": "2.0", "method": "cstp.checkGuardrails", "id": "c-1",
                      "params": {"action": ACTION, "agent": {"id": "ci-bot"}}})
    result = got["result"]
    assert got["id"] == "c-1" and result["allowed"] is False
    assert result["agent"] == "claude-governance" and result["requesting_agent"] == "ci-bot"
    assert {v["guardrailId"] for v in result["violations"]} == {
        "no-high-stakes-low-confidence", "no-production-without-review"}
    for item in result["violations"] + result["warnings"]:
        assert set(item) == {"guardrailId", "name", "message", "severity", "suggestion"}
    assert result["evaluated"] >= 3 and result["evaluatedAt"].endswith("Z")
    audit = [r for r in ledger(served.project) if r.get("event") == "CSTP"][-1]
    assert audit["method"] == "cstp.checkGuardrails" and audit["agent"] == "ci-bot"
    assert audit["allowed"] is False and audit["evaluated"] == result["evaluated"]
    assert set(audit["violations"]) == {v["guardrailId"] for v in result["violations"]}
    assert audit["action"] == ACTION["description"]


def test_missing_description_is_invalid_params_naming_it(served: Served) -> None:
    got = served.rpc({"jsonrpc": "2.0", "method": "cstp.checkGuardrails", "id": 1,
                      "params": {"action": {"category": "process"}}})
    assert got["error"]["code"] == -32602 and "action.description" in got["error"]["message"]
    audit = [r for r in ledger(served.project) if r.get("event") == "CSTP"][-1]
    assert audit["error"] == -32602


def test_record_query_review_calibration_and_session_context(served: Served) -> None:
    agent = {"id": "planner"}
    recorded_ = served.rpc({"jsonrpc": "2.0", "method": "cstp.recordDecision", "id": 1, "params": {
        "decision": "Use PostgreSQL for session storage", "category": "architecture",
        "stakes": "medium", "confidence": 0.8, "tags": ["database"],
        "pattern": "boring technology", "context": "sessions outgrew Redis", "agent": agent}})
    decision_id = recorded_["result"]["id"]
    assert recorded_["result"]["success"] is True and decision_id.startswith("dec-")
    found = served.rpc({"jsonrpc": "2.0", "method": "cstp.queryDecisions", "id": 2,
                        "params": {"query": "session storage PostgreSQL", "agent": agent}})
    assert found["result"]["decisions"][0]["id"] == decision_id
    reviewed = served.rpc({"jsonrpc": "2.0", "method": "cstp.reviewDecision", "id": 3,
                           "params": {"id": decision_id, "outcome": "success",
                                      "note": "fine", "agent": agent}})
    assert reviewed["result"]["decision"]["outcome"] == "success"
    calibration = served.rpc({"jsonrpc": "2.0", "method": "cstp.getCalibration", "id": 4,
                              "params": {"agent": agent}})
    assert calibration["result"]["overall"]["sample_size"] == 1
    context = served.rpc({"jsonrpc": "2.0", "method": "cstp.getSessionContext", "id": 5,
                          "params": {"agent": agent}})["result"]
    assert context["state"]["state"] == "DO" and context["decisionCount"] == 1
    assert context["recentDecisions"][0]["id"] == decision_id
    assert any(g["guardrailId"] == "no-high-stakes-low-confidence"
               for g in context["activeGuardrails"])
    time.sleep(0.3)   # five calls spent the burst of this credential (--rate 5 --burst 5)
    missing = served.rpc({"jsonrpc": "2.0", "method": "cstp.reviewDecision", "id": 6,
                          "params": {"id": "dec-nope", "outcome": "success",
                                     "agent": {"id": "reviewer"}}})
    assert missing["error"]["code"] == -32602


def test_pre_action_blocks_and_does_not_record(served: Served) -> None:
    got = served.rpc({"jsonrpc": "2.0", "method": "cstp.preAction", "id": 1, "params": {
        "action": {**ACTION, "tags": ["deploy"], "pattern": "big bang"},
        "agent": {"id": "deployer"}}})["result"]
    assert got["allowed"] is False and got["decision_id"] is None and got["block_reasons"]
    assert {v["guardrailId"] for v in got["violations"]} >= {"no-high-stakes-low-confidence"}


def test_rate_limit_bursts_then_refuses_with_a_hint_then_recovers(served: Served) -> None:
    call = {"jsonrpc": "2.0", "method": "cstp.getCalibration", "params": {"agent": {"id": "r"}}}
    batch = [{**call, "id": i} for i in range(8)]
    got = served.rpc(batch)
    codes = [r.get("error", {}).get("code") for r in got]
    assert codes[:5] == [None] * 5 and codes[5:] == [-32002] * 3
    assert got[5]["error"]["data"]["retryAfter"] > 0
    other = served.rpc({**call, "id": 9, "params": {"agent": {"id": "someone-else"}}})
    assert other["error"]["code"] == -32002      # the limit is the credential's, not the agent's
    time.sleep(got[5]["error"]["data"]["retryAfter"] + 0.05)
    assert "result" in served.rpc({**call, "id": 10})


def test_notifications_and_batches_over_http(served: Served) -> None:
    status, _, body = served.request("POST", "/cstp", json.dumps(
        {"jsonrpc": "2.0", "method": "cstp.getCalibration"}).encode())
    assert status == 204 and body == b""
    got = served.rpc([{"jsonrpc": "2.0", "method": "cstp.nope", "id": 1}, {"bad": 1}])
    assert [r["error"]["code"] for r in got] == [-32601, -32600]
    status, _, body = served.request("POST", "/cstp", b"{not json")
    assert status == 200 and json.loads(body)["error"]["code"] == -32700


def test_guardrail_evaluation_failure_is_32004(served: Served) -> None:
    (served.project / ".claude" / "governance" / "guardrails.yaml").write_text(
        "guardrails:\n  - id: broken\n    condition: {field: stakes, '~~': 1}\n")
    got = served.rpc({"jsonrpc": "2.0", "method": "cstp.checkGuardrails", "id": 1,
                      "params": {"action": ACTION}})
    assert got["error"]["code"] == -32004 and "guardrails.yaml" in got["error"]["message"]


PAYLOADS = sorted(p.name for p in PAYLOAD_DIR.glob("*.json"))


def our_command(project: Path, event: str) -> str:
    from governance.install import settings

    return settings.our_commands(settings.load(settings.settings_path(str(project))))[event][0]


@pytest.mark.parametrize("state", ["implementation-cycle/DO/WORK-064", None])
def test_hooks_over_http_answer_what_the_command_hook_answers(tmp_path: Path,
                                                               state: str | None) -> None:
    """Every recorded payload, into two identical projects: one through the command hook the
    installer writes, one through the server. The answers are the same, byte for byte once the
    project path is named alike."""
    here, there = tmp_path / "a" / "shop-api", tmp_path / "b" / "shop-api"
    for project in (here, there):
        (project / ".claude").mkdir(parents=True)
        install(project)
        if state:
            set_state(project, state)
    server = start_server(there)
    try:
        for name in PAYLOADS:
            event = name.split("-", 1)[0].removesuffix(".json")
            if event not in HOOKS:
                continue
            mine = run_command(our_command(here, event), json.dumps(recorded(name, here)))
            status, body = server.hook(event, recorded(name, there))
            assert status == 200, (name, body)
            assert body.decode().replace(str(there), "P") == \
                mine.stdout.decode().replace(str(here), "P"), name
    finally:
        stop_server(server)
    events = [r["event"] for r in ledger(there)]
    assert events.count("PreToolUse") == sum(1 for n in PAYLOADS if n.startswith("PreToolUse"))
    assert {n.split("-", 1)[0].removesuffix(".json") for n in PAYLOADS} >= set(HOOKS)


def test_a_deny_over_http_is_recorded_like_the_command_hooks(served: Served) -> None:
    status, body = served.hook("PreToolUse", recorded("PreToolUse-WebFetch.json", served.project))
    answer = json.loads(body)["hookSpecificOutput"]
    assert status == 200 and answer["permissionDecision"] == "deny"
    assert answer["permissionDecisionReason"].startswith("[STATE: DO] WebFetch (web-fetch)")
    last = ledger(served.project)[-1]
    assert last["event"] == "PreToolUse" and last["decision"] == "deny"


def test_fail_closed_query_denies_on_an_internal_error(served: Served) -> None:
    broken = {"session_id": "s", "hook_event_name": "PreToolUse", "cwd": "/nonexistent/x",
              "tool_name": "Bash", "tool_input": {"command": "ls"}, "transcript_path": ""}
    status, body = served.hook("PreToolUse", {**broken, "tool_input": "not an object"},
                               "?on_error=block")
    assert status == 200 and json.loads(body)["hookSpecificOutput"]["permissionDecision"] == "deny"
    status, body = served.hook("PreToolUse", {**broken, "tool_input": "not an object"})
    assert "permissionDecision" not in json.loads(body).get("hookSpecificOutput", {})


def test_a_terminal_change_takes_effect_on_the_next_call(served: Served) -> None:
    payload = recorded("PreToolUse-WebFetch.json", served.project)
    assert json.loads(served.hook("PreToolUse", payload)[1])[
        "hookSpecificOutput"]["permissionDecision"] == "deny"
    set_state(served.project, "implementation-cycle/EXPLORE/WORK-064")
    answer = json.loads(served.hook("PreToolUse", payload)[1])["hookSpecificOutput"]
    assert "permissionDecision" not in answer and "[STATE: EXPLORE]" in answer["additionalContext"]


def test_sigterm_stops_gracefully_and_the_ledger_verifies(served: Served) -> None:
    for _ in range(5):
        served.hook("PreToolUse", recorded("PreToolUse-Bash.json", served.project))
    assert stop_server(served) == 0
    record = served.project / ".claude" / "governance" / "server.json"
    assert not record.exists()
    from governance.ledger.verifier import verify

    assert verify(str(served.project / ".claude" / "governance")).ok


def test_a_sigterm_as_soon_as_the_server_says_it_is_up_stops_it(project: Path) -> None:
    """The record appears before uvicorn listens for signals: a stop sent at once (a service
    manager's, a test's) is kept until the server has started, not lost."""
    import signal
    import subprocess
    import sys

    from tests.helpers import REPO

    install(project)
    record = project / ".claude" / "governance" / "server.json"
    process = subprocess.Popen([sys.executable, "-m", "governance.commands", "serve",
                                "--project", str(project), "--port", "0"], cwd=str(REPO),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while not record.exists():
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.001)
        process.send_signal(signal.SIGTERM)
        assert process.wait(20) == 0
    finally:
        process.kill()
    assert not record.exists()


def test_a_second_server_for_the_same_project_is_refused(served: Served) -> None:
    import subprocess
    import sys

    from tests.helpers import REPO

    done = subprocess.run([sys.executable, "-m", "governance.commands", "serve", "--project",
                           str(served.project), "--port", "0"], cwd=str(REPO),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "already runs" in done.stderr


def test_status_and_stop_commands(served: Served) -> None:
    import subprocess
    import sys

    from tests.helpers import REPO

    def governance(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "governance.commands", "serve",
                               "--project", str(served.project), *args], cwd=str(REPO),
                              capture_output=True, text=True, timeout=60)

    status = governance("--status", "--json")
    assert status.returncode == 0 and json.loads(status.stdout)["pid"] == served.process.pid
    assert "Stopped" in governance("--stop").stdout
    assert served.process.wait(20) == 0
    down = governance("--status")
    assert down.returncode == 3 and "not running" in down.stdout


def test_a_non_loopback_host_needs_allow_remote(project: Path) -> None:
    import subprocess
    import sys

    from tests.helpers import REPO

    done = subprocess.run([sys.executable, "-m", "governance.commands", "serve", "--project",
                           str(project), "--host", "0.0.0.0", "--port", "0"], cwd=str(REPO),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "--allow-remote" in done.stderr
