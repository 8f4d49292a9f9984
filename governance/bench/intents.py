"""``just bench`` (intents part): the hooks with ``require_intent`` on.

Paired ratios against a bare interpreter, as ``governance.bench.hooks``: PreToolUse for an Edit in
scope, a Write out of scope and a Bash write, within the core target (<= 1.7x); PostToolUse of an
Edit, which appends its trace record, <= 1.9x. Exits 1 when a target is missed.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from governance.bench.hooks import (
    PRE_TARGET,
    bench_parser,
    figures,
    floor_argv,
    hook_argv,
    measure,
    outcome,
)

POST_TRACE_TARGET = 1.9
INTENTS = """intents:
  - id: WORK-064
    title: JWT auth
    owned_scope: [src/auth/, tests/auth/]
    constraints: Keep the session API.
  - id: INT-002
    title: Docs pass
    owned_scope: [docs/]
"""


def _setup(root: Path) -> Path:
    from governance.bench.hooks import _project
    from governance.commands.accept import accept_matrix
    from governance.intent import selection
    from governance.project import governance_dir

    project = _project(root, "shop-api", False)
    matrix = Path(governance_dir(str(project))) / "activity_matrix.yaml"
    matrix.write_text("version: '1.0'\nextends: default\nsettings:\n  require_intent: true\n")
    accepted, problems = accept_matrix(str(project))
    if not accepted:
        raise SystemExit("the benchmark matrix is invalid: " + "; ".join(problems))
    (project / ".orchestration").mkdir()
    (project / ".orchestration" / "active_intents.yaml").write_text(INTENTS)
    (project / "src" / "auth").mkdir(parents=True)
    (project / "src" / "auth" / "jwt.py").write_text("def sign():\n    return token()\n")
    selection.choose(str(project), "WORK-064", "bench-session")
    return project


def _payload(project: Path, out: Path, name: str, event: str, tool: str,
             tool_input: Mapping[str, object]) -> str:
    data: dict[str, object] = {
        "session_id": "bench-session", "transcript_path": "/dev/null", "cwd": str(project),
        "hook_event_name": event, "tool_name": tool, "tool_input": tool_input,
        "tool_use_id": "toolu_bench", "permission_mode": "default"}
    if event == "PostToolUse":
        data["tool_response"] = {"filePath": tool_input.get("file_path"), "success": True}
    path = out / f"{name}.json"
    path.write_text(json.dumps(data))
    return str(path)


def main(argv: Sequence[str] | None = None) -> int:
    parser = bench_parser("governance-bench-intents", __doc__)
    args = parser.parse_args(argv)
    floor = floor_argv(args.cache)
    root = Path(tempfile.mkdtemp(prefix="governance-bench-intents-"))
    failures = 0
    try:
        project = _setup(root)
        out = root / "payloads"
        out.mkdir()
        source = str(project / "src" / "auth" / "jwt.py")
        edit = {"file_path": source, "old_string": "return token()", "new_string": "return token()"}
        cases = [
            ("Pre Edit in scope", "PreToolUse", "Edit", edit, PRE_TARGET),
            ("Pre Write out of scope", "PreToolUse", "Write",
             {"file_path": str(project / "README.md"), "content": "x"}, PRE_TARGET),
            ("Pre Bash write in scope", "PreToolUse", "Bash",
             {"command": "echo x >> src/auth/notes.txt"}, PRE_TARGET),
            ("Post Edit + trace", "PostToolUse", "Edit", edit, POST_TRACE_TARGET),
        ]
        print(f"floor: {' '.join(floor)}   rounds: {args.rounds}   require_intent: on")
        print(f"{'case':<26} {'ratio':>6} {'target':>6} {'ms':>7} {'peak MiB':>9}")
        for name, event, tool, tool_input, target in cases:
            stdin = _payload(project, out, name.replace(" ", "-"), event, tool, tool_input)
            ok, columns = figures(measure(floor, hook_argv(project, event), stdin, args.rounds),
                                  target)
            failures += not ok
            print(f"{name:<26} {columns}")
        from governance.intent import provenance

        good, problems = provenance.verify(str(project))
        print(f"trace: {good} records verify" + (f", {len(problems)} problems" if problems else ""))
        failures += bool(problems)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return outcome(failures, "intent ")


if __name__ == "__main__":
    raise SystemExit(main())
