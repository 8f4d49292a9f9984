"""GovernanceLayer: mapping tool calls to primitives and deciding them, with the rule named."""

from __future__ import annotations

from pathlib import Path

import pytest

from governance.policy.layer import GovernanceLayer
from tests.helpers import set_state

# Canonical tool names of Claude Code 2.1.330 (reference, section 8).
BUILTIN_TOOLS = [
    "Agent", "Artifact", "AskUserQuestion", "Bash", "ClaudeDesign", "CronCreate", "CronDelete",
    "CronList", "Edit", "EndConversation", "EnterPlanMode", "EnterWorktree", "ExitPlanMode",
    "ExitWorktree", "Glob", "Grep", "ListAgents", "ListMcpResourcesTool", "LSP", "Monitor",
    "NotebookEdit", "OfferChromeSetup", "PowerShell", "Projects", "propose_skills",
    "PushNotification", "Read", "ReadMcpResourceDirTool", "ReadMcpResourceTool",
    "ReadNotifications", "RemoteTrigger", "ReportFindings", "ScheduleWakeup", "SendFeedback",
    "SendMessage", "SendUserFile", "SendUserMessage", "SetGoal", "ShareOnboardingGuide",
    "ShowOnboardingRolePicker", "Skill", "SubagentHandback", "TaskCreate", "TaskGet", "TaskList",
    "TaskStop", "TaskUpdate", "TodoWrite", "ToolSearch", "WaitForMcpServers", "WebFetch",
    "WebSearch", "Workflow", "Write",
]


@pytest.fixture
def layer(project: Path) -> GovernanceLayer:
    return GovernanceLayer(str(project))


@pytest.mark.parametrize("tool", BUILTIN_TOOLS)
def test_every_builtin_tool_has_a_primitive_with_rules(layer: GovernanceLayer, tool: str) -> None:
    primitive, key = layer.tool_primitive(tool)
    assert primitive != "unknown" and key == f"tools.{tool}"
    for state in layer.matrix["states"]:
        assert primitive in layer.matrix["decide"][state], (tool, primitive, state)


@pytest.mark.parametrize("tool, primitive", [
    ("Task", "task-spawn"), ("Read", "file-read"), ("Write", "file-write"), ("Edit", "file-edit"),
    ("WebFetch", "web-fetch"), ("AskUserQuestion", "user-query"),
    ("mcp__memory__search_nodes", "memory-search"), ("mcp__memory__create_entities", "memory-store"),
    ("mcp__github__get_issue", "mcp-read"), ("mcp__github__create_issue", "mcp-call"),
    ("mcp__plugin_x_srv__list_things", "mcp-read"), ("SomethingNew", "unknown"),
])
def test_mapping(layer: GovernanceLayer, tool: str, primitive: str) -> None:
    assert layer.map_tool_to_primitive(tool, {}) == primitive


def test_unknown_tool_gets_default_action(layer: GovernanceLayer) -> None:
    decision = layer.decide("SomethingNew", {})
    assert (decision.primitive, decision.action, decision.rule_key) == (
        "unknown", "warn", "default_action")


def test_bash_background(layer: GovernanceLayer) -> None:
    assert layer.map_tool_to_primitive("Bash", {"command": "sleep 1"}) in (
        "shell-execute", "shell-read")
    assert layer.map_tool_to_primitive(
        "Bash", {"command": "npm run dev", "run_in_background": True}) == "shell-background"


def test_do_blocks_the_seed_primitives(project: Path) -> None:
    set_state(project, "implementation-cycle/DO/WORK-064")
    layer = GovernanceLayer(str(project))
    assert layer.get_activity_state().state == "DO"
    assert layer.blocked_primitives("DO") == sorted(layer.blocked_primitives("DO"))
    for prim in ("memory-search", "memory-store", "user-query", "web-fetch", "web-search"):
        decision = layer.check_activity(prim, "DO")
        assert decision.action == "block" and decision.rule_key == f"rules.{prim}.DO"
        assert decision.message
    assert layer.check_activity("file-read", "DO").action == "allow"
    assert layer.check_activity("file-write", "EXPLORE").action == "warn"


@pytest.mark.parametrize("relative", [
    ".claude/settings.json", ".claude/settings.local.json", ".claude/governance/state.json",
    ".claude/governance/activity_matrix.yaml", "sub/../.claude/settings.json",
])
def test_protected_files_are_governance_admin(layer: GovernanceLayer, project: Path,
                                              relative: str) -> None:
    for tool, key in (("Write", "file_path"), ("Edit", "file_path"),
                      ("NotebookEdit", "notebook_path")):
        decision = layer.decide(tool, {key: str(project / relative)})
        assert decision.primitive == "governance-admin" and decision.action == "block", tool


def test_a_process_folder_link_is_read_as_the_agents(layer: GovernanceLayer, project: Path,
                                                      tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # the agent's /proc/self/cwd is its working folder; the hook's own is somewhere else
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    for path in ("/proc/self/cwd/.claude/settings.json", "/proc/thread-self/cwd/.claude/settings.json",
                 f"/proc/1/root{project}/.claude/settings.json",
                 "/proc/77/task/78/cwd/sub/../.claude/settings.local.json"):
        decision = layer.decide("Write", {"file_path": path, "content": "{}"})
        assert decision.primitive == "governance-admin", path
    assert layer.decide("Write", {"file_path": "/proc/self/cwd/notes.md"}).primitive == "file-write"


def test_relative_and_ordinary_paths(layer: GovernanceLayer, project: Path) -> None:
    assert layer.is_protected(".claude/settings.json", str(project))
    assert not layer.is_protected(str(project / "src" / "settings.json"))
    assert layer.is_protected(str(project / ".claude" / "commands" / "x.md"))  # allowed-tools
    assert not layer.is_protected(str(project / ".claude" / "notes" / "x.md"))
    assert layer.decide("Write", {"file_path": str(project / "notes.md")}).primitive == "file-write"


def test_skill_restrictions(project: Path) -> None:
    set_state(project, "implementation-cycle/DO")
    layer = GovernanceLayer(str(project))
    blocked = layer.decide("Skill", {"skill": "new-feature"})
    assert blocked.action == "block" and blocked.rule_key == "skill_restrictions.DO"
    assert "new-feature" in blocked.message
    assert layer.decide("Skill", {"skill": "implement"}).action == "allow"


def test_check_activity_uses_current_state_by_default(project: Path) -> None:
    set_state(project, "implementation-cycle/DO")
    layer = GovernanceLayer(str(project))
    assert layer.check_activity("web-fetch").action == "block"
    assert layer.check_activity("web-fetch", "EXPLORE").action == "allow"


@pytest.mark.parametrize("command, primitive", [
    ("$CMD && rm -rf src", "destructive"),            # shell-unknown first, destructive second
    ("rm -rf src; $CMD", "destructive"),
    ("$TOOL install; rm -rf src", "destructive"),
])
def test_a_named_act_is_reported_over_shell_unknown(project: Path, command: str,
                                                    primitive: str) -> None:
    set_state(project, "implementation-cycle/DO")
    layer = GovernanceLayer(str(project))
    decision = layer.decide("Bash", {"command": command}, str(project))
    found = {a["primitive"] for a in decision.acts if a["action"] == decision.action}
    assert "shell-unknown" in found and primitive in found
    assert decision.primitive == primitive
    assert layer.map_tool_to_primitive("Bash", {"command": command}, str(project)) == primitive


def test_shell_unknown_is_reported_when_it_alone_decides(project: Path) -> None:
    set_state(project, "implementation-cycle/DO")
    layer = GovernanceLayer(str(project))
    decision = layer.decide("Bash", {"command": "$CMD; ls"}, str(project))
    assert decision.primitive == "shell-unknown" and decision.action == "ask"
