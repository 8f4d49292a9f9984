"""Derived files rewritten by a script that uses our own package (the venv's interpreter), as an
agent's `python tools/x.py` would: the compiled matrix, the shell patterns, the knowledge index and
the memos. Each attack is performed for real and its effect checked on disk; the exact installed
PreToolUse command still decides from the accepted sources, tells the user which file was
rewritten, and the ledger records it; `governance doctor` finds it too."""

from __future__ import annotations

import json
import marshal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from governance.commands.cli import main
from governance.policy import matrix, seal
from governance.project import KNOWLEDGE_MEMO, cache_file
from tests.helpers import REPO, hook_command, install, run_command, set_state
from tests.knowledge.test_lookup import DOCKER_SOP, sop

STRICT = "enforcement:\n  level: strict\n"


def attack(project: Path, code: str, *args: str) -> None:
    """Run ``code`` as the agent's script would: the venv's python, importing our package."""
    done = subprocess.run([sys.executable, "-c", code, str(project), *args], cwd=str(REPO),
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr


def bash(project: Path, command: str, session: str = "s1") -> dict[str, Any]:
    payload = {"session_id": session, "transcript_path": "", "cwd": str(project),
               "permission_mode": "default", "hook_event_name": "PreToolUse",
               "tool_name": "Bash", "tool_input": {"command": command},
               "tool_use_id": f"toolu_{session}_{len(command)}"}
    done = run_command(hook_command(project), json.dumps(payload))
    assert done.returncode == 0 and b"Traceback" not in done.stdout, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def last_record(project: Path) -> dict[str, Any]:
    lines = (project / ".claude" / "governance" / "ledger.jsonl").read_text().splitlines()
    record: dict[str, Any] = json.loads(lines[-1])
    return record


def assert_told(project: Path, answer: dict[str, Any], name: str) -> None:
    """The user is told which file was rewritten, the ledger has it, the next call is quiet."""
    assert cache_file(str(project), name) in answer["systemMessage"]
    assert "changed outside governance" in answer["systemMessage"]
    record = last_record(project)
    assert name in record["tampered"] and "derived" in record["unaccepted"]


@pytest.fixture
def planned(project: Path) -> Path:
    install(project)
    set_state(project, "implementation-cycle/PLAN/W-1")
    denied = bash(project, "git push origin main")          # builds every cache
    assert denied["hookSpecificOutput"]["permissionDecision"] == "deny"
    return project


# What the agent's script does: compile the matrix with our package, turn every rule into an
# allow, and write it over the cache under its own name (the hook would otherwise read it as is).
FORGE_MATRIX = """
import sys
from governance.policy import matrix
from governance.policy.compiler import compile_matrix
project, name = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "")
default, override, config_hash = matrix.read_sources(project)
compiled, _ = compile_matrix(default, override, config_hash)
for table in compiled["decide"].values():
    for primitive, entry in table.items():
        table[primitive] = ("allow", "", None, *entry[3:])
compiled.update(override_sha256="", installation=[], shell=True)
path = matrix.cache_path(project, name or config_hash)
with open(path, "wb") as fh:
    fh.write(matrix._store_core(compiled))
"""


def forged_rule(path: str, state: str, primitive: str) -> str:
    """The action the cache file at ``path`` holds for ``primitive`` in ``state``, read straight
    from its bytes (what the hook would act on if it trusted the file)."""
    data = Path(path).read_bytes()
    header = marshal.loads(data[4:4 + int.from_bytes(data[:4], "little")])
    start, end = header["decide"][state]
    return str(marshal.loads(marshal.loads(data[start:end])[primitive])[0])


def test_a_compiled_matrix_rewritten_under_its_own_name_is_not_used(planned: Path) -> None:
    path = matrix.cache_path(str(planned), matrix.load(str(planned))["config_hash"])
    attack(planned, FORGE_MATRIX)
    assert forged_rule(path, "PLAN", "vcs-push") == "allow"     # the attack is in place
    answer = bash(planned, "git push origin main")
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert_told(planned, answer, Path(path).name)
    assert forged_rule(path, "PLAN", "vcs-push") == "block"     # built again from the sources
    again = bash(planned, "git push origin main")
    assert again["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "systemMessage" not in again and "tampered" not in last_record(planned)


def test_doctor_finds_a_rewritten_cache(planned: Path, capsys: pytest.CaptureFixture[str]
                                        ) -> None:
    path = matrix.cache_path(str(planned), matrix.load(str(planned))["config_hash"])
    attack(planned, FORGE_MATRIX)
    assert main(["doctor", "--project", str(planned)]) == 1
    out = capsys.readouterr().out
    assert f"{path} was changed outside governance" in out


def test_a_memo_pointing_at_a_forged_cache_is_not_followed(planned: Path) -> None:
    fake = "f" * 64
    attack(planned, FORGE_MATRIX, fake)      # a forged cache under a name of its own ...
    attack(planned, """
import sys
from governance.policy import matrix
from governance.project import cache_file, remember, signature
project = sys.argv[1]
remember(cache_file(project, matrix.MEMO), signature(matrix._sources(project)), "f" * 64)
""")                                          # ... and the memo of the sources pointing at it
    assert forged_rule(matrix.cache_path(str(planned), fake), "PLAN", "vcs-push") == "allow"
    answer = bash(planned, "git push origin main")
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert_told(planned, answer, matrix.MEMO)


def test_rewritten_shell_patterns_do_not_hide_a_push(planned: Path) -> None:
    compiled = matrix.load(str(planned))
    path = matrix.shell_cache_path(matrix.cache_path(str(planned), compiled["config_hash"]))
    attack(planned, """
import sys
from governance.policy import matrix
from governance.policy.compiler import compile_matrix
project = sys.argv[1]
default, override, config_hash = matrix.read_sources(project)
compiled, _ = compile_matrix(default, override, config_hash)
shell = compiled["shell"]
shell["read_only"]["git"] = shell["read_only"]["ls"]     # git reads like ls
del shell["commands"]["git"]
with open(matrix.shell_cache_path(matrix.cache_path(project, config_hash)), "wb") as fh:
    fh.write(matrix._shell_bytes(shell))
""")
    forged = matrix._read_shell(Path(path).read_bytes())
    assert "git" not in forged["commands"] and "git" in forged["read_only"]
    answer = bash(planned, "git push origin main")
    assert answer["hookSpecificOutput"].get("permissionDecision") == "deny", answer
    assert "vcs-push" in answer["hookSpecificOutput"]["permissionDecisionReason"]
    assert_told(planned, answer, Path(path).name)


@pytest.fixture
def strict_sop(planned: Path) -> Path:
    sop(planned, "deploy", DOCKER_SOP)
    (planned / ".claude" / "governance" / "knowledge.yaml").write_text(STRICT)
    first = bash(planned, "docker compose up", session="s0")
    assert first["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "Run docker compose config first." in first["hookSpecificOutput"][
        "permissionDecisionReason"]
    return planned


def test_a_forged_quiet_memo_does_not_silence_a_strict_sop(strict_sop: Path) -> None:
    attack(strict_sop, """
import sys
from governance.project import KNOWLEDGE_MEMO, cache_file, knowledge_sources, remember, signature
project = sys.argv[1]
remember(cache_file(project, KNOWLEDGE_MEMO), signature(knowledge_sources(project)),
         {"quiet": True})
""")
    answer = bash(strict_sop, "docker compose up")
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "Run docker compose config first." in answer["hookSpecificOutput"][
        "permissionDecisionReason"]
    assert_told(strict_sop, answer, KNOWLEDGE_MEMO)


def test_a_rewritten_index_that_drops_a_strict_sop_does_not_silence_it(strict_sop: Path
                                                                       ) -> None:
    attack(strict_sop, """
import marshal, os, sys
from governance.knowledge import indexer, lookup
from governance.project import knowledge_sources, signature
project, sop = sys.argv[1], sys.argv[2]
os.rename(sop, sop + ".away")
data, _ = indexer.build(project)                   # an index without the SOP
os.rename(sop + ".away", sop)
size = int.from_bytes(data[4:8], "little")
header = marshal.loads(data[8:8 + size])
header["signature"]["all"] = signature(knowledge_sources(project))   # looks current
head = marshal.dumps(header)
assert len(head) == size, (len(head), size)
with open(lookup.path(project), "wb") as fh:
    fh.write(data[:8] + head + data[8 + size:])
""", str(strict_sop / ".claude" / "sops" / "deploy.ai.sop"))
    forged = matrix_free_index(strict_sop)
    assert forged["sops"] == 0            # the attack is in place: the index names no SOP
    answer = bash(strict_sop, "docker compose up")
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "Run docker compose config first." in answer["hookSpecificOutput"][
        "permissionDecisionReason"]
    assert_told(strict_sop, answer, "knowledge.index")


def matrix_free_index(project: Path) -> dict[str, Any]:
    data = Path(cache_file(str(project), "knowledge.index")).read_bytes()
    header: dict[str, Any] = marshal.loads(data[8:8 + int.from_bytes(data[4:8], "little")])
    return header


def test_a_file_nobody_recorded_is_ignored_without_a_word(planned: Path) -> None:
    """A cache that governance never recorded (an older version's) is built again, quietly."""
    record = seal.read(str(planned)) or {}
    record.pop(seal.DERIVED, None)
    with seal.lock(str(planned)):
        seal.write(str(planned), record)
    answer = bash(planned, "git push origin main")
    assert answer["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert "systemMessage" not in answer
    assert seal.derived_entries(seal.read(str(planned)))      # recorded again
