"""The commands a message names are the ones that exist in the project: ``governance state ...``
always, the project's own ``just`` recipes only when its justfile runs ``governance state`` under
those names, ``/cycle`` only where it is installed, ``select_active_intent`` only with our MCP
server registered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from governance.policy import remedy
from tests.helpers import REPO

OURS = """\
gov := ".venv/bin/governance"
project := invocation_directory()

# set the cycle state
set-cycle cycle phase work="":
    {{gov}} state set --project {{project}} {{cycle}} {{phase}} {{work}}

# move to the next phase
next:
    {{gov}} state next --project {{project}}
"""
PLAIN = """\
set-cycle cycle phase work="":
    governance state set {{cycle}} {{phase}} {{work}}

@next:
    uv run governance state next
"""
OTHER_NEXT = """\
build:
    cargo build

# the next release
next: build
    ./scripts/bump-version.sh
    git tag next

set-cycle:
    echo "no governance here"
"""


def test_no_justfile_names_only_the_cli(project: Path) -> None:
    text = remedy.state_change(str(project))
    assert text == ("`governance state set CYCLE PHASE WORK-ID` or `governance state next` "
                    "from a terminal")
    assert remedy.just_recipes(str(project)) == []
    assert remedy.state_set(str(project)) == "`governance state set CYCLE PHASE WORK-ID`"


@pytest.mark.parametrize("name", ["justfile", "Justfile", ".justfile", "JUSTFILE"])
@pytest.mark.parametrize("text", [OURS, PLAIN])
def test_a_justfile_with_our_recipes_is_named_too(project: Path, name: str, text: str) -> None:
    (project / name).write_text(text)
    assert remedy.just_recipes(str(project)) == ["`just set-cycle CYCLE PHASE WORK-ID`",
                                                 "`just next`"]
    said = remedy.state_change(str(project))
    assert said.startswith("`governance state set CYCLE PHASE WORK-ID` or `governance state next`")
    assert said.endswith("or this project's `just set-cycle CYCLE PHASE WORK-ID` or `just next`")
    assert remedy.state_set(str(project)) == ("`governance state set CYCLE PHASE WORK-ID` "
                                              "(or `just set-cycle CYCLE PHASE WORK-ID`)")


def test_this_repositorys_justfile_qualifies(tmp_path: Path) -> None:
    (tmp_path / "justfile").write_text((REPO / "justfile").read_text())
    assert remedy.just_recipes(str(tmp_path)) == ["`just set-cycle CYCLE PHASE WORK-ID`",
                                                  "`just next`"]


def test_recipes_of_the_same_name_that_do_something_else_are_not_named(project: Path) -> None:
    (project / "justfile").write_text(OTHER_NEXT)
    assert remedy.just_recipes(str(project)) == []
    assert "just" not in remedy.state_change(str(project))


def test_only_the_recipes_that_exist_are_named(project: Path) -> None:
    (project / "justfile").write_text("next:\n    governance state next\n\nbuild:\n    make\n")
    assert remedy.just_recipes(str(project)) == ["`just next`"]
    assert remedy.state_set(str(project)) == "`governance state set CYCLE PHASE WORK-ID`"


def test_a_one_parameter_set_cycle_takes_the_slash_form(project: Path) -> None:
    (project / "justfile").write_text("set-cycle spec:\n    governance state set {{spec}}\n"
                                      "set-cycle-all := 'x'\n")
    assert remedy.just_recipes(str(project)) == ["`just set-cycle CYCLE/PHASE/WORK-ID`"]


def test_assignments_aliases_and_settings_are_not_recipes(project: Path) -> None:
    (project / "justfile").write_text(
        'set shell := ["bash", "-c"]\nalias next := build\nnext := "governance state next"\n'
        "build:\n    make\n")
    assert remedy.just_recipes(str(project)) == []


def test_cycle_slash_command_is_named_where_it_is_installed(project: Path) -> None:
    from tests.helpers import install

    install(project)
    assert "/cycle" not in remedy.state_change(str(project))
    install(project, False, "--slash-commands")
    assert remedy.state_change(str(project)).endswith(
        ", or /cycle CYCLE/PHASE/WORK-ID in Claude Code")


def test_cycle_of_the_plugin(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLAUDE_PLUGIN_ROOT", str(REPO))  # the plugin ships commands/cycle.md
    assert "/cycle" in remedy.state_change(str(project))


def test_intent_selection_names_the_mcp_tool_only_when_our_server_is_registered(
        project: Path) -> None:
    from tests.helpers import install

    said = remedy.intent_select(str(project))
    assert said == "ask the user to select one from a terminal (`governance intent select ID`)"
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"select": {
        "type": "stdio", "command": "npx", "args": ["some-other-server"]}}}))
    assert "select_active_intent" not in remedy.intent_select(str(project))
    (project / ".mcp.json").write_text("{not json")
    assert "select_active_intent" not in remedy.intent_select(str(project))
    (project / ".mcp.json").unlink()
    install(project, False, "--mcp")
    assert remedy.intent_select(str(project), "another intent") == (
        "select another intent with the select_active_intent tool "
        "(mcp__governance__select_active_intent)")
