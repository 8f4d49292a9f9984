"""Helpers shared by the tests: install into a project, run hook commands, load payloads."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
PAYLOAD_DIR = REPO / "tests" / "payloads" / "claude-code-2.1.330"
RECORDED_PROJECT = "/home/dev/shop-api"


def install(project: Path, fail_closed: bool = False, *extra: str) -> dict[str, Any]:
    """Run `governance install` in-process, through the real argument parser. Without the sandbox
    unless ``extra`` names it: the default depends on the machine (tests/install tests it)."""
    from governance.commands.cli import build_parser

    sandbox = [] if {"--sandbox", "--no-sandbox", "--repair"} & set(extra) else ["--no-sandbox"]
    argv = ["install", "--project", str(project), *(["--fail-closed"] if fail_closed else []),
            *sandbox, *extra]
    args = build_parser("install").parse_args(argv)
    args._run(args)
    data: dict[str, Any] = json.loads((project / ".claude" / "settings.json").read_text())
    return data


def hook_command(project: Path, event: str = "PreToolUse") -> str:
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    for group in settings["hooks"][event]:
        for handler in group["hooks"]:
            if "pre_tool_use.py" in handler["command"] or "post_tool_use.py" in handler["command"]:
                return str(handler["command"])
    raise AssertionError(f"no governance hook for {event}")


def run_command(command: str, stdin: bytes | str, env: dict[str, str] | None = None,
                cwd: str = "/") -> subprocess.CompletedProcess[bytes]:
    """Run a hook command exactly as Claude Code does: through sh -c, JSON on stdin."""
    data = stdin.encode() if isinstance(stdin, str) else stdin
    return subprocess.run(["sh", "-c", command], input=data, capture_output=True, timeout=60,
                          cwd=cwd, env={**os.environ, **(env or {})}, check=False)


def recorded(name: str, project: Path) -> dict[str, Any]:
    """A payload recorded from Claude Code 2.1.330, moved into ``project``."""
    text = (PAYLOAD_DIR / name).read_text().replace(RECORDED_PROJECT, str(project))
    payload: dict[str, Any] = json.loads(text)
    return payload


def set_state(project: Path, spec: str) -> None:
    from governance.policy import matrix, state

    compiled = matrix.load(str(project))
    cycle, phase, work = state.parse_spec(spec)
    state.set_state(str(project), compiled, cycle, phase, work)



def accept(project: Path) -> None:
    """Record the project's state file and matrix override, as they are now, as accepted: what
    `governance accept` records, here even for a broken override (as after an upgrade that no
    longer reads an accepted matrix)."""
    from governance.commands.accept import accept_state
    from governance.policy import seal

    override = project / ".claude" / "governance" / "activity_matrix.yaml"
    seal.accept_matrix(str(project), override.read_bytes() if override.exists() else None)
    accept_state(str(project))


@contextmanager
def layer_in_do(project: Path, home: Path) -> Iterator[Any]:
    """A GovernanceLayer for ``project`` in DO, as a hook decides there: a git repository that
    ignores nothing (a recursive delete of a folder is destructive, not the deletion of generated
    output), with HOME at ``home`` while it is used (for module-scoped fixtures, which the
    per-test HOME does not reach)."""
    from governance.policy.layer import GovernanceLayer

    subprocess.run(["git", "init", "-q"], cwd=project, check=True, capture_output=True)
    old = os.environ.get("HOME")
    os.environ["HOME"] = str(home)
    set_state(project, "implementation-cycle/DO")
    try:
        yield GovernanceLayer(str(project))
    finally:
        if old is not None:
            os.environ["HOME"] = old


def layer_primitives(layer: Any, command: str) -> set[str]:
    """The primitives of the acts a GovernanceLayer finds in a Bash command, in its project."""
    acts, _ = layer.acts_for("Bash", {"command": command}, layer.project_dir)
    return {a.primitive for a in acts}
