"""``governance accept``: accept the governance files as they are now (the cycle state, the
activity matrix and the settings governance owns), after a change made outside governance or
for a project set up before governance kept a seal."""

from __future__ import annotations

import argparse
import json
import os
from typing import Any


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--project", help="the project folder (default: the current project)")


def record_matrix(project: str, compiled: dict[str, Any], override: tuple[str, bytes] | None,
                  config_hash: str) -> str:
    """Cache a validated matrix and record its override as accepted; returns what to print."""
    from governance.policy import matrix as matrix_module
    from governance.policy import seal
    from governance.project import installation_paths

    compiled["override_sha256"] = seal.digest(override[1]) if override else ""
    compiled["installation"] = installation_paths()
    matrix_module.write_cache(matrix_module.cache_path(project, config_hash), compiled)
    sha = seal.accept_matrix(project, override[1] if override else None)
    return (f"Accepted: governance now uses {override[0]} (sha256 {sha[:12]})" if override
            else "Accepted: governance now uses the packaged default matrix (no project override)")


def accept_matrix(project: str) -> tuple[bool, list[str]]:
    """Validate the project's matrix and, when valid, record it as accepted: (accepted, lines)."""
    compiled, override, config_hash, lines = _compile(project)
    if compiled is None:
        return False, lines
    return True, [*lines, record_matrix(project, compiled, override, config_hash)]


def _compile(project: str) -> tuple[dict[str, Any] | None, tuple[str, bytes] | None, str,
                                    list[str]]:
    """The project's matrix compiled from its files as they are: (compiled or None when invalid,
    the override, the config hash, a line for each problem)."""
    from governance.policy import matrix as matrix_module
    from governance.policy.compiler import compile_matrix

    default, override, config_hash = matrix_module.read_sources(project)
    compiled, problems = compile_matrix(default, override, config_hash,
                                        matrix_module.org_source())
    return compiled, override, config_hash, [problem.render() for problem in problems]


def state_problem(project: str, matrix: dict[str, Any]) -> str | None:
    """What keeps the state file from being accepted under ``matrix`` (it is not JSON, names no
    phase, or a phase the matrix does not know), as a sentence with the fix; None when it can be
    accepted (a missing file is "no state set")."""
    from governance.policy import state as state_module
    from governance.project import read_bytes

    path = state_module.state_path(project)
    try:
        data = read_bytes(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        problem = f"cannot be read ({exc.strerror})"
    else:
        try:
            content = json.loads(data)
        except ValueError as exc:   # UnicodeDecodeError included
            problem = f"is not valid JSON ({exc})"
        else:
            if not isinstance(content, dict) or not isinstance(content.get("phase"), str):
                problem = "does not name a phase (a JSON object with \"phase\" is expected)"
            else:
                cycle = str(content["cycle"]) if isinstance(content.get("cycle"), str) else ""
                if state_module.resolve(matrix, cycle, content["phase"]) is not None:
                    return None
                problem = (f"names the phase {cycle + '/' if cycle else ''}{content['phase']}, "
                           "which the activity matrix does not know")
    return (f"The state file {path} {problem}, so governance would read no state from it and "
            f"use {matrix['settings']['fallback_state']}. Set the state from a terminal with "
            "`governance state set CYCLE/PHASE/WORK-ID` (or delete the file for no state).")


def accept_state(project: str) -> str:
    """Record the state file's bytes, as they are, as accepted (check them first with
    ``state_problem``: recorded bytes that name no state leave governance in its fallback)."""
    from governance.policy import seal
    from governance.policy import state as state_module
    from governance.project import read_bytes

    path = state_module.state_path(project)
    with state_module.lock(project):
        try:
            data: bytes | None = read_bytes(path)
        except FileNotFoundError:
            data = None
        try:
            content = json.loads(data) if data is not None else None
        except ValueError:
            content = None
        seal.accept_state(project, data, content if isinstance(content, dict) else None)
    if data is None:
        return "Accepted the cycle state: none set"
    return f"Accepted the cycle state file {path} as it is"


def settings_problems(project: str) -> list[str]:
    """What keeps the settings governance owns from being accepted: each settings file the seal
    watches that is not a JSON object, and a sandbox manifest that cannot be read."""
    from governance.errors import InstallError
    from governance.install import settings as settings_file
    from governance.sandbox import control

    errors = []
    for path in settings_file.files_to_watch(project):
        try:
            settings_file.load(path)
        except InstallError as exc:
            errors.append(exc)
    try:
        control.load_manifest(project)
    except InstallError as exc:
        errors.append(exc)
    return [f"{exc.file}: {exc.message}, so nothing was accepted. Fix: "
            + (exc.fix if exc.file and exc.file.endswith("sandbox.json") and exc.fix
               else "repair the file") + ", then run `governance accept` again."
            for exc in errors]


def accept_settings(project: str) -> str:
    from governance.install import settings as settings_file
    from governance.sandbox import control

    data = settings_file.load(settings_file.settings_path(project))
    control.seal_settings(project, data, control.load_manifest(project))
    owned = settings_file.our_commands(data)
    return (f"Accepted the settings governance owns: {sum(map(len, owned.values()))} hook(s)"
            + (", the sandbox" if control.load_manifest(project) else ""))


def accept_all(project: str) -> tuple[bool, list[str]]:
    """Accept the matrix, the state and the settings as they are, or nothing: each file is
    checked before any is recorded, and a file that cannot be accepted is named with its fix."""
    compiled, override, config_hash, lines = _compile(project)
    if compiled is None:
        lines.append("The activity matrix is invalid, so nothing was accepted: fix it and run "
                     "`governance accept` again.")
        return False, lines
    refusals = [f"Nothing was accepted. {problem}" for problem in [state_problem(project, compiled)]
                if problem]
    refusals += settings_problems(project)
    if refusals:
        return False, [*lines, *refusals]
    return True, [*lines, record_matrix(project, compiled, override, config_hash),
                  accept_state(project), accept_settings(project)]


def run(args: argparse.Namespace) -> int:
    from governance.errors import InstallError
    from governance.project import project_from_cli

    project = project_from_cli(args.project)
    if not os.path.isdir(project):
        raise InstallError(f"no such project folder {project!r}", fix="pass an existing folder")
    ok, lines = accept_all(project)
    print("\n".join(lines))
    return 0 if ok else 1
