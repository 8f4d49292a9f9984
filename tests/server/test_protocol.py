"""JSON-RPC 2.0 conformance of the CSTP envelope: every error code, batches, notifications."""

from __future__ import annotations

import json
from typing import Any

import pytest

from governance.server import protocol
from governance.server.protocol import Call, RpcError


def run(call: Call) -> Any:
    if call.method == "echo":
        return {"params": call.params}
    if call.method == "limited":
        raise RpcError(protocol.RATE_LIMITED, "slow down", {"retryAfter": 0.5})
    raise RpcError(protocol.METHOD_NOT_FOUND, f"no method {call.method!r}")


def answer(body: Any) -> Any:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    out = protocol.answer(raw, run)
    return None if out is None else json.loads(out)


def test_a_request_gets_its_result_with_its_id() -> None:
    assert answer({"jsonrpc": "2.0", "method": "echo", "params": {"a": 1}, "id": "r-1"}) == {
        "jsonrpc": "2.0", "result": {"params": {"a": 1}}, "id": "r-1"}


def test_parse_error_has_a_null_id() -> None:
    got = answer(b'{"jsonrpc": "2.0", "method": ')
    assert got["error"]["code"] == -32700 and got["id"] is None


def test_json_nested_too_deep_is_a_parse_error_not_a_crash() -> None:
    got = answer(b"[" * 100_000 + b"]" * 100_000)
    assert got["error"]["code"] == -32700 and "too deep" in got["error"]["message"]


@pytest.mark.parametrize("request_body", [
    {"jsonrpc": "1.0", "method": "echo", "id": 1},
    {"jsonrpc": None, "method": "echo", "id": 1},
    {"jsonrpc": "2.0", "id": 1},                               # no method
    {"jsonrpc": "2.0", "method": 5, "id": 1},
    {"jsonrpc": "2.0", "method": "echo", "id": {"x": 1}},      # id of the wrong kind
    {"jsonrpc": "2.0", "method": "echo", "id": True},
    "a string", 42, [],
])
def test_invalid_requests_are_32600(request_body: Any) -> None:
    got = answer(request_body)
    assert got["error"]["code"] == -32600


def test_the_documents_short_form_is_answered_as_a_call() -> None:
    """The CSTP documents print ``{"method": ..., "params": ...}`` without jsonrpc and id."""
    assert answer({"method": "echo", "params": {"a": 1}}) == {
        "jsonrpc": "2.0", "result": {"params": {"a": 1}}, "id": None}
    assert answer({"method": "echo", "id": 5})["id"] == 5
    assert answer([{"method": "echo"}, {"jsonrpc": "2.0", "method": "echo"}]) == [
        {"jsonrpc": "2.0", "result": {"params": {}}, "id": None}]   # the second: a notification


def test_positional_params_are_invalid_params() -> None:
    got = answer({"jsonrpc": "2.0", "method": "echo", "params": [1, 2], "id": 7})
    assert got["error"]["code"] == -32602 and got["id"] == 7


def test_unknown_method_and_method_errors_keep_the_id_and_data() -> None:
    assert answer({"jsonrpc": "2.0", "method": "nope", "id": 3})["error"]["code"] == -32601
    got = answer({"jsonrpc": "2.0", "method": "limited", "id": 4})
    assert got["error"] == {"code": -32002, "message": "slow down", "data": {"retryAfter": 0.5}}


def test_a_notification_gets_no_answer_even_when_it_fails() -> None:
    assert answer({"jsonrpc": "2.0", "method": "echo"}) is None
    assert answer({"jsonrpc": "2.0", "method": "nope"}) is None


def test_a_batch_answers_each_request_in_order_and_skips_notifications() -> None:
    got = answer([
        {"jsonrpc": "2.0", "method": "echo", "params": {"n": 1}, "id": 1},
        {"jsonrpc": "2.0", "method": "echo", "params": {"n": 2}},        # notification
        {"jsonrpc": "2.0", "method": "nope", "id": 3},
        {"foo": "bar"},
        7,
    ])
    assert [r.get("id") for r in got] == [1, 3, None, None]
    assert got[0]["result"] == {"params": {"n": 1}}
    assert [r["error"]["code"] for r in got[1:]] == [-32601, -32600, -32600]


def test_a_batch_of_notifications_only_gets_nothing() -> None:
    assert answer([{"jsonrpc": "2.0", "method": "echo"}] * 3) is None


def test_a_batch_bomb_is_refused_whole() -> None:
    got = answer([{"jsonrpc": "2.0", "method": "echo", "id": i}
                  for i in range(protocol.MAX_BATCH + 1)])
    assert isinstance(got, dict) and got["error"]["code"] == -32600
    assert str(protocol.MAX_BATCH) in got["error"]["message"]
