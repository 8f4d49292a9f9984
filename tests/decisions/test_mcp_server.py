"""The MCP server over stdio, driven by the SDK's own client: every tool is called."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parents[2]


def _payload(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        data = result.structured_content
        return data.get("result", data) if set(data) == {"result"} else data
    return json.loads(result.content[0].text)


async def _session(project: Path, home: Path) -> dict[str, Any]:
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(ROOT),
           "GOVERNANCE_AGENT_ID": "mcp-agent"}
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "governance.decisions.mcp_server", "--project", str(project)],
                                   env=env, cwd=str(project))
    seen: dict[str, Any] = {}
    async with Client(params) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        seen["tools"] = tools
        action = {"description": "Adopt expand-contract migration for the orders table",
                  "category": "architecture", "stakes": "medium", "confidence": 0.7,
                  "reasons": [{"type": "precedent", "text": "users table went well"}],
                  "tags": ["database", "migration"], "pattern": "expand-contract migration"}
        seen["recorded"] = _payload(await client.call_tool("record_decision", action))
        seen["reviewed"] = _payload(await client.call_tool(
            "review_decision", {"decision_id": seen["recorded"]["id"], "outcome": "success",
                                "note": "no downtime"}))
        seen["pre"] = _payload(await client.call_tool("pre_action", {
            **action, "description": "Use expand-contract migration for the invoices table"}))
        seen["blocked"] = _payload(await client.call_tool("pre_action", {
            **action, "stakes": "critical", "confidence": 0.2}))
        seen["guard"] = _payload(await client.call_tool("check_guardrails", {
            "category": "process", "stakes": "low", "confidence": 0.9,
            "context": {"environment": "production", "review_completed": True}}))
        seen["query"] = _payload(await client.call_tool("query_decisions",
                                                        {"text": "migration invoices"}))
        seen["calibration"] = _payload(await client.call_tool("get_calibration", {}))
        seen["bad"] = await client.call_tool("pre_action", {**action, "confidence": 1.5})
        seen["bad_review"] = await client.call_tool("review_decision",
                                                    {"decision_id": "dec-00000000",
                                                     "outcome": "success"})
    return seen


def test_every_tool_over_stdio(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    seen = asyncio.run(_session(project, tmp_path / "home"))

    assert set(seen["tools"]) >= {"pre_action", "check_guardrails", "record_decision",
                                  "review_decision", "query_decisions", "get_calibration"}
    schema = seen["tools"]["pre_action"].input_schema
    assert seen["tools"]["pre_action"].description.startswith(
        "Check if an action is safe and informed before executing.")
    assert "BEFORE making any significant choice" in seen["tools"]["pre_action"].description
    flat = json.dumps(schema)
    for word in ("architecture", "security", "critical", "auto_record", "pattern", "reasons"):
        assert word in flat

    assert seen["recorded"]["id"].startswith("dec-")
    assert seen["recorded"]["agent_id"] == "mcp-agent"
    assert seen["reviewed"]["outcome"] == "success"

    pre = seen["pre"]
    assert pre["allowed"] is True
    assert pre["decision_id"].startswith("dec-")
    assert pre["relevant_decisions"][0]["id"] == seen["recorded"]["id"]
    assert pre["relevant_decisions"][0]["outcome"] == "success"
    assert 0 < pre["relevant_decisions"][0]["similarity"] <= 1
    assert pre["patterns_summary"][0] == "expand-contract migration (1 confirmation)"
    assert pre["patterns"][0] == {"pattern": "expand-contract migration",
                                  "decisions": 1, "confirmed": 1, "failed": 0}
    assert pre["calibration_context"]["sample_size"] == 1

    blocked = seen["blocked"]
    assert blocked["allowed"] is False and blocked["decision_id"] is None
    assert any("confidence below 0.5" in reason["message"] for reason in blocked["block_reasons"])

    guard = seen["guard"]
    assert guard["allowed"] is True and guard["warnings"][0]["guardrailId"] == \
        "prefer-staged-rollout"

    assert seen["query"]["count"] == 2  # the recorded one and the one pre_action recorded
    assert seen["calibration"]["overall"]["sample_size"] == 1
    assert seen["calibration"]["overall"]["brier"] == pytest.approx(0.09)

    assert seen["bad"].is_error and "confidence" in seen["bad"].content[0].text
    assert seen["bad_review"].is_error and "dec-00000000" in seen["bad_review"].content[0].text
