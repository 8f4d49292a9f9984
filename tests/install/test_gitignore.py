"""Git keeps governance's local and secret files out and the shared ones in: real ``git init``,
real ``git add -A -n`` and ``git check-ignore``, after install and the writes governance makes."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from governance.commands.cli import main
from governance.install import gitignore, settings
from tests.helpers import install, recorded, run_command, set_state

GOV = ".claude/governance"
SHARED = {f"{GOV}/.gitignore", f"{GOV}/activity_matrix.yaml", f"{GOV}/guardrails.yaml",
          f"{GOV}/knowledge.yaml", ".orchestration/active_intents.yaml", ".orchestration/.gitignore",
          ".claude/sops/deploy.ai.sop", ".claude/.gitignore", ".claude/settings.json"}
# Every file governance writes that is local to a checkout or secret, and one a later version adds.
LOCAL = [f"{GOV}/{name}" for name in (
    "state.json", "state.json.lock", "seal.json", "seal.json.lock", "seal-matrix.yaml",
    "ledger.jsonl", "ledger.jsonl.lock", "ledger.head", "ledger.torn", "ledger-000001.jsonl",
    "errors.log", "errors.log.1", "decisions.db", "decisions.db-wal", "knowledge.db",
    "knowledge.db-wal", "decisions.reviewed", "sandbox.json", "server.token", "server.json",
    "server.lock", "server.log", ".cache/matrix-f1-abc.marshal", ".cache/knowledge.index",
    "sessions/s1.seen", "sessions/s1.status", "knowledge/sessions/s1.json",
    "knowledge/bypass.json", "intent/selected.json", "intent/selected.json.lock",
    "backups/settings.json.bak", "backups/mcp.json.bak", "a-file-a-later-version-adds.json",
    "knowledge/activity_matrix.yaml")] + [
    ".claude/settings.local.json", ".orchestration/agent_trace.jsonl",
    ".orchestration/agent_trace.jsonl.lock", ".orchestration/agent_trace.torn"]


def git(project: Path, *argv: str) -> str:
    done = subprocess.run(["git", *argv], cwd=project, capture_output=True, text=True, check=True)
    return done.stdout


def would_add(project: Path) -> set[str]:
    return {line.split("'")[1] for line in git(project, "add", "-A", "-n").splitlines()}


@pytest.fixture
def repo(project: Path) -> Path:
    git(project, "init", "-q")
    (project / ".orchestration").mkdir()
    (project / ".orchestration" / "active_intents.yaml").write_text("active_intents: []\n")
    return project


def test_after_install_and_real_use_git_would_add_only_the_shared_files(repo: Path) -> None:
    install(repo, False, "--http", "--port", "9911")     # the server token, settings.local.json
    from governance.server import credential

    credential.load_or_create(str(repo))
    set_state(repo, "implementation-cycle/DO/WORK-1")
    hooks = json.loads((repo / ".claude" / "settings.json").read_text())["hooks"]
    commands = {"SessionStart.json": hooks["SessionStart"][0]["hooks"][0]["command"],
                "PreToolUse-WebFetch.json": settings.hook_command("pre_tool_use.py")}
    for name, command in commands.items():   # the server is not started: the command hook writes
        assert run_command(command, json.dumps(recorded(name, repo))).returncode == 0
    written = {str(p.relative_to(repo)) for p in (repo / ".claude").rglob("*") if p.is_file()}
    assert {f"{GOV}/ledger.jsonl", f"{GOV}/state.json", f"{GOV}/seal.json",
            f"{GOV}/server.token", ".claude/settings.local.json"} <= written
    assert would_add(repo) == {f"{GOV}/.gitignore", ".claude/.gitignore", ".claude/settings.json",
                               ".orchestration/active_intents.yaml", ".orchestration/.gitignore"}


def test_every_file_governance_writes_is_ignored_unless_a_team_shares_it(repo: Path) -> None:
    install(repo)
    for relative in [*LOCAL, *SHARED]:
        path = repo / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            path.write_text("x\n")
    assert would_add(repo) == SHARED
    lines = gitignore.check(str(repo))
    assert [ok for ok, _, _ in lines] == [True], lines


def test_repeated_installs_keep_one_backup_out_of_claude(repo: Path) -> None:
    settings = repo / ".claude" / "settings.json"
    settings.write_text(json.dumps({"env": {"A": "1"}}))
    (repo / ".claude" / "settings.json.bak-20250101-120000").write_text("{}")  # an older version's
    for extra in ([], ["--fail-closed"], ["--statusline"], [], ["--http"], []):
        install(repo, False, *extra)
    claude = sorted(p.name for p in (repo / ".claude").iterdir())
    assert claude == [".gitignore", "governance", "settings.json", "settings.local.json"]
    backups = sorted(p.name for p in (repo / GOV / "backups").iterdir())
    assert backups == ["settings.json.bak", "settings.json.bak-20250101-120000"]
    assert would_add(repo) == {f"{GOV}/.gitignore", ".claude/.gitignore", ".claude/settings.json",
                               ".orchestration/active_intents.yaml", ".orchestration/.gitignore"}


def test_doctor_names_a_committed_secret_and_an_ignored_shared_file(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    install(repo)
    token = repo / GOV / "server.token"
    token.write_text("secret\n")
    git(repo, "add", "-f", f"{GOV}/server.token")          # committed before it was ignored
    (repo / ".gitignore").write_text("active_intents.yaml\n")
    capsys.readouterr()
    assert main(["doctor", "--project", str(repo)]) == 1
    said = capsys.readouterr().out
    assert (f"git already tracks 1 local governance file(s): {GOV}/server.token; "
            f"fix: git rm --cached {GOV}/server.token") in said
    assert ("git ignores .orchestration/active_intents.yaml, which a team shares (pattern "
            "'active_intents.yaml' at .gitignore:1); fix: take the pattern 'active_intents.yaml' "
            "out of .gitignore") in said


def test_doctor_says_when_a_local_file_would_be_committed(
        repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    install(repo)
    (repo / GOV / ".gitignore").write_text("# mine\nledger*\n")   # the user's own, kept
    (repo / GOV / "server.token").write_text("secret\n")
    assert "Kept your" in " ".join(gitignore.write(str(repo)))
    capsys.readouterr()
    assert main(["doctor", "--project", str(repo)]) == 1
    said = capsys.readouterr().out
    line = next(line for line in said.splitlines() if "git would commit" in line)
    assert f"{GOV}/server.token" in line and f"{GOV}/ledger.jsonl" not in line
    assert line.endswith(f"fix: governance install --project {repo} (it writes the .gitignore "
                         "files)")


def test_outside_git_the_check_is_skipped_with_a_note(project: Path) -> None:
    install(project)
    ((ok, what, _),) = gitignore.check(str(project))
    assert ok is None and "not a git repository" in what


def test_an_older_ignore_file_of_ours_is_replaced(repo: Path) -> None:
    (repo / GOV).mkdir(parents=True)
    (repo / GOV / ".gitignore").write_text(
        "# Local governance data: state, ledger, caches. Commit activity_matrix.yaml if you "
        "override it.\n.cache/\nledger*\nstate.json\n")
    install(repo)
    assert (repo / GOV / ".gitignore").read_text() == gitignore.OWN_IGNORE


def test_uninstall_takes_out_the_lines_whose_files_are_gone(repo: Path) -> None:
    (repo / ".claude" / ".gitignore").write_text("mine.txt\n")
    install(repo, False, "--http", "--port", "9911")
    assert gitignore.block_text(("settings.local.json",)) in (repo / ".claude" / ".gitignore"
                                                               ).read_text()
    assert main(["uninstall", "--project", str(repo)]) == 0
    assert not (repo / ".claude" / "settings.local.json").exists()
    assert (repo / ".claude" / ".gitignore").read_text() == "mine.txt\n"
    assert not (repo / ".orchestration" / ".gitignore").exists()
    # the state and ledger stay, and so does the rule that keeps them out of git
    assert (repo / GOV / ".gitignore").exists()
    assert would_add(repo) == {".claude/.gitignore", ".claude/settings.json", f"{GOV}/.gitignore",
                               ".orchestration/active_intents.yaml"}
    assert os.listdir(repo / GOV)


def test_a_server_started_before_install_writes_no_committable_token(repo: Path) -> None:
    from governance.server import credential

    credential.load_or_create(str(repo))
    assert (repo / GOV / "server.token").exists()
    assert would_add(repo) == {f"{GOV}/.gitignore", ".orchestration/active_intents.yaml"}
