"""The OpenAPI description of the server's HTTP surface, built from the CSTP params models.

Served at ``/openapi.json`` and shipped as ``openapi.json`` beside this module (a test keeps the
two equal; regenerate with ``governance serve --openapi > governance/server/openapi.json``).
"""

from __future__ import annotations

import json
import os
from typing import Any

from pydantic.json_schema import models_json_schema

from governance.server.hooks import HOOKS
from governance.server.messages import PARAMS, RESULTS
from governance.server.protocol import MAX_BATCH, MESSAGES

SHIPPED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "openapi.json")
REF = "#/components/schemas/{model}"
_PROJECT = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$"   # a project id (governance.storage.database)


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
            "jsonrpc": {"const": "2.0"},
            "id": {"type": ["string", "number", "null"],
                   "description": "the request's id as it was sent (JSON-RPC 2.0 allows any "
                                  "number; send an integer)"},
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


def _json(description: str, schema: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}},
            **extra}


def _fixed(description: str, **properties: Any) -> dict[str, Any]:
    """An error answer that may carry more than its sentence (a fix, the versions, the seq)."""
    return _json(description, {"type": "object", "required": ["error"],
                               "properties": {"error": {"type": "string"},
                                              "fix": {"type": ["string", "null"]}, **properties}})


def _bundle_schemas() -> dict[str, Any]:
    """The organisation's signed bundle (governance/organisation/bundle.py) and what a publish
    answers."""
    from governance.organisation.bundle import MAX_VERSION

    base64 = r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"
    return {
        "Bundle": {
            "type": "object", "additionalProperties": False,
            "required": ["format", "version", "issued", "files", "signature"],
            "description": "The organisation layer, signed with its Ed25519 key over the "
                           "canonical JSON of every field but signature (docs/organisation.md).",
            "properties": {
                "format": {"const": 1},
                "version": {"type": "integer", "minimum": 1, "maximum": MAX_VERSION},
                "issued": {"type": "string", "minLength": 1, "maxLength": 64},
                "files": {"type": "object", "additionalProperties": {
                    "type": "string", "pattern": base64}, "propertyNames": {
                    "pattern": r"^(?:activity_matrix\.yaml|guardrails\.yaml"
                               r"|sops/[A-Za-z0-9][A-Za-z0-9_.-]{0,99}\.ai\.sop)$"}},
                "signature": {"type": "string", "pattern": r"^[A-Za-z0-9+/]{86}==$"}}},
        "BundlePublished": {
            "type": "object", "required": ["outcome", "version", "issued", "etag"],
            "properties": {"outcome": {"enum": ["published", "already published"]},
                           "version": {"type": "integer"}, "issued": {"type": "string"},
                           "etag": {"type": "string"}}},
        "LedgerShip": {
            "type": "object", "required": ["project", "records"],
            "properties": {"project": {"type": "string", "pattern": _PROJECT},
                           "records": {"type": "array", "items": {"type": "string"},
                                       "description": "the ledger's JSONL lines, in seq order, "
                                                      "from the one after the central head"}}},
        "LedgerHead": {
            "type": "object", "required": ["project", "seq", "hash"],
            "properties": {"project": {"type": "string"}, "seq": {"type": "integer"},
                           "hash": {"type": ["string", "null"]}}},
    }


def _more_paths(refused: dict[str, Any], unauthorized: dict[str, Any]) -> dict[str, Any]:
    """/readyz, /report, /ledger/head, /ledger/ship and /org/bundle."""
    from governance.server.report_page import FILTERS

    host = refused["403"]
    admin = _error("the Host header is not a loopback name, or the token's role is not admin "
                   "(or it acts in another project)")
    ready = {"type": "object", "required": ["status", "engine"], "properties": {
        "status": {"enum": ["ready", "not ready"]}, "engine": {"enum": ["sqlite", "postgresql"]},
        "reason": {"type": "string"}, "fix": {"type": "string"}, "version": {"type": "integer"}}}
    bundle = {"$ref": REF.format(model="Bundle")}
    store_down = _fixed("the bundle store (the database, or the served project's folder) cannot "
                        "be used now; errors.log says why")
    return {
        "/readyz": {"get": {
            "summary": "Whether CSTP calls can be answered now (no token needed)",
            "security": [], "responses": {
                "200": _json("ready", ready), "503": _json("not ready, and why", ready),
                "403": host}}},
        "/report": {"get": {
            "summary": "The report page `governance report` writes, with its filters "
                       "(`project`: the served project, a shipped project's id, or `*` for "
                       "every shipped project; a token scoped to one project sees only it)",
            "parameters": [{"name": name, "in": "query", "required": False,
                            "schema": {"type": "string"}} for name in FILTERS],
            "responses": {
                "200": {"description": "the page", "content": {"text/html": {"schema": {
                    "type": "string"}}}},
                "400": _error("a filter that does not parse (the answer says which)"),
                "404": _error("project names no project this server reports"),
                "401": unauthorized,
                "403": _error("not an admin token, or a token scoped to another project")}}},
        "/ledger/head": {"get": {
            "summary": "Where the central copy of a project's ledger ends",
            "parameters": [{"name": "project", "in": "query", "required": True,
                            "schema": {"type": "string", "pattern": _PROJECT}}],
            "responses": {
                "200": _json("the last stored seq and hash (0 and null: none yet)",
                             {"$ref": REF.format(model="LedgerHead")}),
                "400": _error("the project is not a project id"),
                "401": unauthorized, "403": admin}}},
        "/ledger/ship": {"post": {
            "summary": "Store a batch of a project's ledger records in the central copy",
            "requestBody": {"required": True, "content": {"application/json": {
                "schema": {"$ref": REF.format(model="LedgerShip")}}}},
            "responses": {
                "200": _json("stored (all of the batch, or none)", {
                    "type": "object", "required": ["project", "stored", "skipped", "head"],
                    "properties": {"project": {"type": "string"},
                                   "stored": {"type": "integer"}, "skipped": {"type": "integer"},
                                   "head": {"type": "object"}}}),
                "409": _fixed("a gap, a fork or a rewritten record: nothing of the batch is "
                              "stored", seq={"type": "integer"}),
                "400": _error("not a batch of ledger lines, or not a project id"),
                "401": unauthorized, "403": admin, "408": refused["408"],
                "413": refused["413"]}}},
        "/org/bundle": {
            "get": {
                "summary": "The organisation's signed bundle, exactly the bytes published "
                           "(no token needed: it is signed, not secret; `governance org pull`)",
                "security": [],
                "parameters": [{"name": "If-None-Match", "in": "header", "required": False,
                                "schema": {"type": "string"}}],
                "responses": {
                    "200": _json("the bundle", bundle, headers={
                        "ETag": {"description": "the SHA-256 of the bytes, quoted",
                                 "required": True, "schema": {"type": "string"}},
                        "X-Governance-Bundle-Version": {
                            "description": "the bundle's version", "required": True,
                            "schema": {"type": "string", "pattern": "^[0-9]+$"}}}),
                    "304": {"description": "If-None-Match named the published bundle's ETag"},
                    "404": _fixed("no bundle is published yet"),
                    "403": host, "503": store_down}},
            "put": {
                "summary": "Publish a signed bundle (admin): its version above the published "
                           "one; its signature checked when the served project holds the "
                           "organisation's public key (.claude/governance/org-key.pub)",
                "requestBody": {"required": True, "content": {"application/json": {
                    "schema": bundle}}},
                "responses": {
                    "200": _json("published, or already published (the same version and "
                                 "signed content)", {"$ref": REF.format(model="BundlePublished")}),
                    "400": _fixed("not a signed bundle of format 1 (the answer says why)"),
                    "409": _fixed("its version is not above the published one", version={
                        "type": "integer"}, published={"type": "integer"}),
                    "422": _fixed("its signature does not verify against the organisation's key"),
                    "401": unauthorized, "403": admin, "408": refused["408"],
                    "413": refused["413"], "503": store_down}}},
    }


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
            "schemas": {**_schemas(), **_bundle_schemas()}},
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
                "parameters": [{
                    "name": "X-Governance-Project", "in": "header", "required": False,
                    "description": "the project the body's calls act in, on a server with a "
                                   "team database (as each method's `project` param); a "
                                   "token scoped to another project is refused (-32003)",
                    "schema": {"type": "string", "pattern": _PROJECT}}],
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
            **_more_paths(refused, unauthorized),
        },
    }


def shipped() -> dict[str, Any]:
    with open(SHIPPED, encoding="utf-8") as fh:
        loaded: dict[str, Any] = json.load(fh)
    return loaded
