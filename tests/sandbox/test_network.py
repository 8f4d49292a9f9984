"""Bash's network per state: closed wherever the state blocks or asks an act that reaches the
network, open only to the hosts of the acts it still allows (``sandbox_network`` in the matrix)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from governance.commands.cli import main
from governance.policy import matrix as matrix_module
from governance.policy import seal
from governance.policy.compiler import compile_matrix
from governance.policy.state import state_path
from governance.project import default_matrix_path
from governance.sandbox import config, control
from governance.sandbox.probe import Probe

CAN = Probe(True, "test machine")
INDEX = ["pypi.org", "files.pythonhosted.org", "registry.npmjs.org"]


def default() -> dict[str, Any]:
    path = default_matrix_path()
    compiled, problems = compile_matrix((path, Path(path).read_bytes()), None, "test")
    assert compiled is not None, [p.render() for p in problems]
    return compiled


def settings(project: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((project / ".claude" / "settings.json").read_text())
    return data


def test_every_state_of_the_default_matrix_closes_what_it_blocks_or_asks() -> None:
    matrix = default()
    plan = control.network_rule(matrix, "PLAN")
    # web-fetch is allowed in PLAN, but vcs-push is blocked: closed, and web-fetch opens nothing
    assert matrix["decide"]["PLAN"]["web-fetch"][0] == "allow"
    assert plan == {"closed": True, "closed_by": ["vcs-push"], "allow": INDEX,
                    "opened_by": ["package-install"]}
    assert control.network_rule(matrix, "DO")["closed_by"] == ["vcs-push", "web-fetch"]
    assert control.network_rule(matrix, "CHECK")["closed_by"] == ["vcs-push"]  # asked
    # DONE allows the push but blocks package-install: closed, and no index host opens
    assert control.network_rule(matrix, "DONE") == {
        "closed": True, "closed_by": ["package-install"], "allow": [], "opened_by": []}
    for state in matrix["states"]:
        rule = control.network_rule(matrix, state)
        assert rule["closed"], state
        allowed = matrix["decide"][state]["package-install"][0] in ("allow", "warn")
        assert rule["allow"] == (INDEX if allowed else []), state


def test_a_state_allowing_every_network_act_leaves_the_network_open(project: Path) -> None:
    override = project / ".claude" / "governance" / "activity_matrix.yaml"
    override.parent.mkdir(parents=True)
    override.write_text("extends: default\nrules:\n  vcs-push:\n    DONE: {action: allow}\n"
                        "  package-install:\n    DONE: {action: allow}\n"
                        "sandbox_network:\n  package-install: [pypi.org, '*.pythonhosted.org']\n")
    seal.accept_matrix(str(project), override.read_bytes())
    matrix = matrix_module.load(str(project))
    assert control.network_rule(matrix, "DONE") == {"closed": False, "closed_by": [],
                                                    "allow": [], "opened_by": []}
    # a layer's hosts replace the lower layer's for that primitive
    assert control.network_rule(matrix, "DO")["allow"] == ["pypi.org", "*.pythonhosted.org"]


@pytest.mark.parametrize("host", ["*", "https://pypi.org", "pypi.org:443", "pypi.org/simple",
                                  "PyPI.org", ""])
def test_a_host_that_is_not_a_plain_name_is_an_error_naming_the_key(host: str) -> None:
    path = default_matrix_path()
    text = f"extends: default\nsandbox_network:\n  package-install: [{json.dumps(host)}]\n"
    compiled, problems = compile_matrix((path, Path(path).read_bytes()),
                                        ("/p/.claude/governance/activity_matrix.yaml",
                                         text.encode()), "test")
    assert compiled is None
    rendered = [p.render() for p in problems if p.level == "error"]
    assert any("sandbox_network.package-install[0]" in r and "Fix:" in r for r in rendered)


def test_plan_closes_the_network_and_sends_traffic_to_governances_proxy(project: Path) -> None:
    (project / ".claude" / "settings.json").write_text(json.dumps(
        {"sandbox": {"network": {"allowedDomains": ["example.org"], "httpProxyPort": 3999}}}))
    matrix = default()
    notes = control.turn_on(str(project), "PLAN", matrix, checked=CAN)
    assert any("closed (the state blocks or asks vcs-push), except pypi.org, "
               "files.pythonhosted.org, registry.npmjs.org (for package-install)" in n
               for n in notes)
    assert any(n.startswith("Sandbox proxy on 127.0.0.1:") for n in notes), notes
    port = control.load_manifest(str(project))["proxy"]["port"]
    network = settings(project)["sandbox"]["network"]
    # the proxy carries the state's hosts; "*" refuses every host to a command without it
    assert network == {"allowedDomains": ["example.org"], "deniedDomains": ["*"],
                       "httpProxyPort": port, "socksProxyPort": port}
    assert control.follow_state(str(project), matrix, "DONE") is True
    assert settings(project)["sandbox"]["network"]["deniedDomains"] == ["*"]
    control.turn_off(str(project))
    assert settings(project) == {"sandbox": {"network": {"allowedDomains": ["example.org"],
                                                         "httpProxyPort": 3999}}}


def test_hosts_an_earlier_version_wrote_to_allowed_domains_are_taken_out(project: Path) -> None:
    matrix = default()
    control.turn_on(str(project), "PLAN", matrix, checked=CAN)
    manifest = control.load_manifest(str(project))
    data = settings(project)
    data["sandbox"]["network"]["allowedDomains"] = ["mine.example", *INDEX]
    manifest["added"]["network.allowedDomains"] = list(INDEX)
    assert config.set_network(data, manifest, True)
    assert data["sandbox"]["network"]["allowedDomains"] == ["mine.example"]
    control.turn_off(str(project))


def test_the_rule_between_two_states_is_as_strict_as_both() -> None:
    matrix = default()
    do, done = control.network_rule(matrix, "DO"), control.network_rule(matrix, "DONE")
    assert control.meet(do, done)["allow"] == [] and control.meet(done, do)["closed"]
    opened = {"closed": False, "closed_by": [], "allow": [], "opened_by": []}
    assert control.meet(opened, do) == do and control.meet(do, opened) == do


def test_state_set_closes_claude_codes_proxy_before_the_state_file(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """EXPLORE (open here) -> DO: the "*" is written before the state file says DO."""
    override = project / ".claude" / "governance" / "activity_matrix.yaml"
    override.parent.mkdir(parents=True)
    override.write_text("extends: default\nrules:\n  vcs-push:\n    EXPLORE: {action: allow}\n")
    assert main(["validate", "--project", str(project)]) == 0
    assert main(["state", "set", "--project", str(project), "investigation-cycle", "EXPLORE"]) == 0
    control.turn_on(str(project), "EXPLORE", matrix_module.load(str(project)), checked=CAN)
    assert "deniedDomains" not in settings(project)["sandbox"]["network"]
    assert main(["state", "set", "--project", str(project), "implementation-cycle", "DO"]) == 0
    assert settings(project)["sandbox"]["network"]["deniedDomains"] == ["*"]
    written = (project / ".claude" / "settings.json").stat().st_mtime_ns
    assert written <= Path(state_path(str(project))).stat().st_mtime_ns
    capsys.readouterr()
    assert main(["state", "show", "--project", str(project)]) == 0
    assert "Network: closed to sandboxed commands (the state blocks or asks vcs-push, web-fetch)" \
        ", except pypi.org" in capsys.readouterr().out
    control.turn_off(str(project))


def test_status_says_per_state_what_the_sandbox_closes_and_leaves_to_the_hook(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    matrix = default()
    control.turn_on(str(project), "PLAN", matrix, checked=CAN)
    found = control.status(str(project), matrix, "PLAN", checked=CAN)
    rows = {row["state"]: row for row in found["states"]}
    assert set(rows) == set(matrix["states"])
    assert rows["PLAN"]["closes"][-1] == "network (vcs-push)"
    assert "vcs-push" not in rows["PLAN"]["hook"]
    assert {"destructive", "governance-admin", "exec-config"} <= set(rows["PLAN"]["hook"])
    assert "web-fetch" not in rows["DO"]["hook"] and "package-install" in rows["DONE"]["closes"][-1]
    text = "\n".join(f"{row['state']}: {row['network_text']}" for row in found["states"])
    assert "PLAN: closed (the state blocks or asks vcs-push), except pypi.org" in text
    assert config.network_closed(settings(project))
    capsys.readouterr()
    main(["sandbox", "status", "--project", str(project)])  # exit 1 where no sandbox can start
    out = capsys.readouterr().out
    assert " *EXPLORE: closes writes to governance files" in out  # no state set: EXPLORE
    assert "network (vcs-push)" in out
    assert "    left to the hook: " in out and "Write, Edit, WebFetch and MCP tools" in out
    assert "Governance's proxy for sandboxed commands: 127.0.0.1:" in out and "running" in out
    control.turn_off(str(project))
