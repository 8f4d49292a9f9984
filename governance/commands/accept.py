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
    from governance.policy import matrix as matrix_module
    from governance.policy.compiler import compile_matrix

    default, override, config_hash = matrix_module.read_sources(project)
    compiled, problems = compile_matrix(default, override, config_hash)
    lines = [problem.render() for problem in problems]
    if compiled is None:
        return False, lines
    return True, [*lines, record_matrix(project, compiled, override, config_hash)]


def accept_state(project: str) -> str:
    """Record the state file's bytes, as they are, as accepted."""
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


def accept_settings(project: str) -> str:
    from governance.install import settings as settings_file
    from governance.sandbox import control

    data = settings_file.load(settings_file.settings_path(project))
    control.seal_settings(project, data, control.load_manifest(project))
    owned = settings_file.our_commands(data)
    return (f"Accepted the settings governance owns: {sum(map(len, owned.values()))} hook(s)"
            + (", the sandbox" if control.load_manifest(project) else ""))


def accept_all(project: str) -> tuple[bool, list[str]]:
    ok, lines = accept_matrix(project)
    if not ok:
        lines.append("The activity matrix is invalid, so nothing was accepted: fix it and run "
                     "`governance accept` again.")
        return False, lines
    return True, [*lines, accept_state(project), accept_settings(project)]


def run(args: argparse.Namespace) -> int:
    from governance.errors import InstallError
    from governance.project import project_from_cli

    project = project_from_cli(args.project)
    if not os.path.isdir(project):
        raise InstallError(f"no such project folder {project!r}", fix="pass an existing folder")
    ok, lines = accept_all(project)
    print("\n".join(lines))
    return 0 if ok else 1
