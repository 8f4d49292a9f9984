"""The cycle state: reading with honest fallbacks, setting, advancing."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from governance.commands.accept import accept_state
from governance.errors import StateError
from governance.policy import matrix, state


@pytest.fixture
def compiled(project: Path) -> dict:
    return matrix.load(str(project))


def test_no_state_means_explore_and_says_so(project: Path, compiled: dict) -> None:
    view = state.read_state(str(project), compiled)
    assert (view.state, view.source) == ("EXPLORE", "unset")
    assert "No cycle state is set" in view.note and "governance state set" in view.note
    assert "just " not in view.note  # the project may have no justfile: the hint must work anyway


@pytest.mark.parametrize("content", [b"garbage{", b"[]", b'{"cycle": "x"}', b"\xff\xfe"])
def test_unreadable_state_falls_back_with_a_note(project: Path, compiled: dict,
                                                 content: bytes) -> None:
    path = Path(state.state_path(str(project)))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    accept_state(str(project))  # the user accepted these bytes: they are read as they are
    view = state.read_state(str(project), compiled)
    assert (view.state, view.source) == ("EXPLORE", "fallback")
    assert str(path) in view.note


def test_unknown_phase_falls_back(project: Path, compiled: dict) -> None:
    path = Path(state.state_path(str(project)))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"cycle": "implementation-cycle", "phase": "DANCE"}))
    accept_state(str(project))
    view = state.read_state(str(project), compiled)
    assert view.state == "EXPLORE" and "implementation-cycle/DANCE" in view.note


def test_set_get_next(project: Path, compiled: dict) -> None:
    view = state.set_state(str(project), compiled, "implementation-cycle", "DO", "WORK-064")
    assert (view.state, view.label) == ("DO", "implementation-cycle/DO/WORK-064")
    again = state.read_state(str(project), compiled)
    assert (again.state, again.label, again.source) == ("DO", "implementation-cycle/DO/WORK-064",
                                                        "file")
    assert state.next_phase(compiled, again) == "CHECK"
    mapped = state.set_state(str(project), compiled, "investigation-cycle", "HYPOTHESIZE", "W-1")
    assert mapped.state == "DESIGN"
    mode = Path(state.state_path(str(project))).stat().st_mode & 0o777
    assert mode == 0o600


def test_next_at_the_end_and_without_a_cycle(project: Path, compiled: dict) -> None:
    with pytest.raises(StateError, match="no current cycle"):
        state.next_phase(compiled, state.read_state(str(project), compiled))
    state.set_state(str(project), compiled, "implementation-cycle", "DONE")
    with pytest.raises(StateError, match="already at its last phase DONE"):
        state.next_phase(compiled, state.read_state(str(project), compiled))


def test_unknown_cycle_and_phase_are_refused_with_the_choices(project: Path,
                                                              compiled: dict) -> None:
    with pytest.raises(StateError, match="unknown cycle 'nope'") as exc:
        state.set_state(str(project), compiled, "nope", "DO")
    assert "implementation-cycle" in exc.value.render()
    with pytest.raises(StateError, match="unknown phase 'DOO'") as exc2:
        state.set_state(str(project), compiled, "implementation-cycle", "DOO")
    assert "DO" in exc2.value.render()
    assert not Path(state.state_path(str(project))).exists()


@pytest.mark.parametrize("spec, parts", [
    ("implementation-cycle/DO/WORK-064", ("implementation-cycle", "DO", "WORK-064")),
    ("implementation-cycle/DO", ("implementation-cycle", "DO", "")),
    ("DO", ("", "DO", "")),
    ("c/P/W/with/slashes", ("c", "P", "W/with/slashes")),
])
def test_parse_spec(spec: str, parts: tuple[str, str, str]) -> None:
    assert state.parse_spec(spec) == parts


@pytest.mark.parametrize("spec", ["", "/DO", "c//W", "  "])
def test_parse_spec_rejects(spec: str) -> None:
    with pytest.raises(StateError):
        state.parse_spec(spec)


def test_concurrent_writers_leave_a_whole_file(project: Path, compiled: dict) -> None:
    phases = ["EXPLORE", "DESIGN", "PLAN", "DO", "CHECK", "DONE"]

    def worker(i: int) -> None:
        for j in range(10):
            state.set_state(str(project), compiled, "implementation-cycle", phases[(i + j) % 6])

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    view = state.read_state(str(project), compiled)
    assert view.source == "file" and view.phase in phases
