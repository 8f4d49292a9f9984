"""The OpenAPI description of the server's HTTP surface, built from the CSTP params models.

Served at ``/openapi.json`` and shipped as ``openapi.json`` beside this module (a test keeps the
two equal; regenerate with ``governance serve --openapi > governance/server/openapi.json``).
"""

from __future__ import annotations

import json
import os
from typing import Any

from pydantic.json_schema import models_json_schema

from governance.server.cstp import PARAMS, RESULTS
from governance.server.hooks import HOOKS
from governance.server.protocol import MAX_BATCH, MESSAGES

SHIPPED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "openapi.json")
REF = "#/components/schemas/{model}"


def _error(description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": {
        "type": "object", "properties": {"error": {"type": "string"}}, "required": ["error"]}}}}


def _schemas() -> dict[str, Any]:
    _, found = models_json_schema([(model, "validation") for model in PARAMS.values()]
                                  + [(model, "serialization") for model in RESULTS.values()],
                                  ref_template=REF)
    schemas: dict[str, Any] = dict(found.get("$defs", {}))
    calls = []
    for method, model in PARAMS.items():
        name = method.split(".", 1)[1][0].upper() + method.split(".", 1)[1][1:] + "Request"
        schemas[name] = {
            "type": "object", "additionalProperties": False,
            "required": ["jsonrpc", "method", "params"],
            "properties": {"jsonrpc": {"const": "2.0"}, "method": {"const": method},
                           "params": {"$ref": REF.format(model=model.__name__)},
                           "id": {"type": ["string", "integer", "null"],
                                  "description": "absent for a notification"}}}
        calls.append({"$ref": REF.format(model=name)})
    schemas["Request"] = {"oneOf": calls}
    schemas["Results"] = {
        "description": "The result of each method that has a model, by method name.",
        "type": "object",
        "properties": {method: {"$ref": REF.format(model=model.__name__)}
                       for method, model in RESULTS.items()}}
    schemas["Response"] = {
        "type": "object", "required": ["jsonrpc", "id"],
        "properties": {
            "jsonrpc": {"const": "2.0"}, "id": {"type": ["string", "integer", "null"]},
            "result": {"type": "object"},
            "error": {"type": "object", "required": ["code", "message"], "properties": {
                "code": {"type": "integer", "enum": sorted(MESSAGES),
                         "description": "; ".join(f"{c} {m}" for c, m in sorted(MESSAGES.items()))},
                "message": {"type": "string"}, "data": {}}}}}
    schemas["HookInput"] = {
        "type": "object", "required": ["session_id", "hook_event_name"],
        "description": "The hook input Claude Code sends (see its hooks reference).",
        "properties": {"session_id": {"type": "string"}, "hook_event_name": {"type": "string"},
                       "cwd": {"type": "string"}, "transcript_path": {"type": "string"},
                       "tool_name": {"type": "string"}, "tool_input": {"type": "object"},
                       "tool_use_id": {"type": "string"}}}
    return schemas


def document() -> dict[str, Any]:
    """The OpenAPI 3.1 document."""
    unauthorized = _error("no valid bearer token (nothing else is said)")
    refused = {"400": _error("a Content-Length that is not a number"),
               "401": unauthorized, "403": _error("the Host header is not a loopback name"),
               "408": _error("the body did not arrive in time"),
               "413": _error("the body is too large")}
    return {
        "openapi": "3.1.0",
        "info": {"title": "claude-governance server", "version": "1",
                 "description": "CSTP (JSON-RPC 2.0) for agents and Claude Code hooks over HTTP. "
                                "Bind address: loopback by default."},
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": _schemas()},
        "security": [{"bearer": []}],
        "paths": {
            "/healthz": {"get": {
                "summary": "Whether the server is up (no token needed, no secrets)",
                "security": [], "responses": {"200": {"description": "up", "content": {
                    "application/json": {"schema": {"type": "object", "required": ["status"],
                                                    "properties": {"status": {"const": "ok"}}}}}},
                    "403": refused["403"]}}},
            "/openapi.json": {"get": {
                "summary": "This document",
                "responses": {"200": {"description": "the document", "content": {
                    "application/json": {"schema": {"type": "object"}}}},
                    "401": unauthorized, "403": refused["403"]}}},
            "/cstp": {"post": {
                "summary": "CSTP: one JSON-RPC 2.0 request, a notification or a batch "
                           f"(at most {MAX_BATCH})",
                "requestBody": {"required": True, "content": {"application/json": {"schema": {
                    "oneOf": [{"$ref": REF.format(model="Request")},
                              {"type": "array", "minItems": 1, "maxItems": MAX_BATCH,
                               "items": {"$ref": REF.format(model="Request")}}]}}}},
                "responses": {
                    "200": {"description": "the response, or the batch's responses",
                            "content": {"application/json": {"schema": {"oneOf": [
                                {"$ref": REF.format(model="Response")},
                                {"type": "array",
                                 "items": {"$ref": REF.format(model="Response")}}]}}}},
                    "204": {"description": "only notifications: nothing to answer"},
                    **refused}}},
            "/hooks/{event}": {"post": {
                "summary": "A Claude Code hook: the answer the command hook gives for the same "
                           "input",
                "parameters": [
                    {"name": "event", "in": "path", "required": True,
                     "schema": {"type": "string", "enum": list(HOOKS)}},
                    {"name": "on_error", "in": "query", "required": False,
                     "description": "block: an internal error denies (fail-closed)",
                     "schema": {"type": "string", "enum": ["block", "allow"]}}],
                "requestBody": {"required": True, "content": {"application/json": {
                    "schema": {"$ref": REF.format(model="HookInput")}}}},
                "responses": {"200": {
                    "description": "the hook output (hookSpecificOutput, systemMessage, ...); "
                                   "an empty body when there is nothing to say",
                    "content": {"application/json": {"schema": {"type": "object"}}}},
                    "404": _error("no hook for that event (the answer names those served)"),
                    **refused}}},
        },
    }


def shipped() -> dict[str, Any]:
    with open(SHIPPED, encoding="utf-8") as fh:
        loaded: dict[str, Any] = json.load(fh)
    return loaded
