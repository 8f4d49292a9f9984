"""JSON-RPC 2.0 as the CSTP endpoint speaks it: single requests, batches and notifications, with
the standard error codes and CSTP's own.

:func:`answer` takes a request body and a function that runs one call; it returns the response
body, or None when nothing is to be sent back (only notifications).

The CSTP documents print requests in a short form, ``{"method": ..., "params": ...}``, without
``jsonrpc`` and ``id``. Such a request (no ``jsonrpc`` member at all) is answered as a call, with
its ``id`` when it has one and ``null`` otherwise; a request that says ``"jsonrpc": "2.0"`` and has
no ``id`` is a notification, as JSON-RPC 2.0 says, and any other ``jsonrpc`` value is refused.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from governance.errors import GovernanceError

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
RATE_LIMITED = -32002
FORBIDDEN = -32003     # the caller's token has a role that may not call the method
GUARDRAIL_EVAL_FAILED = -32004

MESSAGES = {PARSE_ERROR: "Parse error", INVALID_REQUEST: "Invalid Request",
            METHOD_NOT_FOUND: "Method not found", INVALID_PARAMS: "Invalid params",
            INTERNAL_ERROR: "Internal error", RATE_LIMITED: "Rate limited", FORBIDDEN: "Forbidden",
            GUARDRAIL_EVAL_FAILED: "Guardrail evaluation failed"}
MAX_BATCH = 100


class RpcError(GovernanceError):
    """A call that ends in a JSON-RPC error object."""

    def __init__(self, code: int, message: str | None = None, data: Any = None) -> None:
        self.code = code
        self.data = data
        super().__init__(message or MESSAGES.get(code, "Error"))


@dataclass
class Call:
    """One request of a body: its method, params, id and whether an answer is owed."""

    method: str
    params: dict[str, Any]
    id: str | int | float | None = None
    notification: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


def error(code: int, message: str | None = None, data: Any = None,
          request_id: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": message or MESSAGES.get(code, "Error")}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "error": body, "id": request_id}


def _call(item: Any) -> Call | dict[str, Any]:
    """The call in one request object, or the error response it gets."""
    if not isinstance(item, dict):
        return error(INVALID_REQUEST, "a request is a JSON object")
    request_id = item.get("id")
    if "id" in item and (isinstance(request_id, bool)
                         or not isinstance(request_id, str | int | float | type(None))):
        return error(INVALID_REQUEST, "id must be a string, a number or null")
    short = "jsonrpc" not in item   # the documents' printed form: a call, answered
    if not short and item.get("jsonrpc") != "2.0":
        return error(INVALID_REQUEST, 'jsonrpc must be "2.0"', request_id=request_id)
    method = item.get("method")
    if not isinstance(method, str) or not method:
        return error(INVALID_REQUEST, "method must be a non-empty string",
                     request_id=request_id)
    params = item.get("params", {})
    if params is None:
        params = {}
    if not isinstance(params, dict):
        return error(INVALID_PARAMS, "params must be an object (CSTP methods take named params)",
                     request_id=request_id)
    return Call(method, params, request_id, "id" not in item and not short)


def _run(call: Call, run: Callable[[Call], Any]) -> dict[str, Any] | None:
    try:
        result = run(call)
    except RpcError as exc:
        reply = error(exc.code, exc.message, exc.data, call.id)
    else:
        reply = {"jsonrpc": "2.0", "result": result, "id": call.id}
    return None if call.notification else reply


def answer(body: bytes, run: Callable[[Call], Any]) -> bytes | None:
    """The response body for a request body. ``run`` raises :class:`RpcError` for a failed call
    (any other exception is its own bug: the caller turns it into -32603)."""
    try:
        parsed = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        return _encode(error(PARSE_ERROR, f"the body is not JSON ({exc})"))
    except RecursionError:
        return _encode(error(PARSE_ERROR, "the body is JSON nested too deep to read"))
    if isinstance(parsed, list):
        if not parsed:
            return _encode(error(INVALID_REQUEST, "an empty batch"))
        if len(parsed) > MAX_BATCH:
            return _encode(error(INVALID_REQUEST, f"a batch of {len(parsed)} requests; at "
                                                  f"most {MAX_BATCH} are served at once"))
        replies = []
        for item in parsed:
            call = _call(item)
            reply = call if isinstance(call, dict) else _run(call, run)
            if reply is not None:
                replies.append(reply)
        return _encode(replies) if replies else None
    call = _call(parsed)
    if isinstance(call, dict):
        return _encode(call)
    reply = _run(call, run)
    return _encode(reply) if reply is not None else None


def _encode(value: Any) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False,
                      default=str).encode("utf-8")
