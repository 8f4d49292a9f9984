"""Hooks through MCP (``governance install --mcp-hooks``): the handlers, the server Claude Code
starts from ``.mcp.json``, answers equal to the command hook's on every recorded payload, the tool
hidden from the agent, the seal, doctor and uninstall."""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from governance.install import mcp_entry, settings
from governance.policy.layer import HOOK_TOOL_NAME, GovernanceLayer
from governance.server import mcp_hooks
from tests.helpers import PAYLOAD_DIR, install, recorded, run_command, set_state

PAYLOADS = sorted(p.name for p in PAYLOAD_DIR.glob("*.json"))


def arguments(handler: dict[str, Any], payload: dict[str, Any]) -> dict[str, Any]:
    """What Claude Code passes for ``handler["input"]``, as seen in 2.1.330: a value that is one
    whole ``${field}`` becomes the field's value with its type; a field the input lacks, ``""``."""
    out: dict[str, Any] = {}
    for name, template in handler["input"].items():
        assert template.startswith("${") and template.endswith("}"), template
        out[name] = payload.get(template[2:-1], "")
    return out


def served_by(project: Path, work: Callable[[Any], Awaitable[None]]) -> None:
    """Start the hooks' MCP server as Claude Code would (the ``.mcp.json`` entry), run ``work``
    with a connected client session."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    entry = mcp_entry.load_servers(str(project))["governance-hooks"]
    params = StdioServerParameters(command=entry["command"], args=entry["args"], cwd=str(project),
                                   env={**os.environ, **entry["env"]})

    async def main() -> None:
        with anyio.fail_after(120):
            async with stdio_client(params) as (read, write), \
                    ClientSession(read, write) as session:
                await session.initialize()
                await work(session)

    anyio.run(main)


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def handler_for(project: Path, event: str) -> dict[str, Any]:
    data = json.loads((project / ".claude" / "settings.json").read_text())
    found: dict[str, Any] = data["hooks"][event][0]["hooks"][0]
    return found


def test_handlers_name_every_field_and_the_failure_policy(project: Path) -> None:
    data = install(project, True, "--mcp-hooks")
    pre = handler_for(project, "PreToolUse")
    assert pre["type"] == "mcp_tool" and pre["server"] == "governance-hooks"
    assert pre["tool"] == "decide_tool_call" and pre["onFailure"] == "block"
    assert pre["input"]["event"] == "${hook_event_name}" and pre["input"]["on_error"] == "block"
    assert {k for k in pre["input"] if k not in ("event", "on_error")} == set(settings.MCP_FIELDS)
    post = handler_for(project, "PostToolUse")
    assert "onFailure" not in post and "on_error" not in post["input"]
    assert data["hooks"]["SessionStart"][0]["hooks"][0]["type"] == "command"
    assert handler_for(project, "UserPromptSubmit")["type"] == "mcp_tool"
    assert data["permissions"]["deny"] == [HOOK_TOOL_NAME]
    entry = mcp_entry.load_servers(str(project))["governance-hooks"]
    assert entry["args"] == ["-I", os.path.join(settings.hook_scripts_dir(), "launch.py"),
                             "governance.server.mcp_hooks", "--project", os.path.realpath(project)]
    local = json.loads((project / ".claude" / "settings.local.json").read_text())
    assert local["enabledMcpjsonServers"] == ["governance-hooks"]


def test_every_field_of_the_recorded_events_is_passed() -> None:
    for name in PAYLOADS:
        payload = json.loads((PAYLOAD_DIR / name).read_text())
        if payload.get("hook_event_name") in settings.MCP_EVENTS:
            missing = set(payload) - set(settings.MCP_FIELDS) - {"hook_event_name"}
            assert not missing, (name, missing)


def test_the_hook_input_leaves_out_what_claude_code_left_empty() -> None:
    body = json.loads(mcp_hooks.hook_input("PreToolUse", {
        "tool_name": "Bash", "tool_input": {"command": "ls"}, "agent_id": "", "prompt": "",
        "duration_ms": 12, "unknown": "x"}))
    assert body == {"hook_event_name": "PreToolUse", "tool_name": "Bash",
                    "tool_input": {"command": "ls"}, "duration_ms": 12}


@pytest.mark.parametrize("state", ["implementation-cycle/DO/WORK-064", None])
def test_answers_through_mcp_equal_the_command_hooks(tmp_path: Path, state: str | None) -> None:
    """Every recorded payload of the events the MCP server serves, into two identical projects:
    one through the command hook the installer writes, one through the MCP server started from
    the installer's .mcp.json entry with the arguments Claude Code fills in. Byte for byte."""
    here, there = tmp_path / "a" / "shop-api", tmp_path / "b" / "shop-api"
    for project, extra in ((here, ()), (there, ("--mcp-hooks",))):
        (project / ".claude").mkdir(parents=True)
        install(project, False, *extra)
        if state:
            set_state(project, state)
    commands = settings.our_commands(settings.load(settings.settings_path(str(here))))
    compared: list[str] = []

    async def work(session: Any) -> None:
        for name in PAYLOADS:
            event = name.split("-", 1)[0].removesuffix(".json")
            if event not in settings.MCP_EVENTS:
                continue
            mine = run_command(commands[event][0], json.dumps(recorded(name, here)))
            args = arguments(handler_for(there, event), recorded(name, there))
            result = await session.call_tool("decide_tool_call", args)
            assert not result.is_error, (name, text_of(result))
            assert text_of(result).replace(str(there), "P") == \
                mine.stdout.decode().replace(str(here), "P"), name
            compared.append(event)

    served_by(there, work)
    assert set(compared) == set(settings.MCP_EVENTS)
    assert compared.count("PreToolUse") == sum(1 for n in PAYLOADS if n.startswith("PreToolUse"))


def test_a_deny_reaches_the_answer_and_the_ledger_and_a_terminal_change_the_next_call(project: Path) -> None:
    install(project, False, "--mcp-hooks")
    set_state(project, "implementation-cycle/DO/WORK-064")
    payload = recorded("PreToolUse-WebFetch.json", project)
    said: dict[str, Any] = {}

    async def work(session: Any) -> None:
        args = arguments(handler_for(project, "PreToolUse"), payload)
        said["deny"] = json.loads(text_of(await session.call_tool("decide_tool_call", args)))
        said["unknown"] = await session.call_tool("decide_tool_call", {"event": "Stop"})
        said["on_error"] = await session.call_tool("decide_tool_call",
                                                   {**args, "on_error": "maybe"})
        broken = {**args, "tool_input": "not an object", "on_error": "block"}
        said["closed"] = json.loads(text_of(await session.call_tool("decide_tool_call", broken)))
        set_state(project, "implementation-cycle/EXPLORE/WORK-064")   # from a terminal
        said["after"] = json.loads(text_of(await session.call_tool("decide_tool_call", args)))

    served_by(project, work)
    answer = said["deny"]["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny"
    assert answer["permissionDecisionReason"].startswith("[STATE: DO] WebFetch (web-fetch)")
    assert said["unknown"].is_error and "SessionStart stays a command hook" in text_of(
        said["unknown"])
    assert said["on_error"].is_error and "allow or block" in text_of(said["on_error"])
    assert said["closed"]["hookSpecificOutput"]["permissionDecision"] == "deny"
    after = said["after"]["hookSpecificOutput"]   # the next call sees it: no restart, no stale cache
    assert "permissionDecision" not in after and "[STATE: EXPLORE]" in after["additionalContext"]
    records = [json.loads(line) for line in
               (project / ".claude" / "governance" / "ledger.jsonl").read_text().splitlines()]
    assert any(r.get("event") == "PreToolUse" and r.get("decision") == "deny"
               and r.get("tool_use_id") == payload["tool_use_id"] for r in records)


def test_the_agent_calling_the_hooks_tool_itself_is_governance_admin(project: Path) -> None:
    install(project)
    for state in ("implementation-cycle/DO/WORK-064", "implementation-cycle/EXPLORE/WORK-064"):
        set_state(project, state)
        decision = GovernanceLayer(str(project)).decide(HOOK_TOOL_NAME, {"event": "PreToolUse"})
        assert decision.action == "block" and decision.primitive == "governance-admin"


def test_the_seal_puts_back_the_handler_and_the_hidden_tool(project: Path) -> None:
    from governance.hook import owned
    from governance.policy import seal

    install(project, False, "--mcp-hooks")
    path = project / ".claude" / "settings.json"
    data = json.loads(path.read_text())
    del data["hooks"]["PreToolUse"]
    data["permissions"]["deny"] = []
    path.write_text(json.dumps(data))
    entry = (seal.read(str(project)) or {})["settings"]
    found = " ".join(what for _, what in owned.check(str(project), entry))
    assert "PreToolUse" in found and HOOK_TOOL_NAME in found
    owned.repair(entry)
    repaired = json.loads(path.read_text())
    assert repaired["hooks"]["PreToolUse"][0]["hooks"][0]["type"] == "mcp_tool"
    assert repaired["permissions"]["deny"] == [HOOK_TOOL_NAME]
    assert not owned.check(str(project), entry)


def test_switching_transports_and_uninstall_leave_nothing_behind(project: Path) -> None:
    from governance.commands.cli import main

    (project / ".claude" / "settings.json").write_text(json.dumps(
        {"permissions": {"deny": ["Bash(rm:*)"]}}))
    install(project, False, "--mcp-hooks")
    data = install(project)
    assert data["permissions"] == {"deny": ["Bash(rm:*)"]}
    assert all(h["type"] == "command" for g in data["hooks"].values() for x in g
               for h in x["hooks"])
    assert "governance-hooks" not in mcp_entry.load_servers(str(project))
    assert not (project / ".claude" / "settings.local.json").exists() or "enabledMcpjsonServers" \
        not in json.loads((project / ".claude" / "settings.local.json").read_text())
    with pytest.raises(Exception, match="choose one"):
        install(project, False, "--mcp-hooks", "--http")
    install(project, False, "--mcp", "--mcp-hooks")
    assert set(mcp_entry.load_servers(str(project))) == {"governance", "governance-hooks"}
    assert main(["uninstall", "--project", str(project)]) == 0
    data = json.loads((project / ".claude" / "settings.json").read_text())
    assert not settings.our_commands(data) and data["permissions"] == {"deny": ["Bash(rm:*)"]}
    assert not (project / ".mcp.json").exists()
    assert not (project / ".claude" / "settings.local.json").exists()


def test_doctor_calls_the_server_the_way_claude_code_starts_it(
        project: Path, capsys: Any) -> None:
    from governance.commands.cli import main

    install(project, False, "--mcp-hooks")
    capsys.readouterr()
    assert main(["doctor", "--project", str(project)]) == 0
    said = capsys.readouterr().out
    assert "PreToolUse hook registered (mcp_tool): governance-hooks/decide_tool_call" in said
    assert "live PreToolUse call through MCP answered: [STATE: EXPLORE]" in said
    path = project / ".mcp.json"
    entry = json.loads(path.read_text())
    entry["mcpServers"]["governance-hooks"]["args"][2] = "governance.server.nothing_here"
    path.write_text(json.dumps(entry))
    assert main(["doctor", "--project", str(project)]) == 1
    assert "did not answer a PreToolUse call" in capsys.readouterr().out
