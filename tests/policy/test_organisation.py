"""The organisation's layer in the compiled matrix: a floor a project cannot loosen
(policy.composition, policy.confinement; docs/organisation.md)."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from governance.policy.compiler import compile_matrix
from governance.policy.composition import STRICTNESS, RuleLayer, compose, strictest

REPO = Path(__file__).resolve().parents[2]
DEFAULT = (str(REPO / "config" / "activity_matrix.yaml"),
           (REPO / "config" / "activity_matrix.yaml").read_bytes())
ORG = "/etc/claude-code/governance/activity_matrix.yaml"
PROJECT = "/p/.claude/governance/activity_matrix.yaml"
ACTIONS = ("allow", "warn", "ask", "block", "redirect")


def _compile(org: str, project: str | None = None) -> tuple[dict[str, Any], list[str]]:
    compiled, problems = compile_matrix(
        DEFAULT, None if project is None else (PROJECT, project.encode()), "h",
        (ORG, org.encode()))
    assert compiled is not None, [p.render() for p in problems]
    return compiled, [p.render() for p in problems]


def _cell(compiled: dict[str, Any], state: str, prim: str) -> tuple[str, str, str]:
    action, _message, _to, file, key = compiled["decide"][state][prim]
    return action, file, key


@pytest.mark.parametrize(("lower", "floor"), list(itertools.product(ACTIONS, ACTIONS)))
def test_the_action_in_force_is_the_strictest_of_the_two_layers(lower: str, floor: str) -> None:
    lower_cell = (lower, "", "elsewhere" if lower == "redirect" else "", PROJECT, "rules.p.DO")
    floor_cell = (floor, "", "elsewhere" if floor == "redirect" else "", ORG, "rules.p.DO")
    table, overruled, _ = compose(
        [RuleLayer(PROJECT, {"p": {"DO": lower_cell}}),
         RuleLayer(ORG, {"p": {"DO": floor_cell}}, floor=True)],
        ["DO"], ("allow", "", "", "d", "default_action"), frozenset({PROJECT}))
    action, file = table["DO"]["p"][0], table["DO"]["p"][3]
    assert STRICTNESS[action] == max(STRICTNESS[lower], STRICTNESS[floor])
    assert action == strictest(lower, floor)
    # a lower cell at least as strict keeps its own words; a looser one is overruled and said
    assert file == (ORG if STRICTNESS[floor] > STRICTNESS[lower] else PROJECT)
    assert bool(overruled) == (STRICTNESS[floor] > STRICTNESS[lower])


ORG_MATRIX = """
version: 1
rules:
  destructive:
    _all_states: {action: block, message: "Org: no destructive acts outside DO."}
    DO: {action: ask, message: "Org: confirm destructive acts."}
  web-fetch:
    _all_states: {action: block, message: "Org: the web only in EXPLORE."}
    EXPLORE: {action: allow, locked: false}
"""


def test_locked_cells_hold_and_unlocked_ones_are_defaults_the_project_overrides() -> None:
    compiled, problems = _compile(ORG_MATRIX, """
extends: default
rules:
  destructive:
    DO: {action: allow}
    CHECK: {action: block, message: "project: never in CHECK"}
  web-fetch:
    EXPLORE: {action: warn}
""")
    # the project's allow in DO is looser than the org's ask: the org holds, and it is said
    assert _cell(compiled, "DO", "destructive") == ("ask", ORG, "rules.destructive.DO")
    assert any(PROJECT in p and "rules.destructive.DO" in p and "looser than the organisation"
               in p for p in problems), problems
    # the project's block in CHECK is as strict as the org's: the project's own rule and words
    assert _cell(compiled, "CHECK", "destructive") == ("block", PROJECT, "rules.destructive.CHECK")
    # web-fetch in EXPLORE is unlocked: the project's warn is in force, no warning
    assert _cell(compiled, "EXPLORE", "web-fetch") == ("warn", PROJECT, "rules.web-fetch.EXPLORE")
    assert not any("web-fetch.EXPLORE" in p for p in problems)
    # the org's _all_states floor holds everywhere else
    assert _cell(compiled, "DESIGN", "web-fetch")[0] == "block"
    assert compiled["org_file"] == ORG
    entry = compiled["org_cells"]["DO"]["destructive"]
    assert entry["lower"][0] == "allow" and entry["in_force"] == entry["floor"]


def test_without_a_project_matrix_the_org_lies_over_the_packaged_default() -> None:
    compiled, _ = _compile(ORG_MATRIX)
    assert _cell(compiled, "EXPLORE", "web-fetch")[0] == "allow"
    # the default lets DESIGN fetch; the org's floor does not
    assert _cell(compiled, "DESIGN", "web-fetch") == ("block", ORG, "rules.web-fetch._all_states")


def test_an_org_rule_for_a_state_the_project_lacks_applies_in_every_state() -> None:
    compiled, problems = _compile("rules:\n  privilege:\n    RESEARCH: {action: block}\n")
    for state in compiled["states"]:
        assert _cell(compiled, state, "privilege") == ("block", ORG, "rules.privilege.RESEARCH")
    assert any("rules.privilege.RESEARCH" in p and "applies in every state" in p
               for p in problems), problems


def test_a_project_cannot_loosen_by_mapping_a_tool_or_a_command_elsewhere() -> None:
    compiled, problems = _compile(ORG_MATRIX, """
extends: default
tools: {WebFetch: file-read, MyTool: file-read}
shell:
  commands:
    rm: {patterns: [{primitive: shell-read}]}
    mytool: {patterns: [{primitive: shell-read}]}
  read_only: [git, mytool2]
  local_hosts: [collector.example]
""")
    assert compiled["tools_exact"]["WebFetch"][0] == "web-fetch"
    assert compiled["tools_exact"]["MyTool"][0] == "file-read"      # a new tool is the project's
    rm = compiled["shell"]["commands"]["rm"]
    assert all(p.get("primitive") != "shell-read" for p in _patterns(rm)), rm
    assert "mytool" in compiled["shell"]["commands"]                 # a new command is added
    said = "\n".join(problems)
    assert "tools.WebFetch" in said and "shell.commands: redefines rm" in said
    assert "shell.read_only: lists git" in said and "shell.local_hosts" in said


def _patterns(entry: Any) -> list[dict[str, Any]]:
    if isinstance(entry, (bytes, bytearray)):
        import marshal

        entry = marshal.loads(entry)
    return list(entry.get("patterns") or entry.get("rules") or [])


def test_org_settings_and_default_action_hold_unless_the_project_is_stricter() -> None:
    compiled, problems = _compile("""
default_action: warn
settings: {on_error: block, grant_on_allow: false, ledger_max_bytes: 1000000}
""", """
extends: default
default_action: allow
settings: {on_error: allow, grant_on_allow: true, require_intent: true, ledger_max_bytes: 5}
""")
    assert compiled["default_action"] == "warn" and compiled["default_file"] == ORG
    settings = compiled["settings"]
    assert settings["on_error"] == "block" and settings["grant_on_allow"] is False
    assert settings["ledger_max_bytes"] == 1000000
    assert settings["require_intent"] is True        # the org does not write it: the project's
    said = "\n".join(problems)
    for key in ("default_action", "settings.on_error", "settings.grant_on_allow"):
        assert f"at key {key}:" in said, said
    compiled, problems = _compile("settings: {on_error: allow}\n",
                                  "extends: default\nsettings: {on_error: block}\n")
    assert compiled["settings"]["on_error"] == "block"     # stricter than the org: kept
    assert not any("on_error" in p for p in problems)


def test_locked_in_a_project_matrix_is_a_warning_and_a_broken_org_file_an_error() -> None:
    _, problems = _compile("rules: {}\n",
                           "extends: default\nrules:\n  web-fetch:\n    DO: {action: block, "
                           "locked: true}\n")
    assert any("rules.web-fetch.DO.locked" in p and "only in the organisation" in p
               for p in problems)
    compiled, found = compile_matrix(DEFAULT, None, "h", (ORG, b"rules: [unclosed\n"))
    assert compiled is None and found[0].file == ORG and found[0].level == "error"
    compiled, found = compile_matrix(DEFAULT, None, "h",
                                     (ORG, b"rules:\n  x:\n    DO: {action: blok}\n"))
    assert compiled is None and found[0].file == ORG


def test_the_org_extends_the_secrets_and_a_project_cannot_reassign_their_owners() -> None:
    compiled, problems = _compile("""
secrets:
  variables: ["ACME_*"]
  paths: ["*.vault"]
  owners: {ACME_*: [api.acme.example]}
egress: {allow: [api.acme.example]}
""", """
extends: default
secrets:
  variables: ["SHOP_*"]
  owners: {ACME_*: [collector.example], SHOP_*: [api.shop.example]}
""")
    spec = compiled["secrets"]
    globs = spec["variables"][1]
    assert "ACME_*" in globs and "SHOP_*" in globs          # both layers' secrets count
    assert any("vault" in str(p) for p in spec["paths"]), spec["paths"]
    owners = {k: list(v) for k, v in spec["owners"]}
    assert owners["ACME_*"] == ["api.acme.example"]          # the org's owner holds
    assert owners["SHOP_*"] == ["api.shop.example"]          # a new secret's owner is the project's
    assert "api.acme.example" in spec["egress"]
    assert any("secrets.owners" in p and "ACME_*" in p for p in problems), problems
