"""``governance validate`` checks the knowledge sources too: the configuration, SOPs that do not
parse, and credentials sections that hold a secret instead of where to find it."""

from __future__ import annotations

from pathlib import Path

import pytest

from governance.commands.cli import main
from governance.knowledge.validation import check


def sop(project: Path, name: str, text: str) -> Path:
    folder = project / ".claude" / "sops"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    return path


def test_sound_sources_pass(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sop(project, "docker-deploy.ai.sop", "## Credentials\nRegistry token: 1Password, vault infra.\n")
    assert main(["validate", "--project", str(project)]) == 0
    assert "knowledge: OK: 1 SOP(s), 0 warning(s)" in capsys.readouterr().out


def test_a_broken_sop_fails_validate_and_the_others_still_serve(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sop(project, "good.ai.sop", "## Gotchas\nPort 8080 is taken.\n")
    bad = sop(project, "bad.ai.sop", "---\nmatch:\n  clouds: [aws]\n---\n## Gotchas\nx\n")
    assert main(["validate", "--project", str(project)]) == 1
    out = capsys.readouterr().out
    assert f"error: {bad} at key match.clouds: unknown match key 'clouds'" in out
    assert "the SOPs that parse (1) still serve" in out


def test_a_secret_in_a_credentials_section_is_a_warning(project: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    path = sop(project, "deploy.ai.sop",
               "## Credentials\nUse token=ghp_abcdefghijklmnopqrstuvwxyz0123456789 for the registry.\n")
    report = check(str(project))
    assert report.errors == [] and report.sops == 1
    assert report.warnings and report.warnings[0].startswith(f"{path} at key credentials")
    assert "ghp_" not in report.warnings[0]
    assert main(["validate", "--project", str(project)]) == 0
    assert main(["validate", "--project", str(project), "--strict"]) == 1
    capsys.readouterr()


def test_a_broken_knowledge_configuration_fails_validate(project: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    config = project / ".claude" / "governance" / "knowledge.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("enforcement:\n  level: loud\n")
    assert main(["validate", "--project", str(project)]) == 1
    assert f"error: {config} at key enforcement.level" in capsys.readouterr().out
