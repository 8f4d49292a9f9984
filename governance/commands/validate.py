"""``governance validate``: full validation of the activity matrix, every problem listed."""

from __future__ import annotations

import argparse
import os
from typing import Any


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--project", help="the project folder (default: the current project)")
    parser.add_argument("--file", help="validate this matrix file as if it were the project's "
                                       "override (e.g. before copying it into place)")
    parser.add_argument("--strict", action="store_true", help="treat warnings as errors")


def run(args: argparse.Namespace) -> int:
    from governance.errors import ConfigError
    from governance.policy import matrix as matrix_module
    from governance.policy.compiler import compile_matrix
    from governance.project import project_from_cli

    project = project_from_cli(args.project)
    default, override, config_hash = matrix_module.read_sources(project)
    if args.file:
        try:
            with open(args.file, "rb") as fh:
                override = (os.path.abspath(args.file), fh.read())
        except OSError as exc:
            raise ConfigError(f"cannot read it ({exc.strerror})", file=args.file) from None
    org = matrix_module.org_source()
    compiled, problems = compile_matrix(default, override, config_hash, org)
    for problem in problems:
        print(problem.render())
    errors = sum(p.level == "error" for p in problems)
    warnings = len(problems) - errors
    sources = [default[0]] + ([override[0]] if override else []) + ([org[0]] if org else [])
    if compiled is None or (args.strict and warnings):
        print(f"INVALID: {errors} error(s), {warnings} warning(s) in {', '.join(sources)}")
        return 1
    if override is not None:
        _show_loosened(default, compiled, config_hash)
    if org is not None:
        _show_org(compiled)
    prims = len(compiled["allowed_in"])
    print(f"OK: {prims} primitives, {len(compiled['states'])} states, "
          f"{len(compiled['tools_exact']) + len(compiled['tools_glob'])} tool mappings, "
          f"{warnings} warning(s) ({', '.join(sources)})")
    if not args.file:
        from governance.commands.accept import record_matrix

        print(record_matrix(project, compiled, override, config_hash))
        _follow_network(project, compiled)
    knowledge = _knowledge(project, args.strict)
    return _intents(project) or knowledge


def _follow_network(project: str, compiled: dict[str, object]) -> None:
    """The sandbox's network rule for the current state, as the accepted matrix now says."""
    from governance.policy.state import read_state
    from governance.sandbox import control

    state = read_state(project, compiled).state
    if control.follow_state(project, compiled, state) is not None:
        rule = control.describe_rule(control.network_rule(compiled, state))
        print(f"sandbox network for Bash in {state}: {rule}")


def _show_org(compiled: dict[str, Any]) -> None:
    """The organisation's layer: where it is, and the cells it holds in force over the project."""
    cells = compiled.get("org_cells") or {}
    held = sorted({(prim, state) for state, row in cells.items() for prim, entry in row.items()
                   if entry["in_force"] == entry["floor"]})
    print(f"organisation: {compiled['org_file']} is a floor under this project: "
          f"{len(held)} cell(s) in force from it"
          + (f" ({', '.join(f'{p} in {s}' for p, s in held[:8])}"
             f"{', ...' if len(held) > 8 else ''})" if held else ""))


def _show_loosened(default: tuple[str, bytes], compiled: dict[str, object], config_hash: str
                   ) -> None:
    """Say where the override answers less strictly than the packaged default (not a warning:
    loosening may be what the project wants, but it is never silent)."""
    from governance.policy.compiler import compile_matrix, loosened

    base, _ = compile_matrix(default, None, config_hash)
    found = loosened(base, compiled) if base is not None else []
    if found:
        shown = ", ".join(found[:12]) + (f", and {len(found) - 12} more" if len(found) > 12 else "")
        print(f"note: the project's matrix is less strict than the packaged default in "
              f"{len(found)} place(s): {shown}")


def _intents(project: str) -> int:
    """The declared intents (``.orchestration/active_intents.yaml``), when the file exists."""
    from governance.errors import ConfigError
    from governance.intent import spec

    if not os.path.exists(spec.path(project)):
        return 0
    try:
        intents = spec.load(project)
    except ConfigError as exc:
        print(f"error: {exc.render()}")
        print("intents: INVALID")
        return 1
    active = sum(i.status == "active" for i in intents)
    print(f"intents: OK: {len(intents)} intent(s), {active} active ({spec.path(project)})")
    return 0


def _knowledge(project: str, strict: bool) -> int:
    """The knowledge sources (``knowledge.yaml``, SOPs): every problem, then a summary line."""
    from governance.knowledge.validation import check

    report = check(project)
    for line in report.errors:
        print(f"error: {line}")
    for line in report.warnings:
        print(f"warning: {line}")
    if report.errors or (strict and report.warnings):
        print(f"knowledge: INVALID: {len(report.errors)} error(s), {len(report.warnings)} "
              f"warning(s); the SOPs that parse ({report.sops}) still serve")
        return 1
    print(f"knowledge: OK: {report.sops} SOP(s), {len(report.warnings)} warning(s)")
    return 0
