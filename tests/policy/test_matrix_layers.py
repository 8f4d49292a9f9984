"""Laying a project's matrix over the packaged default: a layer changes only what it writes.

An ``extends: default`` override that leaves ``default_action``, a setting or a key of a skill
restriction out keeps the packaged value (it was not written, so it is not a value); the property
test checks it for any override.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from governance.policy.compiler import compile_matrix, loosened
from governance.policy.schema import ALL_STATES, DEFAULT_STATES
from governance.project import default_matrix_path
from tests.helpers import REPO

OVERRIDE = "/p/.claude/governance/activity_matrix.yaml"
PACKAGED = (default_matrix_path(), Path(default_matrix_path()).read_bytes())


def _compile(override: str | dict[str, Any] | None, default: tuple[str, bytes] = PACKAGED
             ) -> dict[str, Any]:
    text = yaml.safe_dump(override) if isinstance(override, dict) else override
    compiled, problems = compile_matrix(default, None if text is None else
                                        (OVERRIDE, text.encode()), "hash")
    assert compiled is not None, [p.render() for p in problems]
    return compiled


def _base_without_shell() -> tuple[str, bytes]:
    """The packaged default with settings that differ from the schema's defaults (so a setting
    lost to a schema default shows), and without its shell patterns (faster to compile)."""
    document = yaml.safe_load(PACKAGED[1])
    document.pop("shell")
    document["settings"] = {"on_error": "block", "grant_on_allow": True, "require_intent": True,
                            "fallback_state": "DESIGN", "ledger_max_bytes": 12345}
    return "/packaged/activity_matrix.yaml", yaml.safe_dump(document).encode()


BASE = _base_without_shell()
BASE_COMPILED = _compile(None, BASE)


def test_an_override_without_default_action_keeps_the_packaged_one() -> None:
    compiled = _compile("extends: default\nrules:\n  web-fetch:\n    DO: {action: warn, message: ok}\n")
    assert compiled["default_action"] == "warn"
    assert compiled["default_file"] == default_matrix_path()   # named where it was written
    assert _compile("extends: default\ndefault_action: block\n")["default_file"] == OVERRIDE


def test_a_settings_block_changes_only_the_settings_it_writes() -> None:
    compiled = _compile("extends: default\nsettings:\n  grant_on_allow: false\n", BASE)
    assert compiled["settings"] == {**BASE_COMPILED["settings"], "grant_on_allow": False,
                                    "on_error_set": False}
    assert compiled["settings"]["on_error"] == "block"
    assert _compile("extends: default\nsettings:\n  on_error: allow\n", BASE)["settings"][
        "on_error_set"] is True


def test_null_and_an_empty_block_are_not_values() -> None:
    for text in ("extends: default\nsettings:\n", "extends: default\nsettings: {}\n",
                 "extends: default\nstates:\nskill_restrictions:\n"):
        compiled = _compile(text, BASE)
        assert compiled["settings"] == BASE_COMPILED["settings"]
        assert compiled["states"] == BASE_COMPILED["states"]
        assert compiled["skills"] == BASE_COMPILED["skills"]


def test_a_skill_restriction_changes_only_the_keys_it_writes() -> None:
    base = _compile(None)
    assert base["skills"]["DO"]["blocked"]
    compiled = _compile("extends: default\nskill_restrictions:\n  DO:\n    allowed: [implement]\n")
    assert compiled["skills"]["DO"]["blocked"] == base["skills"]["DO"]["blocked"]
    assert compiled["skills"]["DO"]["message"] == base["skills"]["DO"]["message"]
    assert compiled["skills"]["DO"]["allowed"] == ["implement"]


def test_an_override_without_extends_still_replaces_the_default_as_a_whole() -> None:
    compiled = _compile("rules:\n  web-fetch:\n    _all_states: {action: allow}\n", BASE)
    assert compiled["default_action"] == "allow"          # the schema's, not the packaged one
    assert compiled["settings"]["on_error"] == "allow"
    assert "governance-admin" not in compiled["decide"]["DO"]
    assert compiled["tools_exact"] == BASE_COMPILED["tools_exact"]   # tools are inherited


def test_loosened_names_each_cell_less_strict_than_the_default() -> None:
    base = _compile(None)
    compiled = _compile("extends: default\ndefault_action: allow\nrules:\n  web-fetch:\n"
                        "    DO: {action: warn}\n    EXPLORE: {action: block}\n")
    found = loosened(base, compiled)
    assert found == ["default_action (warn -> allow)", "rules.web-fetch.DO (block -> warn)"]
    assert loosened(base, _compile("extends: default\n")) == []


def gov(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "governance.commands.cli", *args],
                          capture_output=True, text=True, timeout=120, check=False,
                          env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent",
                               "PYTHONPATH": str(REPO), "GOVERNANCE_SANDBOX_PROXY_IDLE": "20"})


def test_a_small_override_does_not_loosen_the_policy_from_the_cli(project: Path) -> None:
    """The reported case: install, lay one rule over the default, validate, check an unknown
    tool: the packaged default_action (warn) still answers, and validate names the one cell
    the override makes less strict."""
    p = str(project)
    assert gov("install", "--project", p).returncode == 0
    before = json.loads(gov("check", "--project", p, "--json", "FrobnicateTool").stdout)
    (project / ".claude" / "governance" / "activity_matrix.yaml").write_text(
        "extends: default\nrules:\n  web-fetch:\n    DO: {action: warn, message: ok}\n")
    validated = gov("validate", "--project", p)
    assert validated.returncode == 0, validated.stdout + validated.stderr
    assert "rules.web-fetch.DO (block -> warn)" in validated.stdout
    assert "default_action" not in validated.stdout.split("note:")[1].splitlines()[0]
    after = json.loads(gov("check", "--project", p, "--json", "FrobnicateTool").stdout)
    assert after == before
    assert "Warning for FrobnicateTool" in after["systemMessage"]
    assert "permissionDecision" not in after["hookSpecificOutput"]


# --- the property: whatever an override writes, what it does not write keeps the base's value --

PRIMITIVES = [*sorted(BASE_COMPILED["allowed_in"]), "brand-new"]
RULE = st.one_of(st.sampled_from(["allow", "warn", "block", "ask"]).map(lambda a: {"action": a}),
                 st.just({"action": "redirect", "redirect_to": "elsewhere"}))
SETTINGS = st.fixed_dictionaries({}, optional={
    "on_error": st.sampled_from(["allow", "block"]),
    "grant_on_allow": st.booleans(),
    "require_intent": st.booleans(),
    "fallback_state": st.sampled_from(DEFAULT_STATES),
    "ledger_max_bytes": st.integers(1, 10**9),
})
OVERRIDES = st.fixed_dictionaries({"extends": st.just("default")}, optional={
    "default_action": st.sampled_from(["allow", "warn", "block", "ask"]),
    "settings": SETTINGS,
    "rules": st.dictionaries(st.sampled_from(PRIMITIVES),
                             st.dictionaries(st.sampled_from([*DEFAULT_STATES, ALL_STATES]), RULE,
                                             max_size=4), max_size=6),
})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(override=OVERRIDES)
def test_what_an_override_does_not_write_keeps_the_base_value(override: dict[str, Any]) -> None:
    compiled = _compile(override, BASE)
    written_rules = override.get("rules", {})
    default_action = override.get("default_action", BASE_COMPILED["default_action"])
    assert compiled["default_action"] == default_action
    for state in DEFAULT_STATES:
        for prim in PRIMITIVES:
            mine = written_rules.get(prim, {})
            if state in mine or ALL_STATES in mine:
                continue
            base_entry = BASE_COMPILED["decide"][state].get(prim)
            if base_entry is not None:   # the base's rule, with its message and origin
                assert compiled["decide"][state][prim] == base_entry, (prim, state)
            else:                        # no rule in the base: default_action answers
                assert prim not in compiled["decide"][state] or mine, (prim, state)
                assert compiled["default_action"] == default_action
    written_settings = override.get("settings", {})
    for key, value in BASE_COMPILED["settings"].items():
        if key == "on_error_set":
            assert value is False
            assert compiled["settings"][key] is ("on_error" in written_settings)
        else:
            assert compiled["settings"][key] == written_settings.get(key, value), key
    assert compiled["states"] == BASE_COMPILED["states"]
    assert compiled["skills"] == BASE_COMPILED["skills"]
