"""The activity matrix: the packaged default, the HAIOS format, overrides, and loud errors."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from governance.errors import ConfigError
from governance.policy import matrix, seal
from governance.policy.compiler import compile_matrix
from governance.project import default_matrix_path

HAIOS = Path(__file__).resolve().parents[3] / "shared" / "compat" / "haios" / "activity_matrix.yaml"


def _compile(override: str | None) -> tuple[dict | None, list]:
    default_path = default_matrix_path()
    default = (default_path, Path(default_path).read_bytes())
    over = None if override is None else ("/p/.claude/governance/activity_matrix.yaml",
                                          override.encode())
    return compile_matrix(default, over, "hash")


def _errors(problems: list) -> list[str]:
    return [p.render() for p in problems if p.level == "error"]


def test_default_matrix_is_valid_and_covers_the_seed_rules() -> None:
    compiled, problems = _compile(None)
    assert compiled is not None, _errors(problems)
    assert not _errors(problems)
    blocked_in_do = compiled["summary"]["DO"]["blocked"]
    for prim in ("user-query", "web-fetch", "web-search", "memory-search", "memory-store"):
        assert prim in blocked_in_do
    assert compiled["decide"]["EXPLORE"]["file-write"][0] == "warn"
    assert compiled["decide"]["EXPLORE"]["file-edit"][0] == "warn"
    # specific state overrides _all_states, and the rule names where it came from
    action, _msg, _to, file, key = compiled["decide"]["DO"]["web-fetch"]
    assert (action, key, file) == ("block", "rules.web-fetch.DO", default_matrix_path())
    assert compiled["decide"]["EXPLORE"]["web-fetch"][4] == "rules.web-fetch._all_states"


def test_governance_admin_is_blocked_in_every_state() -> None:
    compiled, _ = _compile(None)
    assert compiled is not None
    for state in compiled["states"]:
        assert compiled["decide"][state]["governance-admin"][0] == "block"


@pytest.mark.skipif(not HAIOS.exists(), reason="shared/compat/haios not present")
def test_haios_matrix_loads_and_validates_unchanged() -> None:
    compiled, problems = _compile(HAIOS.read_text())
    assert compiled is not None, _errors(problems)
    assert compiled["default_action"] == "allow"
    assert compiled["decide"]["DO"]["web-fetch"][0] == "block"
    assert compiled["decide"]["DO"]["db-query"][:3][0] == "redirect"
    assert compiled["decide"]["DO"]["db-query"][2] == "schema-verifier"
    assert compiled["phase_to_state"]["investigation-cycle/HYPOTHESIZE"] == "DESIGN"
    # no cycles: section, so the phase order comes from phase_to_state
    assert compiled["cycles"]["implementation-cycle"] == ["PLAN", "DO", "CHECK", "DONE"]
    assert "new-*" in compiled["skills"]["DO"]["blocked"]
    # the override replaces the default's rules, but inherits the tool mapping
    assert "governance-admin" not in compiled["decide"]["DO"]
    assert compiled["tools_exact"]["WebFetch"][0] == "web-fetch"


def test_override_with_extends_lays_over_the_default() -> None:
    text = ("extends: default\n"
            "rules:\n"
            "  web-fetch:\n    DO: {action: warn, message: ok in DO}\n"
            "  ticket:\n    _all_states: {action: ask, message: tickets need a human}\n"
            "tools:\n  mcp__jira__*: ticket\n")
    compiled, problems = _compile(text)
    assert compiled is not None, _errors(problems)
    assert compiled["decide"]["DO"]["web-fetch"][:2] == ("warn", "ok in DO")
    assert compiled["decide"]["DO"]["web-search"][0] == "block"  # still from the default
    assert compiled["tools_glob"][0][:2] == ("mcp__jira__*", "ticket")  # override tried first
    assert compiled["decide"]["DONE"]["ticket"][0] == "ask"


@pytest.mark.parametrize("text, key, words", [
    ("rules:\n  web-fetch:\n    DO: {action: blok}\n", "rules.web-fetch.DO.action",
     "expected one of allow, warn, block, redirect, ask, got 'blok'"),
    ("rules:\n  web-fetch:\n    DOO: {action: block}\n", "rules.web-fetch.DOO", "unknown state 'DOO'"),
    ("rules:\n  web-fetch:\n    DO: {action: block, mesage: typo}\n", "rules.web-fetch.DO.mesage",
     "unknown key 'mesage'"),
    ("rules:\n  db:\n    DO: {action: redirect}\n", "rules.db.DO", "redirect needs redirect_to"),
    ("phase_to_state:\n  impl/DO: DOING\n", "phase_to_state.impl/DO", "unknown state 'DOING'"),
    ("rules:\n  a:\n    _all_states: {action: allow}\ntools:\n  Read: nothing\n", "tools.Read",
     "which has no rules"),
    ("rules: {}\ntools:\n  '': a\n", "tools.", "empty tool name"),
    ("rules:\n  web-fetch: [1, 2\n", "line 2", "YAML syntax error"),
    ("- just\n- a list\n", "(top level)", "expected a mapping"),
    ("cycles:\n  c: [A]\n", "cycles.c[0]", "maps to no state"),
])
def test_errors_name_file_key_and_fix(text: str, key: str, words: str) -> None:
    compiled, problems = _compile(text)
    assert compiled is None
    errors = _errors(problems)
    assert any(key in e and words in e and "/p/.claude/governance/activity_matrix.yaml" in e
               for e in errors), errors
    assert all("Fix:" in e for e in errors)


def _accept(override: Path) -> None:
    """Record the override's bytes in the seal as `governance validate` does (here even a broken
    one, as after an upgrade that no longer reads an accepted matrix)."""
    project = override.parents[2]
    seal.accept_matrix(str(project), override.read_bytes() if override.exists() else None)


def test_broken_override_is_never_replaced_by_defaults(project: Path) -> None:
    override = project / ".claude" / "governance" / "activity_matrix.yaml"
    override.parent.mkdir(parents=True)
    override.write_text("rules:\n  web-fetch:\n    DO: {action: blok}\n")
    _accept(override)
    with pytest.raises(ConfigError) as first:
        matrix.load(str(project))
    assert "rules.web-fetch.DO.action" in first.value.render()
    assert str(override) in first.value.render()
    # the error is cached, so the next call answers the same without recompiling
    cache = [n for n in os.listdir(override.parent / ".cache") if n.startswith("matrix-")]
    assert len(cache) == 1
    with pytest.raises(ConfigError):
        matrix.load(str(project))
    # fixing (and accepting) the file takes effect on the next call
    override.write_text("extends: default\n")
    _accept(override)
    assert matrix.load(str(project))["decide"]["DO"]["web-fetch"][0] == "block"


def test_cache_is_rebuilt_when_the_source_changes(project: Path) -> None:
    first = matrix.load(str(project))
    override = project / ".claude" / "governance" / "activity_matrix.yaml"
    override.write_text("extends: default\nrules:\n  web-fetch:\n    DO: {action: allow}\n")
    _accept(override)
    second = matrix.load(str(project))
    assert first["config_hash"] != second["config_hash"]
    assert second["decide"]["DO"]["web-fetch"][0] == "allow"
    override.unlink()
    _accept(override)
    assert matrix.load(str(project))["config_hash"] == first["config_hash"]


def test_an_edit_that_keeps_size_and_mtime_is_still_seen(project: Path) -> None:
    override = project / ".claude" / "governance" / "activity_matrix.yaml"
    override.parent.mkdir(parents=True, exist_ok=True)
    override.write_text("extends: default\nrules:\n  web-fetch:\n    DO: {action: allow}\n")
    _accept(override)
    assert matrix.load(str(project))["decide"]["DO"]["web-fetch"][0] == "allow"
    stat = override.stat()
    override.write_text("extends: default\nrules:\n  web-fetch:\n    DO: {action: block}\n")
    _accept(override)
    os.utime(override, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same size, same mtime
    loaded = matrix.load(str(project))
    # read from the file itself, not from the accepted copy a stale memo would fall back to
    assert loaded["decide"]["DO"]["web-fetch"][0] == "block" and "unaccepted" not in loaded


def test_a_process_that_decides_many_calls_reads_a_compiled_cache_once(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The resident server keeps what it read of a compiled cache (named by the hash of its
    sources, so it never changes); a changed source is still seen on the next call, and a cache
    file that was pruned is read (or rebuilt) again."""
    reads: list[str] = []
    real = matrix._read_framed
    monkeypatch.setattr(matrix, "_read_framed", lambda path: reads.append(path) or real(path))
    monkeypatch.setattr(matrix, "_HELD", {})
    first = matrix.load(str(project))   # compiles and writes the cache
    reads.clear()
    matrix.load(str(project))
    again = matrix.load(str(project))
    assert len(reads) == 1 and again["config_hash"] == first["config_hash"]
    again["mark"] = True   # a caller's mark stays on its own copy
    assert "mark" not in matrix.load(str(project))
    override = project / ".claude" / "governance" / "activity_matrix.yaml"
    override.write_text("extends: default\nrules:\n  web-fetch:\n    DO: {action: allow}\n")
    _accept(override)
    assert matrix.load(str(project))["decide"]["DO"]["web-fetch"][0] == "allow"
    override.unlink()
    _accept(override)
    for name in os.listdir(override.parent / ".cache"):
        if name.startswith("matrix-"):
            os.unlink(override.parent / ".cache" / name)
    back = matrix.load(str(project))
    assert back["config_hash"] == first["config_hash"]
    assert back["decide"]["DO"]["web-fetch"][0] != "allow"
    assert any(n.startswith("matrix-") for n in os.listdir(override.parent / ".cache"))


def test_an_indexed_table_is_true_when_it_holds_an_entry_without_decoding_it() -> None:
    from governance.policy.matrix import IndexedTable

    blob = memoryview(b"")
    assert not IndexedTable("", {}, blob)
    held = IndexedTable("\ncurl\t0\t0", {}, blob)
    assert held and not held.decoded          # `table or {}` decodes nothing
    assert IndexedTable("", {"wget": 1}, blob)
