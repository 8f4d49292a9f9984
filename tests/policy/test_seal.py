"""The seal: what the CLI accepts, and what the state and the matrix in force are when a governance
file changed some other way."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from governance.commands.cli import main
from governance.policy import matrix, seal, state
from tests.helpers import set_state

ALLOW_WEB = "extends: default\nrules:\n  web-fetch:\n    DO: {action: allow}\n"


def _override(project: Path) -> Path:
    path = project / ".claude" / "governance" / "activity_matrix.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def _forge_state(project: Path, phase: str) -> None:
    """What a script the agent wrote does: rewrite the state file directly."""
    path = Path(state.state_path(str(project)))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(
        {"cycle": "implementation-cycle", "phase": phase, "work_item": "", "state": phase}))


def test_a_fresh_project_has_nothing_to_accept(project: Path) -> None:
    compiled = matrix.load(str(project))
    view = state.read_state(str(project), compiled)
    assert "unaccepted" not in compiled and (view.state, view.source) == ("EXPLORE", "unset")


def test_state_set_is_accepted_as_it_happens(project: Path) -> None:
    set_state(project, "implementation-cycle/DO/WORK-1")
    entry = seal.accepted_state(seal.read(str(project)))
    assert entry is not None and "previous_sha256" not in entry  # the transition is over
    assert entry["sha256"] == seal.digest(Path(state.state_path(str(project))).read_bytes())
    view = state.read_state(str(project), matrix.load(str(project)))
    assert (view.label, view.source, view.note) == ("implementation-cycle/DO/WORK-1", "file", "")


def test_a_forged_state_is_not_acted_on(project: Path) -> None:
    set_state(project, "implementation-cycle/DO/WORK-1")
    _forge_state(project, "DONE")
    view = state.read_state(str(project), matrix.load(str(project)))
    assert (view.state, view.label, view.source) == ("DO", "implementation-cycle/DO/WORK-1",
                                                     "sealed")
    assert "outside `governance state set`" in view.note and "governance state set" in view.note
    assert "keeps the accepted state implementation-cycle/DO/WORK-1" in view.note


def test_a_removed_state_file_keeps_the_accepted_state(project: Path) -> None:
    set_state(project, "implementation-cycle/DO")
    Path(state.state_path(str(project))).unlink()
    view = state.read_state(str(project), matrix.load(str(project)))
    assert (view.state, view.source) == ("DO", "sealed") and "was removed" in view.note


def test_without_an_accepted_state_the_strictest_state_is_used(project: Path) -> None:
    compiled = matrix.load(str(project))
    strictest = compiled["strictest"]
    counts = {s: len(compiled["summary"][s]["blocked"]) for s in compiled["states"]}
    assert counts[strictest] == max(counts.values())
    _forge_state(project, "DONE")
    view = state.read_state(str(project), compiled)
    assert (view.state, view.source) == (strictest, "sealed")
    assert "most restrictive state" in view.note
    # deleting the seal as well changes nothing
    set_state(project, "implementation-cycle/DONE")
    Path(seal.seal_path(str(project))).unlink()
    assert state.read_state(str(project), matrix.load(str(project))).state == strictest


def test_a_forged_override_is_not_used_until_validated(project: Path,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    set_state(project, "implementation-cycle/DO")
    _override(project).write_text(ALLOW_WEB)
    compiled = matrix.load(str(project))
    assert compiled["decide"]["DO"]["web-fetch"][0] == "block"  # the packaged default's rule
    assert "without `governance validate`" in compiled["unaccepted"]
    assert "the packaged default alone" in compiled["unaccepted"]
    assert main(["validate", "--project", str(project)]) == 0
    assert "Accepted: governance now uses" in capsys.readouterr().out
    compiled = matrix.load(str(project))
    assert compiled["decide"]["DO"]["web-fetch"][0] == "allow" and "unaccepted" not in compiled


def test_the_accepted_override_stays_in_force_when_it_is_replaced(project: Path) -> None:
    path = _override(project)
    path.write_text(ALLOW_WEB)
    assert main(["validate", "--project", str(project)]) == 0
    path.write_text(ALLOW_WEB.replace("allow", "block") + "# tightened by hand\n")
    compiled = matrix.load(str(project))
    assert compiled["decide"]["DO"]["web-fetch"][0] == "allow"
    assert "the version accepted last" in compiled["unaccepted"]
    # an invalid replacement does not break governance either: the accepted version stays
    path.write_text("rules: [broken\n")
    assert matrix.load(str(project))["decide"]["DO"]["web-fetch"][0] == "allow"
    # nor does removing the file, nor every cache
    path.unlink()
    for cache in (path.parent / ".cache").iterdir():
        cache.unlink()
    compiled = matrix.load(str(project))
    assert compiled["decide"]["DO"]["web-fetch"][0] == "allow" and "was removed" in \
        compiled["unaccepted"]
    # a Bash call needs the accepted shell patterns too, even rebuilt from the copy
    assert matrix.load_shell(str(project), compiled) is not None


def test_a_tampered_copy_of_the_accepted_override_is_not_trusted(project: Path) -> None:
    path = _override(project)
    path.write_text(ALLOW_WEB)
    assert main(["validate", "--project", str(project)]) == 0
    Path(seal.matrix_copy_path(str(project))).write_text(ALLOW_WEB + "# forged\n")
    path.write_text(ALLOW_WEB + "# forged\n")
    compiled = matrix.load(str(project))
    assert compiled["decide"]["DO"]["web-fetch"][0] == "block"
    assert "the accepted copy is gone too" in compiled["unaccepted"]


def test_removing_the_override_is_accepted_by_validate(project: Path) -> None:
    path = _override(project)
    path.write_text(ALLOW_WEB)
    assert main(["validate", "--project", str(project)]) == 0
    path.unlink()
    assert "unaccepted" in matrix.load(str(project))
    assert main(["validate", "--project", str(project)]) == 0
    assert seal.accepted_override(seal.read(str(project))) == ""
    assert not Path(seal.matrix_copy_path(str(project))).exists()
    assert "unaccepted" not in matrix.load(str(project))


def test_validate_file_checks_without_accepting(project: Path, tmp_path: Path) -> None:
    other = tmp_path / "candidate.yaml"
    other.write_text(ALLOW_WEB)
    assert main(["validate", "--project", str(project), "--file", str(other)]) == 0
    assert seal.read(str(project)) is None


def test_accept_takes_everything_as_it_is(project: Path, capsys: pytest.CaptureFixture[str]
                                          ) -> None:
    _forge_state(project, "DONE")
    _override(project).write_text(ALLOW_WEB)
    assert main(["accept", "--project", str(project)]) == 0
    said = capsys.readouterr().out
    assert "Accepted: governance now uses" in said and "Accepted the cycle state file" in said
    compiled = matrix.load(str(project))
    view = state.read_state(str(project), compiled)
    assert "unaccepted" not in compiled and (view.state, view.source) == ("DONE", "file")


def test_accept_refuses_an_invalid_matrix_and_accepts_nothing(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _forge_state(project, "DONE")
    _override(project).write_text("rules: [broken\n")
    assert main(["accept", "--project", str(project)]) == 1
    assert "nothing was accepted" in capsys.readouterr().out
    assert seal.read(str(project)) is None


def test_no_reader_sees_a_state_set_half_done(project: Path) -> None:
    """While `state set` runs, every read sees the old or the new state, never an alarm."""
    compiled = matrix.load(str(project))
    set_state(project, "implementation-cycle/EXPLORE")
    seen: list[tuple[str, str]] = []
    stop = threading.Event()

    def read() -> None:
        while not stop.is_set():
            view = state.read_state(str(project), matrix.load(str(project)))
            seen.append((view.state, view.source))

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for phase in ["DESIGN", "PLAN", "DO", "CHECK", "DONE"] * 4:
            state.set_state(str(project), compiled, "implementation-cycle", phase)
    finally:
        stop.set()
        reader.join()
    assert seen and {source for _state, source in seen} == {"file"}
