"""Self-protection beyond the project's .claude/: the user's and managed settings, our own
installation, MCP tools with path arguments, and case variants."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from governance.policy.layer import GovernanceLayer
from governance.project import default_matrix_path, package_root
from tests.helpers import set_state


@pytest.fixture
def layer(project: Path) -> GovernanceLayer:
    set_state(project, "implementation-cycle/DO")
    return GovernanceLayer(str(project))


def _denied(layer: GovernanceLayer, path: str) -> bool:
    decisions = [layer.decide(tool, {"file_path": path}) for tool in ("Write", "Edit")]
    return all(d.primitive == "governance-admin" and d.action == "block" for d in decisions)


def test_the_users_settings_are_protected(layer: GovernanceLayer) -> None:
    home = Path(os.environ["HOME"])
    for name in ("settings.json", "settings.local.json"):
        assert _denied(layer, str(home / ".claude" / name))
        assert _denied(layer, f"~/.claude/{name}")
    assert not _denied(layer, str(home / "notes.md"))
    assert not _denied(layer, str(home / ".claude" / "projects" / "p" / "session.jsonl"))


@pytest.mark.parametrize("path", [
    "~/.claude.json",                          # the user's MCP servers, allowed tools
    "~/.claude/commands/mine.md",              # allowed-tools in a slash command grant tools
    "~/.claude/agents/reviewer.md", "~/.claude/skills/deploy/SKILL.md",
    "~/.claude/hooks/pre.sh"])
def test_what_claude_code_loads_for_every_project_is_protected(layer: GovernanceLayer,
                                                               path: str) -> None:
    assert _denied(layer, path)


def test_the_interpreters_standard_library_is_protected(layer: GovernanceLayer) -> None:
    import json
    import sysconfig

    assert _denied(layer, json.__file__)              # every hook imports it
    assert _denied(layer, os.path.join(sysconfig.get_paths()["stdlib"], "site.py"))


def test_what_the_interpreter_loads_before_its_library_is_protected(
        layer: GovernanceLayer) -> None:
    """The zipped library first on sys.path (there or not) and the shared library it links."""
    zipped = next(p for p in sys.path if p.endswith(".zip"))
    assert _denied(layer, zipped)
    folder = os.path.dirname(zipped)
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert _denied(layer, os.path.join(folder, f"libpython{version}.so.1.0"))
    assert not _denied(layer, "/tmp/elsewhere/python311.zip")


def test_a_path_holding_a_nul_is_refused(layer: GovernanceLayer, project: Path) -> None:
    assert _denied(layer, str(project / ".claude" / "settings.json") + "\0")
    assert _denied(layer, "src/app.py\0")


def test_managed_settings_are_protected(layer: GovernanceLayer) -> None:
    assert _denied(layer, "/etc/claude-code/managed-settings.json")
    assert _denied(layer, "/Library/Application Support/ClaudeCode/managed-settings.json")
    assert not _denied(layer, "/etc/hosts.d/x")


def test_our_installation_is_protected(layer: GovernanceLayer) -> None:
    root = Path(package_root())
    for path in (root / "governance" / "hook" / "run.py", root / "governance" / "new_module.py",
                 Path(default_matrix_path()), Path(sys.executable),
                 Path(sys.prefix) / "lib" / "site.py"):
        assert _denied(layer, str(path)), path
    if (root / "hooks").is_dir():
        assert _denied(layer, str(root / "hooks" / "pre_tool_use.py"))


@pytest.mark.parametrize("spelling", [
    ".CLAUDE/settings.json", ".Claude/Settings.JSON", ".claude/GOVERNANCE/state.json",
    "src/../.claude/governance/activity_matrix.yaml", "./.claude//settings.local.json",
])
def test_case_variants_and_odd_spellings_are_protected(layer: GovernanceLayer, project: Path,
                                                       spelling: str) -> None:
    assert _denied(layer, str(project / spelling))


def test_a_symlinked_folder_is_followed(layer: GovernanceLayer, project: Path) -> None:
    (project / ".claude" / "governance").mkdir(parents=True, exist_ok=True)
    (project / "g").symlink_to(project / ".claude" / "governance")
    assert _denied(layer, str(project / "g" / "state.json"))


def test_shell_writes_reach_the_same_fence(layer: GovernanceLayer) -> None:
    root = package_root()
    for command in ("echo '{\"disableAllHooks\": true}' > ~/.claude/settings.json",
                    f"cp /tmp/x.py {root}/governance/hook/run.py",
                    "tee /etc/claude-code/managed-settings.json < /tmp/x"):
        acts = layer.acts_for("Bash", {"command": command})[0]
        assert "governance-admin" in {a.primitive for a in acts}, command


def test_mcp_tools_with_path_arguments(layer: GovernanceLayer, project: Path) -> None:
    target = str(project / ".claude" / "settings.json")
    write = layer.decide("mcp__filesystem__write_file", {"path": target, "content": "{}"})
    assert write.primitive == "governance-admin" and write.action == "block"
    move = layer.decide("mcp__fs__move_file", {"source": str(project / ".claude" / "governance"),
                                               "destination": "/tmp/x"})
    assert move.primitive == "governance-admin"
    many = layer.decide("mcp__fs__edit_files", {"paths": ["a.txt", f"file://{target}"]})
    assert many.primitive == "governance-admin"
    # reading a governance file is no change; writing an ordinary file is none of ours
    assert layer.decide("mcp__filesystem__read_file", {"path": target}).primitive == "mcp-read"
    assert layer.decide("mcp__filesystem__write_file",
                        {"path": str(project / "notes.md")}).primitive == "mcp-call"


@pytest.mark.parametrize("tool, arguments", [
    ("mcp__fs__write", {"filePath": "{p}", "content": "{}"}),
    ("mcp__fs__write", {"pathname": "{p}"}),
    ("mcp__fs__write", {"args": {"path": "{p}"}}),
    ("mcp__fs__write_files", {"files": [{"path": "a.txt"}, {"path": ".claude/settings.json"}]}),
    ("mcp__fs__copy", {"to": {"folder": "{d}"}, "from": "x"}),
    ("mcp__desktop_commander__execute_command", {"command": "rm .claude/settings.json"}),
    ("mcp__shell__run", {"cmd": "echo '{}' > {p}"}),
])
def test_mcp_paths_at_any_depth_and_commands_are_checked(layer: GovernanceLayer, project: Path,
                                                         tool: str, arguments: dict) -> None:
    import json

    target, folder = project / ".claude" / "settings.json", project / ".claude" / "governance"
    text = json.dumps(arguments).replace("{p}", str(target)).replace("{d}", str(folder))
    assert layer.decide(tool, json.loads(text)).primitive == "governance-admin"


def test_mcp_content_naming_a_protected_path_is_no_write_of_it(layer: GovernanceLayer,
                                                                project: Path) -> None:
    assert layer.decide("mcp__fs__write", {"filePath": str(project / "notes.md"), "content":
                        "see .claude/settings.json"}).primitive == "mcp-call"
    assert layer.decide("mcp__shell__run", {"cmd": "cat .claude/settings.json"}).primitive \
        == "mcp-call"


def test_mcp_path_keys_are_configurable_per_server(project: Path) -> None:
    from governance.commands.cli import main

    override = project / ".claude" / "governance" / "activity_matrix.yaml"
    override.parent.mkdir(parents=True, exist_ok=True)
    override.write_text("extends: default\nmcp_paths:\n  servers:\n    notes: [location]\n")
    assert main(["validate", "--project", str(project)]) == 0
    layer = GovernanceLayer(str(project))
    target = str(project / ".claude" / "settings.json")
    assert layer.decide("mcp__notes__save", {"location": target}).primitive == "governance-admin"
    assert layer.decide("mcp__notes__save", {"path": target}).primitive == "mcp-call"
    assert layer.decide("mcp__other__save", {"path": target}).primitive == "governance-admin"


def test_doctor_lists_the_fence(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from governance.commands.cli import main

    main(["doctor", "--project", str(project)])
    said = capsys.readouterr().out
    assert "Protected from the agent" in said
    assert os.path.join(os.environ["HOME"], ".claude", "settings.json") in said
    assert os.path.join(package_root(), "governance") in said
