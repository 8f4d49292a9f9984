"""``governance explain-command``: acts, segments and the decision in the current state."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from governance.commands.cli import main
from tests.helpers import set_state


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert main(list(argv)) == 0
    return capsys.readouterr().out


def test_text_output_lists_acts_and_decision(project: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    set_state(project, "implementation-cycle/DO/w1")
    out = run(capsys, "explain-command", "--project", str(project),
              "git commit -m 'use curl later' && curl https://example.com")
    assert "Segments:\n  git commit -m 'use curl later'\n  curl https://example.com" in out
    assert "vcs-commit" in out and "web-fetch" in out
    assert "State:     DO" in out
    assert "Decision:  block (web-fetch: curl https://example.com)" in out


def test_json_output_in_a_given_state(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = run(capsys, "explain-command", "--project", str(project), "--state", "EXPLORE",
              "--json", "echo x > .claude/settings.json")
    result = json.loads(out)
    assert result["state"] == "EXPLORE"
    assert {a["primitive"] for a in result["acts"]} == {"file-write", "governance-admin"}
    assert result["decision"]["action"] == "block"
    assert result["decision"]["primitive"] == "governance-admin"


def test_unparseable_command_is_shown_as_unknown(project: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    out = run(capsys, "explain-command", "--project", str(project), "--json", "echo $(")
    result = json.loads(out)
    assert result["segments"][0].startswith("(not parsed:")
    assert [a["primitive"] for a in result["acts"]] == ["shell-unknown"]


def test_a_request_to_this_machine_is_local_not_the_web(project: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    set_state(project, "implementation-cycle/DO/w1")
    out = run(capsys, "explain-command", "--project", str(project), "--json",
              "sleep 2 && curl -sf http://127.0.0.1:8001/healthz")
    result = json.loads(out)
    assert {a["primitive"] for a in result["acts"]} == {"local-request"}   # sleep only reads
    local = next(a for a in result["acts"] if a["primitive"] == "local-request")
    assert "127.0.0.1, this machine's loopback address" in local["reason"]
    assert result["decision"]["action"] == "allow"


@pytest.mark.parametrize("command", [
    "curl -sf https://example.com/healthz",                       # a remote host
    "curl -x http://127.0.0.1:8080 https://evil.example/",       # a local proxy to a remote host
    "curl --resolve localhost:80:203.0.113.9 http://localhost/",  # localhost mapped elsewhere
    "curl -sf \"$API/healthz\"",                                  # a host known only at run time
])
def test_a_request_that_may_leave_the_machine_is_still_web_fetch(
        project: Path, capsys: pytest.CaptureFixture[str], command: str) -> None:
    set_state(project, "implementation-cycle/DO/w1")
    result = json.loads(run(capsys, "explain-command", "--project", str(project), "--json", command))
    assert "local-request" not in {a["primitive"] for a in result["acts"]}
    assert result["decision"]["primitive"] == "web-fetch"
    assert result["decision"]["action"] == "block"


def test_the_projects_dev_hosts_are_local(project: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    from governance.policy import seal

    override = project / ".claude" / "governance" / "activity_matrix.yaml"
    override.parent.mkdir(parents=True)
    override.write_text("extends: default\nshell:\n  local_hosts: ['*.dev.internal']\n")
    seal.accept_matrix(str(project), override.read_bytes())
    set_state(project, "implementation-cycle/DO/w1")
    quiet = json.loads(run(capsys, "explain-command", "--project", str(project), "--json",
                           "http POST api.dev.internal:8000/items name=x"))
    assert quiet["decision"]["action"] == "allow"
    assert "one of the project's dev hosts" in quiet["acts"][0]["reason"]
    loud = json.loads(run(capsys, "explain-command", "--project", str(project), "--json",
                          "http POST api.dev.internal.evil.example/items name=x"))
    assert loud["decision"]["primitive"] == "web-fetch"


@pytest.mark.parametrize(("state", "command", "primitive", "action"), [
    ("implementation-cycle/DO/w1", "helm upgrade --install api ./chart -n dev", "deploy-dev",
     "allow"),
    ("implementation-cycle/DO/w1", "helm upgrade --install api ./chart -n staging",
     "deploy-staging", "ask"),
    ("implementation-cycle/DO/w1", "kubectl apply -f k8s/ --context prod-eu",
     "deploy-production", "block"),
    ("implementation-cycle/DO/w1", "vercel --prod", "deploy-production", "block"),
    ("implementation-cycle/DONE/w1", "pulumi up -s acme/prod --yes", "deploy-production", "ask"),
    ("implementation-cycle/DONE/w1", "helm upgrade --install api ./chart -n staging",
     "deploy-staging", "ask"),
    ("implementation-cycle/DO/w1", "terraform apply -auto-approve", "deploy", "ask"),
])
def test_a_deploy_is_decided_by_its_environment(
        project: Path, capsys: pytest.CaptureFixture[str], state: str, command: str,
        primitive: str, action: str) -> None:
    set_state(project, state)
    result = json.loads(run(capsys, "explain-command", "--project", str(project), "--json",
                            command))
    assert [a["primitive"] for a in result["acts"]] == [primitive]
    assert "the environment is" in result["acts"][0]["reason"]
    assert result["decision"]["primitive"] == primitive
    assert result["decision"]["action"] == action
