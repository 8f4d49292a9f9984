"""``governance accept`` records the governance files as they are, or nothing: a file it cannot
accept (a state file that names no state, an invalid matrix override, settings that are not JSON)
is refused with a sentence naming the file, the problem and the fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from governance.commands.cli import main
from governance.policy import seal, state
from tests.helpers import install, set_state

GOV = Path(".claude") / "governance"


@pytest.fixture
def installed(project: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    install(project)
    set_state(project, "implementation-cycle/DO/WORK-1")
    capsys.readouterr()
    return project


def accept(project: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["accept", "--project", str(project)])
    return code, capsys.readouterr().out


@pytest.mark.parametrize("content, problem", [
    (b"garbage{", "is not valid JSON"),
    (b"\xff\xfe", "is not valid JSON"),
    (b"[]", "does not name a phase"),
    (b'{"cycle": "implementation-cycle"}', "does not name a phase"),
    (b'{"cycle": "implementation-cycle", "phase": "DANCE"}',
     "names the phase implementation-cycle/DANCE, which the activity matrix does not know"),
    (b'{"phase": "NAPPING"}', "names the phase NAPPING"),
])
def test_a_state_file_that_names_no_state_is_refused(
        installed: Path, capsys: pytest.CaptureFixture[str], content: bytes, problem: str) -> None:
    before = seal.read(str(installed))
    path = Path(state.state_path(str(installed)))
    path.write_bytes(content)
    code, said = accept(installed, capsys)
    assert code == 1
    assert f"The state file {path} {problem}" in said
    assert "governance state set CYCLE/PHASE/WORK-ID" in said and "Nothing was accepted" in said
    assert seal.read(str(installed)) == before          # nothing recorded, not even the matrix
    from governance.policy import matrix

    assert state.read_state(str(installed), matrix.load(str(installed))).state == "DO"


def test_an_invalid_matrix_override_is_refused(installed: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    before = seal.read(str(installed))
    (installed / GOV / "activity_matrix.yaml").write_text("rules:\n  web-fetch: [nonsense\n")
    code, said = accept(installed, capsys)
    assert code == 1 and "activity_matrix.yaml" in said and "nothing was accepted" in said
    assert seal.read(str(installed)) == before


@pytest.mark.parametrize("name", ["settings.json", "settings.local.json"])
def test_settings_that_are_not_json_are_refused(installed: Path, capsys: pytest.CaptureFixture[str],
                                                name: str) -> None:
    before = seal.read(str(installed))
    path = installed / ".claude" / name
    path.write_text("{ not json")
    code, said = accept(installed, capsys)
    assert code == 1
    assert f"{path}: settings are not valid JSON" in said
    assert "Fix: repair the file, then run `governance accept` again." in said
    assert seal.read(str(installed)) == before
    assert path.read_text() == "{ not json"


def test_files_that_can_be_accepted_are(installed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    Path(state.state_path(str(installed))).write_text(
        json.dumps({"cycle": "implementation-cycle", "phase": "CHECK", "work_item": "W-2"}))
    code, said = accept(installed, capsys)
    assert code == 0 and "Accepted the cycle state file" in said
    from governance.policy import matrix

    view = state.read_state(str(installed), matrix.load(str(installed)))
    assert (view.state, view.source) == ("CHECK", "file")


def test_install_does_not_accept_a_state_file_that_names_no_state(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = project / GOV / "state.json"
    path.parent.mkdir(parents=True)
    path.write_text("garbage{")
    install(project)
    said = capsys.readouterr().out
    assert f"WARNING: The state file {path} is not valid JSON" in said
    assert seal.accepted_state(seal.read(str(project))) is None   # the strictest state is used
