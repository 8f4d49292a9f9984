"""The organisation's layer at the hook, run exactly as installed, in a private /etc
(``tests/managed_root.py``): it denies what it locks although the project allows it, names itself,
and fails closed on an org file someone other than root could have written or that does not parse.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests import managed_root
from tests.helpers import accept, hook_command, install, recorded, set_state
from tests.managed_root import ManagedRoot

ORG_MESSAGE = "ORG-7: recursive deletes need the release manager."
ORG_MATRIX = f"""\
version: 1
rules:
  destructive:
    _all_states: {{action: block, message: "{ORG_MESSAGE}"}}
"""
PROJECT_MATRIX = """\
extends: default
rules:
  destructive:
    DO: {action: allow}
"""


@pytest.fixture
def root(tmp_path: Path) -> ManagedRoot:
    managed_root.require()
    return ManagedRoot(tmp_path / "managed")


@pytest.fixture
def governed(project: Path) -> Path:
    """A project installed, in DO, whose accepted matrix allows destructive acts there."""
    install(project)
    (project / ".claude" / "governance" / "activity_matrix.yaml").write_text(PROJECT_MATRIX)
    accept(project)
    set_state(project, "implementation-cycle/DO")
    accept(project)
    return project


def _org(root: ManagedRoot, text: str = ORG_MATRIX, mode: int = 0o644) -> Path:
    root.org.mkdir(parents=True, exist_ok=True)
    for folder in (root.managed, root.org):
        folder.chmod(0o755)
    path = root.org / "activity_matrix.yaml"
    path.write_text(text)
    path.chmod(mode)
    return path


def _bash(root: ManagedRoot, project: Path, command: str = "rm -rf src",
          call: str = "toolu_org_1") -> dict[str, Any]:
    payload = recorded("PreToolUse-Bash.json", project)
    payload["tool_input"] = {"command": command, "description": "x"}
    payload["tool_use_id"] = call
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    done = root.run(["sh", "-c", hook_command(project)], env=env, input=json.dumps(payload),
                    cwd=str(project))
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def _ledger(project: Path) -> list[dict[str, Any]]:
    path = project / ".claude" / "governance" / "ledger.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_the_org_floor_denies_what_the_project_allows_and_says_so(
        root: ManagedRoot, governed: Path) -> None:
    assert "permissionDecision" not in _bash(root, governed)["hookSpecificOutput"]  # no org yet
    _org(root)
    answer = _bash(root, governed, call="toolu_org_2")
    out = answer["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny", answer
    reason = out["permissionDecisionReason"]
    assert reason.startswith("[STATE: DO] [ORG] Blocked: Bash (destructive) `rm -rf src`:"), reason
    assert ORG_MESSAGE in reason and "/etc/claude-code/governance/activity_matrix.yaml" in reason
    assert f"[ORG] Blocked: Bash (destructive) `rm -rf src`: {ORG_MESSAGE}" in \
        out["additionalContext"]
    (record,) = [r for r in _ledger(governed) if r.get("tool_use_id") == "toolu_org_2"]
    assert record["layer"] == "org" and record["decision"] == "deny"
    assert record["layers"]["winner"] == "org"
    assert record["layers"]["project"]["action"] == "allow"
    assert record["layers"]["org"]["rule"] == "rules.destructive._all_states"
    # a call the org does not lock is the project's as before
    quiet = _bash(root, governed, "ls -la", call="toolu_org_3")["hookSpecificOutput"]
    assert "permissionDecision" not in quiet and "[ORG]" not in quiet["additionalContext"]


ORG_GUARDRAILS = """\
guardrails:
  - id: org-no-release-tags
    name: Release tags
    severity: block
    condition: {field: command, matches: 'git tag release-'}
    message: ORG-9 release tags are made by the release pipeline.
"""
PROJECT_GUARDRAILS = """\
guardrails:
  - id: no-scratch-tags
    name: Scratch tags
    severity: block
    condition: {field: command, matches: 'git tag scratch-'}
    message: Scratch tags clutter the remote.
"""


def test_an_org_guardrails_deny_names_the_organisation_and_a_projects_does_not(
        root: ManagedRoot, governed: Path) -> None:
    """A tool-call guardrail of the organisation's guardrails.yaml denies with ``[ORG]``, its rule
    and its file; the project's own guardrail denies as the project's."""
    _org(root)
    (root.org / "guardrails.yaml").write_text(ORG_GUARDRAILS)
    (root.org / "guardrails.yaml").chmod(0o644)
    (governed / ".claude" / "governance" / "guardrails.yaml").write_text(PROJECT_GUARDRAILS)
    out = _bash(root, governed, "git tag release-7", call="toolu_org_g1")["hookSpecificOutput"]
    reason = out["permissionDecisionReason"]
    assert out["permissionDecision"] == "deny", out
    assert reason.startswith("[STATE: DO] [ORG] Blocked: Bash"), reason
    assert "ORG-9 release tags are made by the release pipeline." in reason
    assert ("rule: guardrails.org-no-release-tags of the organisation, in "
            "/etc/claude-code/governance/guardrails.yaml") in reason, reason
    (record,) = [r for r in _ledger(governed) if r.get("tool_use_id") == "toolu_org_g1"]
    assert record["layer"] == "org" and record["decision"] == "deny"
    own = _bash(root, governed, "git tag scratch-1", call="toolu_org_g2")["hookSpecificOutput"]
    assert own["permissionDecision"] == "deny", own
    assert "[ORG]" not in own["permissionDecisionReason"], own
    assert "Scratch tags clutter the remote." in own["permissionDecisionReason"]
    (record,) = [r for r in _ledger(governed) if r.get("tool_use_id") == "toolu_org_g2"]
    assert "layer" not in record and record["decision"] == "deny"


def test_a_projects_guardrail_that_blocks_after_the_org_matrix_warned_is_the_projects(
        root: ManagedRoot, governed: Path) -> None:
    """The organisation's matrix warns on the call; the project's guardrail then blocks it: the
    deny is the project's (no ``[ORG]``, its own rule and file), not the organisation's."""
    _org(root, "version: 1\nrules:\n  shell-read:\n    DO: {action: warn, message: ORG-W}\n")
    (governed / ".claude" / "governance" / "guardrails.yaml").write_text(PROJECT_GUARDRAILS)
    out = _bash(root, governed, "git tag scratch-2", call="toolu_org_g3")["hookSpecificOutput"]
    reason = out["permissionDecisionReason"]
    assert out["permissionDecision"] == "deny", out
    assert "[ORG]" not in reason and "Scratch tags clutter the remote." in reason, reason
    assert "(rule: guardrails.no-scratch-tags)" in reason, reason
    (record,) = [r for r in _ledger(governed) if r.get("tool_use_id") == "toolu_org_g3"]
    assert "layer" not in record and record["decision"] == "deny"
    warned = _bash(root, governed, "git tag -l", call="toolu_org_g4")
    assert "[ORG] Warning" in warned["hookSpecificOutput"]["additionalContext"], warned


@pytest.mark.parametrize("fault", ["world-writable", "group-writable folder", "symlink",
                                   "not root's", "broken"])
def test_an_org_file_it_cannot_trust_or_read_fails_closed(
        root: ManagedRoot, governed: Path, tmp_path: Path, fault: str) -> None:
    path = _org(root)
    expect = {"world-writable": "writable by its group and others (mode 666)",
              "group-writable folder": "folder is writable by its group",
              "symlink": "not a regular file",
              "not root's": "owned by uid 65534, not root",
              "broken": "YAML syntax error"}[fault]
    if fault == "world-writable":
        path.chmod(0o666)
    elif fault == "group-writable folder":
        root.org.chmod(0o775)
    elif fault == "symlink":
        elsewhere = tmp_path / "elsewhere.yaml"
        elsewhere.write_text(ORG_MATRIX)
        path.unlink()
        path.symlink_to(elsewhere)
    elif fault == "not root's":
        if os.geteuid() != 0:
            pytest.skip("giving the org file to another owner needs root outside the namespace")
        os.chown(path, 65534, 65534)
    else:
        path.write_text("rules: [unclosed\n")
    # even a call nobody restricts is denied: the org's rules can be neither applied nor left out
    answer = _bash(root, governed, "ls -la", call="toolu_org_fault")
    out = answer["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny", answer
    assert expect in out["permissionDecisionReason"], out["permissionDecisionReason"]
    assert "fail closed" in out["permissionDecisionReason"] or fault == "broken"
    assert expect in answer["systemMessage"]
    (record,) = [r for r in _ledger(governed) if r.get("org_refused")]
    assert record["tool_use_id"] == "toolu_org_fault" and record["decision"] == "deny"
    assert record["layer"] == "org" and expect in record["org_refused"]


def test_validate_lists_each_project_cell_that_tries_to_loosen_the_org(
        root: ManagedRoot, governed: Path) -> None:
    _org(root)
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    repo = Path(__file__).resolve().parents[2]
    env["PYTHONPATH"] = str(repo)
    done = root.run([sys.executable, "-m", "governance.commands", "validate", "--project",
                     str(governed)], env=env, cwd=str(governed))
    assert done.returncode == 0, done.stdout + done.stderr
    text = done.stdout
    assert "warning:" in text and "at key rules.destructive.DO" in text, text
    assert "looser than the organisation's rule rules.destructive._all_states (block)" in text
    assert "organisation: /etc/claude-code/governance/activity_matrix.yaml is a floor" in text


ORG_GUARDRAIL = """version: 1
guardrails:
  - id: org-no-release-script
    name: No release script outside the release pipeline
    severity: block
    condition: {field: command, matches: 'release\\.sh'}
    message: The organisation forbids running the release script by hand.
"""


def test_org_guardrails_hold_though_the_project_disables_or_redefines_them(
        root: ManagedRoot, governed: Path) -> None:
    _org(root)
    guardrails = root.org / "guardrails.yaml"
    guardrails.write_text(ORG_GUARDRAIL)
    guardrails.chmod(0o644)
    (governed / ".claude" / "governance" / "guardrails.yaml").write_text(
        "version: 1\ndisable: [org-no-release-script]\nguardrails:\n  - id: org-no-release-script\n"
        "    name: harmless\n    severity: warn\n    condition: {field: tool, '==': Nothing}\n"
        "    message: nothing\n")
    out = _bash(root, governed, "cat release.sh", call="toolu_org_g")["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny", out
    assert "The organisation forbids running the release script by hand." in \
        out["permissionDecisionReason"]
    # made writable by others, it fails closed like the org's matrix
    guardrails.chmod(0o666)
    out = _bash(root, governed, "ls", call="toolu_org_g2")["hookSpecificOutput"]
    assert out["permissionDecision"] == "deny" and "not trusted" in \
        out["permissionDecisionReason"]


def test_doctor_names_both_layers_and_the_cells_the_org_overrules(
        root: ManagedRoot, governed: Path) -> None:
    _org(root)
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    done = root.run([sys.executable, "-m", "governance.commands", "doctor", "--project",
                     str(governed)], env=env, cwd=str(governed))
    text = done.stdout
    assert "layers: the organisation's /etc/claude-code/governance/activity_matrix.yaml is a " \
           "floor over the project's" in text, text + done.stderr
    assert "1 project setting(s) it overrules" in text
    assert "at key rules.destructive.DO: allow is looser than the organisation's rule" in text


def test_an_org_sop_wins_a_name_clash_with_the_project(root: ManagedRoot, governed: Path) -> None:
    sops = root.org / "sops"
    sops.mkdir(parents=True)
    (sops / "deploy.ai.sop").write_text("---\nmatch: {commands: [deploy]}\n---\n## Gotchas\n"
                                        "ORG-SOP: the organisation's deploy checklist.\n")
    (governed / ".claude" / "sops").mkdir()
    (governed / ".claude" / "sops" / "deploy.ai.sop").write_text(
        "---\nmatch: {commands: [deploy]}\n---\n## Gotchas\nthe project's own.\n")
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    script = ("import sys, json; from governance.knowledge.sop import load_all; "
              "print(json.dumps({s.name: s.path for s in load_all(sys.argv[1])[0]}))")
    done = root.run([sys.executable, "-c", script, str(governed)], env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["deploy"] == "/etc/claude-code/governance/sops/deploy.ai.sop"


@pytest.mark.parametrize("fault", ["group-writable folder", "not root's", "symlink"])
def test_an_org_sop_someone_else_could_have_written_is_not_read(
        root: ManagedRoot, governed: Path, tmp_path: Path, fault: str) -> None:
    """The organisation's SOPs are trusted as its matrix is: a folder or file someone other than
    root could write is not read (the project's SOP of that name serves) and is reported."""
    sops = root.org / "sops"
    sops.mkdir(parents=True)
    org_sop = sops / "deploy.ai.sop"
    org_sop.write_text("---\nmatch: {commands: [deploy]}\n---\n## Gotchas\nORG-SOP.\n")
    (governed / ".claude" / "sops").mkdir()
    (governed / ".claude" / "sops" / "deploy.ai.sop").write_text(
        "---\nmatch: {commands: [deploy]}\n---\n## Gotchas\nthe project's own.\n")
    if fault == "group-writable folder":
        sops.chmod(0o775)
        expect = ("/etc/claude-code/governance/sops", "the folder is writable by its group")
    elif fault == "not root's":
        if os.geteuid() != 0:
            pytest.skip("giving the SOP to another owner needs root outside the namespace")
        os.chown(org_sop, 65534, 65534)
        expect = ("/etc/claude-code/governance/sops/deploy.ai.sop", "owned by uid 65534")
    else:
        elsewhere = tmp_path / "elsewhere.ai.sop"
        elsewhere.write_text(org_sop.read_text())
        org_sop.unlink()
        org_sop.symlink_to(elsewhere)
        expect = ("/etc/claude-code/governance/sops/deploy.ai.sop", "not a regular file")
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    script = ("import sys, json; from governance.knowledge.sop import load_all; "
              "sops, problems = load_all(sys.argv[1]); print(json.dumps("
              "[{s.name: s.path for s in sops}, [[p.file, p.render()] for p in problems]]))")
    done = root.run([sys.executable, "-c", script, str(governed)], env=env)
    assert done.returncode == 0, done.stderr
    served, problems = json.loads(done.stdout)
    assert served["deploy"] == str(governed / ".claude" / "sops" / "deploy.ai.sop")
    assert [file for file, _ in problems] == [expect[0]], problems
    assert expect[1] in problems[0][1] and "chmod go-w" in problems[0][1], problems


def test_explain_prints_both_layers_and_the_agent_cannot_write_the_org_layer(
        root: ManagedRoot, governed: Path) -> None:
    _org(root)
    _bash(root, governed, call="toolu_org_explain")
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_PROJECT_DIR"}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    import subprocess

    shown = subprocess.run([sys.executable, "-m", "governance.commands", "explain",
                            "toolu_org_explain", "--project", str(governed)], env=env,
                           capture_output=True, text=True, timeout=60, check=False).stdout
    assert "organisation layer  block by rules.destructive._all_states in " \
           "/etc/claude-code/governance/activity_matrix.yaml" in " ".join(shown.split("  ")) \
           or "block by rules.destructive._all_states" in shown, shown
    assert "allow by rules.destructive.DO in" in shown and "in force" in shown
    assert "the organisation's layer (a project cannot loosen it)" in shown
    # the managed folder is governance's own: a tool call that writes there is denied
    from governance.policy.layer import GovernanceLayer

    layer = GovernanceLayer(str(governed))
    for path in ("/etc/claude-code/governance/activity_matrix.yaml",
                 "/etc/claude-code/managed-settings.json"):
        decision = layer.decide("Write", {"file_path": path, "content": "rules: {}\n"})
        assert decision.denies and decision.primitive == "governance-admin", path
    for command in ("chmod 666 /etc/claude-code/governance/activity_matrix.yaml",
                    "echo 'rules: {}' > /etc/claude-code/governance/activity_matrix.yaml",
                    "mv /tmp/x.yaml /etc/claude-code/governance/activity_matrix.yaml"):
        decision = layer.decide("Bash", {"command": command})
        assert decision.denies and decision.primitive == "governance-admin", command
