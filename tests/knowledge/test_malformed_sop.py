"""A malformed SOP is never skipped in silence: the hook tells the user once per change of it (in
real hook processes), ``knowledge explain`` and ``governance doctor`` name it, and its fix is seen
at once even among many SOPs."""

from __future__ import annotations

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from governance.commands.cli import main
from governance.knowledge import indexer
from tests.helpers import REPO, hook_command, install, set_state
from tests.knowledge.test_hook_knowledge import hook, ledger, payload
from tests.knowledge.test_lookup import DOCKER_SOP, sop

CLOUDS = "---\nmatch:\n  clouds: [aws]\n---\n## Gotchas\nx\n"        # an unknown match key
NOT_A_MAPPING = "---\nmatch: [docker]\n---\n## Gotchas\nx\n"
FIXED = "---\nmatch:\n  technologies: [docker]\n---\n## Gotchas\nKeep the volumes.\n"


def notice(answer: dict[str, Any]) -> str:
    """The part of the user's message about skipped SOPs ("" when there is none)."""
    said = str(answer.get("systemMessage", ""))
    return said[said.find("governance: "):] if "not parse and" in said else ""


@pytest.fixture
def pre(project: Path) -> str:
    install(project)
    set_state(project, "implementation-cycle/DO")
    sop(project, "deploy", DOCKER_SOP)
    return hook_command(project, "PreToolUse")


def test_the_hook_tells_once_per_change_of_the_sop(project: Path, pre: str) -> None:
    broken = sop(project, "broken", CLOUDS)
    first = hook(pre, payload(project, "ls -la"))
    told = notice(first)
    assert str(broken) in told
    assert "at key match.clouds: unknown match key 'clouds'" in told
    assert "Fix: use only projects" in told
    assert "1 SOP does not parse and is skipped" in told
    assert ledger(project)[-1]["knowledge"]["sops_skipped"] == 1
    assert notice(hook(pre, payload(project, "ls -la"))) == ""            # nothing changed
    assert notice(hook(pre, payload(project, "docker ps"))) == ""         # another call: still
    assert "sops_skipped" not in ledger(project)[-1]["knowledge"]

    broken.write_text(NOT_A_MAPPING)                                     # broken another way
    told = notice(hook(pre, payload(project, "ls -la")))
    assert str(broken) in told and "match must be a mapping of lists" in told
    assert notice(hook(pre, payload(project, "ls -la"))) == ""

    broken.write_text(FIXED)                                             # fixed: serves
    answer = hook(pre, payload(project, "docker compose up -d", session="sess-2"))
    assert notice(answer) == ""
    assert "Keep the volumes." in answer["hookSpecificOutput"]["additionalContext"]
    broken.write_text(NOT_A_MAPPING)                                     # broken again, as before
    assert "match must be a mapping of lists" in notice(hook(pre, payload(project, "ls -la")))
    assert notice(hook(pre, payload(project, "ls -la"))) == ""


def test_a_project_whose_only_sop_is_malformed_is_told_and_sees_the_fix(project: Path) -> None:
    install(project)
    set_state(project, "implementation-cycle/DO")
    pre = hook_command(project, "PreToolUse")
    broken = sop(project, "only", CLOUDS)
    assert "only.ai.sop" in notice(hook(pre, payload(project, "ls")))
    assert notice(hook(pre, payload(project, "ls"))) == ""
    broken.write_text(FIXED)                              # in place: the folder does not change
    answer = hook(pre, payload(project, "docker ps"))
    assert notice(answer) == ""
    assert "Keep the volumes." in answer["hookSpecificOutput"]["additionalContext"]


def test_parallel_hook_calls_tell_it_once(project: Path, pre: str) -> None:
    sop(project, "broken", CLOUDS)
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda i: hook(pre, payload(project, f"ls dir{i}")), range(8)))
    assert sum(1 for a in answers if notice(a)) == 1


def test_the_notice_joins_a_strict_hold(project: Path, pre: str) -> None:
    (project / ".claude" / "governance" / "knowledge.yaml").write_text(
        "enforcement:\n  level: strict\n")
    sop(project, "broken", CLOUDS)
    answer = hook(pre, payload(project, "docker compose up -d"))
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "broken.ai.sop" in answer["systemMessage"]
    assert "knowledge held this call" in answer["systemMessage"]


def test_disabled_knowledge_says_nothing(project: Path, pre: str) -> None:
    (project / ".claude" / "governance" / "knowledge.yaml").write_text(
        "enforcement:\n  level: disabled\n")
    sop(project, "broken", CLOUDS)
    assert notice(hook(pre, payload(project, "ls"))) == ""


def test_a_malformed_sop_among_many_is_watched(project: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(indexer, "WATCH_MAX", 2)          # beyond it, SOP files are not watched
    sop(project, "a", FIXED)
    sop(project, "b", FIXED)
    broken = sop(project, "c", CLOUDS)
    index, _ = indexer.rebuild(str(project))
    assert index.header["watched"] == [str(broken)]
    assert len(index.header["problems"]) == 1
    broken.write_text(FIXED)
    index, how = indexer.current(str(project))
    index.close()
    assert how == "built" and index.header["problems"] == [] and index.header["sops"] == 3


def test_explain_names_the_skipped_sops(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sop(project, "deploy", DOCKER_SOP)
    broken = sop(project, "broken", NOT_A_MAPPING)
    call = 'Bash {"command": "docker ps"}'
    assert main(["knowledge", "explain", call, "--project", str(project)]) == 0
    out = capsys.readouterr().out
    assert "Skipped:   1 SOP that does not parse" in out
    assert f"{broken} at key match: match must be a mapping of lists" in out
    assert main(["knowledge", "explain", call, "--project", str(project), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert [s["name"] for s in result["sops"]] == ["deploy"]
    assert len(result["skipped_sops"]) == 1 and str(broken) in result["skipped_sops"][0]


def test_doctor_names_each_malformed_sop_with_its_fix(project: Path) -> None:
    install(project)
    first = sop(project, "broken", CLOUDS)
    second = sop(project, "empty", "# Only a title\n")
    done = subprocess.run([sys.executable, "-m", "governance.commands.cli", "doctor",
                           "--project", str(project)], capture_output=True, text=True,
                          timeout=60, check=False, env={"PATH": "/usr/bin:/bin",
                                                        "HOME": str(project.parent / "home"),
                                                        "PYTHONPATH": str(REPO)})
    assert done.returncode == 1, done.stdout
    for path, problem, fix in (
            (first, "at key match.clouds: unknown match key 'clouds'", "use only projects, services"),
            (second, "the SOP has no preflight, gotchas or credentials section",
             "add a '## Preflight', '## Gotchas' or '## Credentials' section")):
        at = next(i for i, line in enumerate(done.stdout.splitlines())
                  if "FAIL" in line and f"SOP skipped, it does not parse: {path}: {problem}" in line)
        finding = " ".join(done.stdout.splitlines()[at:at + 2])     # the fix: same or next line
        assert f"fix: {fix}" in finding
    assert done.stdout.count(str(first)) == 1                # named once, by the SOP check
    set_state(project, "implementation-cycle/DO")        # doctor's probe left the notice due
    assert str(first) in notice(hook(hook_command(project), payload(project, "ls")))
