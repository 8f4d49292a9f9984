"""Every corpus case through the real PreToolUse hook, one process per case, exactly as installed.

The acts the hook records in the ledger must carry exactly the corpus's primitives; the answer must
be the decision the matrix gives the most restrictive of them.
"""

from __future__ import annotations

import json
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.helpers import hook_command, install, recorded, run_command, set_state
from tests.shell.corpus import load_corpus


def test_every_corpus_case_through_the_installed_hook(project: Path) -> None:
    # a git repository that ignores nothing, as the corpus assumes: `rm -rf build` there deletes
    # work (deleting output git ignores is a file-delete: tests/shell/test_generated.py)
    subprocess.run(["git", "init", "-q"], cwd=project, check=True, capture_output=True)
    # settings the index holds as they were before governance was installed: what `git restore .`
    # would put back
    (project / ".claude").mkdir(exist_ok=True)
    (project / ".claude" / "settings.json").write_text("{}\n")
    subprocess.run(["git", "add", ".claude/settings.json"], cwd=project, check=True,
                   capture_output=True)
    (project / "template" / "src").mkdir(parents=True)     # cp -r template/. . copies it
    (project / "template" / "src" / "main.py").write_text("print('hello')\n")
    install(project)
    set_state(project, "implementation-cycle/DO/WORK-064")
    command = hook_command(project, "PreToolUse")
    template = recorded("PreToolUse-Bash.json", project)
    cases = load_corpus()
    # the installed project holds governance's backup of the settings it replaced
    # (.claude/governance/backups/settings.json.bak), which this search lists and rm deletes
    on_disk = {"holdout:find . -type f -name '*.bak' -print0 | xargs -0 rm -f":
               {"file-delete", "governance-admin"}}

    def run(index: int) -> tuple[int, dict[str, object]]:
        # a session each: a case that reads a secret (`env`) must not taint the others' session
        payload = dict(template, tool_use_id=f"toolu_corpus_{index:04d}",
                       session_id=f"corpus-{index:04d}",
                       tool_input={"command": cases[index].command})
        done = run_command(command, json.dumps(payload), cwd=str(project))
        assert done.returncode == 0, done.stderr
        return index, json.loads(done.stdout)

    with ThreadPoolExecutor(max_workers=4) as pool:
        answers = dict(pool.map(run, range(len(cases))))
    records = {}
    ledger = project / ".claude" / "governance" / "ledger.jsonl"
    for line in ledger.read_text().splitlines():
        record = json.loads(line)
        records[record.get("tool_use_id")] = record
    mismatches = []
    for index, case in enumerate(cases):
        record = records[f"toolu_corpus_{index:04d}"]
        got = set(record["primitives"])
        answer = answers[index]
        assert "systemMessage" not in answer or "NOT checked" not in str(answer["systemMessage"])
        specific = answer["hookSpecificOutput"]
        assert isinstance(specific, dict)
        decision = specific.get("permissionDecision", "none")
        expected_decision = {"block": "deny", "redirect": "deny", "ask": "ask"}.get(
            str(record["action"]), "none")
        if got != on_disk.get(case.id, set(case.expect)) or decision != expected_decision:
            mismatches.append((case.id, sorted(case.expect), sorted(got), decision))
    assert not mismatches, mismatches[:20]
    assert len(cases) >= 400
