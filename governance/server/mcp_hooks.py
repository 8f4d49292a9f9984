"""Claude Code hooks through MCP: a stdio MCP server Claude Code keeps running for the session,
whose one tool answers ``type: "mcp_tool"`` hooks (``governance install --mcp-hooks``).

Run as ``python -m governance.server.mcp_hooks --project DIR`` (the installer writes that command
into the project's ``.mcp.json`` as the server ``governance-hooks``). No daemon to manage: Claude
Code starts the server with the session, waits for it before the first hook (up to 30 s), and
stops it at the end.

Claude Code does not pass a hook's input to an ``mcp_tool`` hook: the handler's ``input`` names
the arguments, each a ``${field}`` of the hook input (``settings.mcp_tool_handler`` writes one per
field). A field the event does not have arrives as ``""``. The tool puts the fields back into a
hook input, runs the command hook's own entry function on it (``governance.server.hooks``, as the
HTTP server does) and answers exactly what the command hook prints; Claude Code reads that text as
the hook's JSON output. One decision path, three transports.

The agent never sees the tool: the installer adds it to ``permissions.deny`` (which hides an MCP
tool from the model and leaves hooks free to call it), and a call the agent makes anyway is
``governance-admin`` (``governance.policy.layer.HOOK_TOOL_NAME``).
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Sequence
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from governance.install.settings import MCP_EVENTS, MCP_FIELDS
from governance.policy.layer import HOOK_SERVER, HOOK_TOOL
from governance.project import find_project
from governance.server.hooks import hook_answer

server = MCPServer(
    HOOK_SERVER,
    instructions="Governance hooks for Claude Code. Claude Code calls this server's tool itself, "
                 "around tool calls; it is not for the agent.")


def hook_input(event: str, fields: dict[str, Any]) -> bytes:
    """The hook input Claude Code would have piped to the command hook: the event and every field
    it filled in (an absent field arrives as ``""`` and is left out)."""
    payload: dict[str, Any] = {"hook_event_name": event}
    payload.update((name, value) for name, value in fields.items()
                   if name in MCP_FIELDS and value != "" and value is not None)
    return json.dumps(payload).encode("utf-8")


@server.tool(name=HOOK_TOOL, description=(
    "Claude Code's hook for governance: the decision on one hook event. Called by Claude Code's "
    "mcp_tool hooks, never by the agent."))
async def decide_tool_call(event: str, on_error: str = "", session_id: Any = "",
                     transcript_path: Any = "", cwd: Any = "", permission_mode: Any = "",
                     prompt_id: Any = "", effort: Any = "", agent_id: Any = "",
                     agent_type: Any = "", tool_name: Any = "", tool_input: Any = "",
                     tool_use_id: Any = "", tool_response: Any = "", duration_ms: Any = "",
                     error: Any = "", is_interrupt: Any = "", prompt: Any = "",
                     mcp_server: Any = "") -> str:
    if event not in MCP_EVENTS:
        raise ToolError(f"{event!r} is not an event governance answers over MCP; it answers "
                        f"{', '.join(MCP_EVENTS)} (SessionStart stays a command hook).")
    if on_error not in ("", "allow", "block"):
        raise ToolError(f"on_error must be allow or block, not {on_error!r}.")
    fields = {name: value for name, value in locals().items() if name in MCP_FIELDS}
    # on the event loop, not a worker thread: the decision takes well under a millisecond, and
    # handing it to a thread cost more in waits for the interpreter lock
    return hook_answer(event, hook_input(event, fields), on_error).decode("utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="governance-hooks-mcp", description=__doc__)
    parser.add_argument("--project", help="project folder")
    args = parser.parse_args(argv)
    project = args.project or os.environ.get("CLAUDE_PROJECT_DIR") or find_project(os.getcwd())
    os.environ["CLAUDE_PROJECT_DIR"] = os.path.realpath(project)  # what command hooks are given
    server.run("stdio")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
