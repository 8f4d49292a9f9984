"""The cycle state: which cycle, phase and work item a project is in, and the state that maps to.

Reading is on the hook's hot path (``jsoncodec`` and ``os`` only, no lock: writes are atomic renames).
Writing (``set_state``, ``next_state``) is for the CLI: validated against the matrix, done under a
lock (filelock on ``state.json.lock``) with a temp file and ``system.replace``, and recorded in the
seal as it happens. A state file whose bytes the seal did not record was written some other way:
governance keeps the accepted state (or, where none was ever accepted, the matrix's most
restrictive state) and says so in the view's ``note``.
"""

from __future__ import annotations

import time

from governance import jsoncodec, system
from governance.errors import StateError
from governance.policy import seal
from governance.project import governance_dir, read_bytes, temp_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

STATE_FILE = "state.json"
# The state file's format (its ``version`` key; a file without one is format 1). A later format is
# not guessed at: governance says so, names the fix, and uses the fallback state.
STATE_VERSION = 1


class StateView:
    """The state a project is in, and where that answer came from."""

    __slots__ = ("cycle", "note", "phase", "source", "state", "work_item")

    def __init__(self, state: str, cycle: str = "", phase: str = "", work_item: str = "",
                 source: str = "file", note: str = "") -> None:
        self.state = state
        self.cycle = cycle
        self.phase = phase
        self.work_item = work_item
        self.source = source  # file | unset | fallback | sealed (a change not accepted)
        self.note = note

    @property
    def label(self) -> str:
        """``cycle/PHASE/WORK`` as far as known, else the bare state."""
        parts = [p for p in (self.cycle, self.phase, self.work_item) if p]
        return "/".join(parts) if self.cycle else (self.phase or self.state)

    def as_record(self) -> dict[str, str]:
        return {"state": self.state, "cycle": self.cycle, "phase": self.phase,
                "work_item": self.work_item, "state_source": self.source}


def state_path(project_dir: str) -> str:
    return system.join(governance_dir(project_dir), STATE_FILE)


def resolve(matrix: dict[str, Any], cycle: str, phase: str) -> str | None:
    """The state for ``cycle/phase``, or None when the matrix does not know it."""
    if cycle:
        mapped = matrix["phase_to_state"].get(f"{cycle}/{phase}")
        if mapped:
            return str(mapped)
    return phase if phase in matrix["states"] else None


def read_state(project_dir: str, matrix: dict[str, Any]) -> StateView:
    """The state in force: the state file as last accepted (see the module's docstring)."""
    path = state_path(project_dir)
    record = matrix["seal"] if "seal" in matrix else seal.read(project_dir)
    for attempt in range(2):  # a mismatch is read again once: `state set` may be mid-way
        if attempt:
            record = seal.read(project_dir)
        try:
            data: bytes | None = read_bytes(path)
        except FileNotFoundError:
            data = None
        except OSError as exc:
            return _view(matrix, path, None, exc)
        accepted = seal.accepted_state(record)
        if data is None and accepted is None:
            return _view(matrix, path, None)
        found = seal.digest(data) if data is not None else ""
        if accepted is not None and found in (accepted["sha256"],
                                              accepted.get("previous_sha256")):
            return _view(matrix, path, data)
    what = "was removed" if data is None else "was written"
    how = ("Set the state you want from a terminal: `governance state set CYCLE PHASE WORK-ID` "
           "(or `governance accept` to accept the file as it is).")
    if accepted is None:
        strictest = str(matrix.get("strictest") or matrix["settings"]["fallback_state"])
        return StateView(strictest, source="sealed",
                         note=f"The state file {path} {what} outside `governance state set` and "
                              f"no state was ever accepted here, so governance uses the most "
                              f"restrictive state {strictest}. {how}")
    content = accepted.get("content")
    kept = _view(matrix, path, None if content is None else jsoncodec.dumps(content).encode())
    kept.source = "sealed"
    kept.note = (f"The state file {path} {what} outside `governance state set`, so governance "
                 f"keeps the accepted state {kept.label}. {how}")
    return kept


def _view(matrix: dict[str, Any], path: str, data: bytes | None,
          error: OSError | None = None) -> StateView:
    """The state a state file's bytes name (None: no file)."""
    fallback = matrix["settings"]["fallback_state"]
    hint = "Set one from a terminal: `governance state set CYCLE PHASE WORK-ID`."
    if data is None and error is None:
        return StateView(fallback, source="unset",
                         note=f"No cycle state is set, so governance uses {fallback}. {hint}")
    try:
        if error is not None:
            raise error
        raw = jsoncodec.loads((data or b"").decode("utf-8"))
    except (OSError, ValueError) as exc:
        return StateView(fallback, source="fallback",
                         note=f"The state file {path} is unreadable ({exc}), so governance uses "
                              f"{fallback}. {hint}")
    version = raw.get("version", 1) if isinstance(raw, dict) else 1
    if type(version) is not int or not 1 <= version <= STATE_VERSION:
        return StateView(fallback, source="fallback",
                         note=f"The state file {path} is in format {version!r}, which this "
                              f"claude-governance does not read (it reads format {STATE_VERSION}),"
                              f" so governance uses {fallback}. Upgrade claude-governance, or "
                              f"{hint[0].lower()}{hint[1:]}")
    if not isinstance(raw, dict) or not isinstance(raw.get("phase"), str):
        return StateView(fallback, source="fallback",
                         note=f"The state file {path} has no phase, so governance uses {fallback}. "
                              f"{hint}")
    cycle = raw.get("cycle") if isinstance(raw.get("cycle"), str) else ""
    work = raw.get("work_item") if isinstance(raw.get("work_item"), str) else ""
    phase = raw["phase"]
    state = resolve(matrix, cycle or "", phase)
    if state is None:
        return StateView(fallback, cycle or "", phase, work or "", "fallback",
                         f"The phase {cycle}/{phase} is not in the matrix's phase_to_state, so "
                         f"governance uses {fallback}. {hint}")
    return StateView(state, cycle or "", phase, work or "", "file")


def parse_spec(spec: str) -> tuple[str, str, str]:
    """``cycle/PHASE[/WORK]`` or a bare ``PHASE`` -> (cycle, phase, work item)."""
    parts = [p.strip() for p in spec.strip().split("/", 2)]
    if not parts[0] or any(not p for p in parts):
        raise StateError(f"cannot read the state {spec!r}",
                         fix="write it as CYCLE/PHASE/WORK-ID, e.g. implementation-cycle/DO/WORK-064")
    if len(parts) == 1:
        return "", parts[0], ""
    return parts[0], parts[1], parts[2] if len(parts) == 3 else ""


def lock(project_dir: str) -> Any:
    from filelock import FileLock

    folder = governance_dir(project_dir)
    system.makedirs(folder, mode=0o700, exist_ok=True)
    return FileLock(state_path(project_dir) + ".lock", timeout=10)


def encode(data: dict[str, Any]) -> bytes:
    """A state file's bytes."""
    import json

    return (json.dumps(data, indent=2) + "\n").encode()


def _write(project_dir: str, data: dict[str, Any]) -> None:
    path = state_path(project_dir)
    tmp = temp_path(path)
    try:
        with open(tmp, "wb") as fh:
            fh.write(encode(data))
            fh.flush()
            system.fsync(fh.fileno())
        system.chmod(tmp, 0o600)
        system.replace(tmp, path)
    except OSError as exc:
        raise StateError(f"cannot write the state ({exc.strerror})", file=path,
                         fix="check that the project's .claude/governance folder is writable") from None


def set_state(project_dir: str, matrix: dict[str, Any], cycle: str, phase: str,
              work_item: str = "", actor: str = "") -> StateView:
    """Validate and store a new state; returns what it now resolves to. ``actor``: who sets it
    (default: ``seal.who()``, the user and how)."""
    if cycle and cycle not in matrix["cycles"]:
        cycles = ", ".join(sorted(matrix["cycles"])) or "(none)"
        raise StateError(f"unknown cycle {cycle!r}",
                         fix=f"use one of {cycles}, or add it to phase_to_state in the matrix")
    state = resolve(matrix, cycle, phase)
    if state is None:
        known = list(matrix["cycles"][cycle]) if cycle else list(matrix["states"])
        raise StateError(f"unknown phase {phase!r}" + (f" for {cycle}" if cycle else ""),
                         fix=f"use one of {', '.join(known)}")
    actor = actor or seal.who()
    data = {"version": STATE_VERSION, "cycle": cycle, "phase": phase, "work_item": work_item,
            "state": state,
            "set_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "set_by": actor}
    with lock(project_dir):
        try:
            old: bytes | None = read_bytes(state_path(project_dir))
        except OSError:
            old = None
        # accepted before it is written, the old bytes still accepted while it is replaced
        seal.accept_state(project_dir, encode(data), data, actor=actor,
                          previous_sha256=seal.digest(old) if old is not None else "")
        _write(project_dir, data)
        seal.accept_state(project_dir, encode(data), data, actor=actor)
    return StateView(state, cycle, phase, work_item, "file")


def next_phase(matrix: dict[str, Any], current: StateView) -> str:
    """The phase after the current one in its cycle; raises StateError at the end or off-cycle."""
    if not current.cycle or current.source != "file":
        raise StateError("there is no current cycle to advance",
                         fix="set one first: `governance state set CYCLE PHASE WORK-ID`")
    phases = matrix["cycles"].get(current.cycle)
    if not phases or current.phase not in phases:
        raise StateError(f"phase {current.phase!r} is not in the phase order of {current.cycle}",
                         fix=f"list it under cycles.{current.cycle} in the matrix")
    index = phases.index(current.phase)
    if index + 1 >= len(phases):
        raise StateError(f"{current.cycle} is already at its last phase {current.phase}",
                         fix="start the next cycle with "
                             "`governance state set CYCLE PHASE WORK-ID`")
    return str(phases[index + 1])
