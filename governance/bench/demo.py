"""``just demo``: governed tool calls end to end, in a throw-away project.

It installs the hooks with the real ``governance install``, switches states with the real CLI, and
pipes payloads recorded from Claude Code 2.1.330 through the exact hook commands written into the
project's ``.claude/settings.json``, printing each decision and what the model would see.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PAYLOADS = REPO / "tests" / "payloads" / "claude-code-2.1.330"
RECORDED_PROJECT = "/home/dev/shop-api"
CALLS = ["PreToolUse-Read.json", "PreToolUse-Write.json", "PreToolUse-Bash.json",
         "PreToolUse-WebFetch.json", "PreToolUse-WebSearch.json"]


def governance(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "governance.commands.cli", *args], capture_output=True,
                          text=True, check=False)
    if done.returncode not in (0, 1):
        raise SystemExit(f"governance {' '.join(args)} failed:\n{done.stderr}")
    return done.stdout + done.stderr


def heading(text: str) -> None:
    print(f"\n\033[1m== {text}\033[0m")


def hook_commands(project: Path) -> dict[str, str]:
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    return {event: groups[-1]["hooks"][0]["command"] for event, groups in settings["hooks"].items()}


def call(command: str, payload: dict[str, object]) -> dict[str, object]:
    done = subprocess.run(["sh", "-c", command], input=json.dumps(payload), capture_output=True,
                          text=True, check=False, cwd="/")
    print(f"   exit {done.returncode}")
    answer: dict[str, object] = json.loads(done.stdout) if done.stdout.strip() else {}
    return answer


def show(answer: dict[str, object]) -> None:
    specific = answer.get("hookSpecificOutput")
    if isinstance(specific, dict):
        decision = specific.get("permissionDecision", "(none: Claude Code's own rules apply)")
        print(f"   decision: {decision}")
        if "permissionDecisionReason" in specific:
            print(textwrap.fill(str(specific["permissionDecisionReason"]), 96,
                                initial_indent="   reason:   ", subsequent_indent=" " * 13))
        for line in str(specific.get("additionalContext", "")).splitlines():
            print(f"   model sees: {line}")
    if "systemMessage" in answer:
        print(textwrap.fill(str(answer["systemMessage"]), 96, initial_indent="   user sees: ",
                            subsequent_indent=" " * 14))


def payload(name: str, project: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads(
        (PAYLOADS / name).read_text().replace(RECORDED_PROJECT, str(project)))
    return data


def main(argv: Sequence[str] | None = None) -> int:
    keep = "--keep" in (argv if argv is not None else sys.argv[1:])
    root = Path(tempfile.mkdtemp(prefix="governance-demo-"))
    project = root / "shop-api"
    (project / ".claude").mkdir(parents=True)
    (project / "notes.txt").write_text("alpha\nbeta\n")
    try:
        heading(f"1. Install the hooks into a fresh project: {project}")
        print(governance("install", "--project", str(project)))
        commands = hook_commands(project)
        for state in ("investigation-cycle/EXPLORE/WORK-063", "implementation-cycle/DO/WORK-064"):
            heading(f"2. Switch state: governance state set {state}")
            print(governance("state", "set", state, "--project", str(project)).strip())
            for name in CALLS:
                data = payload(name, project)
                print(f"\n-> {data['tool_name']} {json.dumps(data['tool_input'])[:70]}")
                show(call(commands["PreToolUse"], data))
        heading("3. After the call, PostToolUse records the result")
        call(commands["PostToolUse"], payload("PostToolUse-Bash.json", project))
        ledger = project / ".claude" / "governance" / "ledger.jsonl"
        for line in ledger.read_text().splitlines()[-3:]:
            rec = json.loads(line)
            print(f"   ledger #{rec['seq']}: {rec['event']:<11} {rec['tool'] or '':<10} "
                  f"{rec.get('action', rec.get('outcome', '')):<8} {rec['hash'][:16]}… "
                  f"prev {rec['prev'][:16]}…")
        heading("4. A broken matrix is never silently ignored (fail-open, loudly)")
        override = project / ".claude" / "governance" / "activity_matrix.yaml"
        override.write_text("rules:\n  web-fetch:\n    DO: {action: blok}\n")
        show(call(commands["PreToolUse"], payload("PreToolUse-WebFetch.json", project)))
        print("\n   governance validate says:")
        print(textwrap.indent(governance("validate", "--project", str(project)).strip(), "   "))
        override.unlink()
        heading("5. The state table (governance state show)")
        print(governance("state", "show", "--project", str(project)))
        heading("6. governance doctor")
        print(governance("doctor", "--project", str(project)))
    finally:
        if keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
