"""``governance demo``: a tour of governed tool calls in a throw-away project.

It runs from an installed tool as well as from a checkout: it uses only the packaged
configuration, installs the hooks with the real ``governance install`` and changes the project
with the real CLI, then pipes tool calls shaped like Claude Code's through the exact hook command
written into the project's ``.claude/settings.json``. Each call is shown with the command or
file that caused it and the answer: what Claude Code does, the reason the model reads and the
message the user sees. Sections are numbered as they are printed. The project is removed at the
end (``--keep`` keeps it).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from typing import Any

SESSION = "5e55a0d1-de70-4c1a-9a11-000000000001"
SOP = """---
title: Deploying the stack with Docker Compose
match:
  commands: [docker compose]
---
# Deploying the stack with Docker Compose

## Preflight
- Run `docker compose config --quiet` first.

## Gotchas
- Never `docker compose down -v` on the shared box: it deletes the volumes.
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--keep", action="store_true",
                        help="keep the temporary project and print where it is")


def run(args: argparse.Namespace) -> int:
    root = tempfile.mkdtemp(prefix="governance-demo-")
    from governance.ledger import anchor

    os.environ[anchor.ENV] = os.path.join(root, "anchors")  # the ledger's anchor: not in your home
    try:
        Tour(os.path.join(root, "shop-api")).run()
    finally:
        if args.keep:
            print(f"\nKept the project: {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    return 0


class Tour:
    """The sections of the tour, numbered as they are printed."""

    def __init__(self, project: str) -> None:
        self.project = project
        self.number = 0
        self.calls = 0
        self.bold = sys.stdout.isatty()
        self.hooks: dict[str, str] = {}

    def run(self) -> None:
        os.makedirs(os.path.join(self.project, ".claude"))
        os.makedirs(os.path.join(self.project, "src"))
        self.write("notes.txt", "alpha\nbeta\n")
        self.section("Install the hooks into a fresh project")
        self.governance("install", "--project", self.project)
        self.hooks = _hook_commands(self.project)
        self.section("Put the project in the DO phase of a cycle")
        self.governance("state", "set", "implementation-cycle/DO/WORK-064", "--project", self.project)
        self.section("A deny: the matrix blocks pushing in DO")
        self.bash("git push --force origin main")
        self.section("An ask: Claude Code asks you before a destructive command")
        self.bash("rm -rf src")
        self.section("A knowledge block: a strict SOP holds the call once")
        self.write(".claude/sops/docker-deploy.ai.sop", SOP, shown=True)
        self.write(".claude/governance/knowledge.yaml", "enforcement:\n  level: strict\n",
                   shown=True)
        self.bash("docker compose up -d")
        print("\n   The model has read the SOP; the same call again goes ahead:")
        self.bash("docker compose up -d")
        self.intents()
        self.tamper()
        self.section("Every decision is in the hash-chained ledger")
        self.governance("log", "--limit", "6", "--project", self.project)
        self.governance("ledger", "verify", "--project", self.project)
        self.governance("explain", "toolu_demo001", "--project", self.project)
        print("\nIn your own project: `governance install --project DIR`, then `governance status`.")

    def intents(self) -> None:
        self.section("An intent refusal: changes need an active intent, inside its scope")
        self.write(".claude/governance/activity_matrix.yaml",
                   "extends: default\nsettings:\n  require_intent: true\n", shown=True)
        self.governance("validate", "--project", self.project)
        self.governance("intent", "new", "WORK-064", "--title", "JWT auth", "--scope", "src/auth/",
                        "--project", self.project)
        print("\n   The state's work item WORK-064 makes that intent the active one.")
        self.call("Write", {"file_path": os.path.join(self.project, "notes.txt"),
                            "content": "gamma\n"})
        self.call("Write", {"file_path": os.path.join(self.project, "src", "auth", "jwt.py"),
                            "content": "TTL = 900\n"})

    def tamper(self) -> None:
        self.section("A matrix changed behind governance's back is not used")
        path = os.path.join(self.project, ".claude", "governance", "activity_matrix.yaml")
        with open(path, "rb") as handle:
            accepted = handle.read()
        self.write(".claude/governance/activity_matrix.yaml",
                   "extends: default\nrules:\n  vcs-push:\n    DO: {action: blok}\n", shown=True)
        print("   (a typo, written without `governance validate`: the accepted matrix stays in "
              "force, and the user is told)")
        self.bash("git push origin main")
        self.governance("validate", "--project", self.project)
        with open(path, "wb") as handle:  # the accepted bytes again: nothing left unaccepted
            handle.write(accepted)

    # -- output ---------------------------------------------------------------------------------

    def section(self, title: str) -> None:
        self.number += 1
        text = f"== {self.number}. {title}"
        print(f"\n\033[1m{text}\033[0m" if self.bold else f"\n{text}")

    def governance(self, *args: str) -> None:
        shown = " ".join(_shorten(a, self.project) for a in args)
        print(f"\n$ governance {shown}")
        from governance.install.settings import module_command

        done = subprocess.run([*module_command("governance.commands", sys.executable), *args],
                              capture_output=True, text=True, check=False)
        out = (done.stdout + done.stderr).strip()
        if out:
            print(textwrap.indent(_shorten(out, self.project), "   "))
        if done.returncode not in (0, 1):
            raise SystemExit(f"governance demo: `governance {shown}` failed (exit "
                             f"{done.returncode})")

    def write(self, relative: str, text: str, shown: bool = False) -> None:
        path = os.path.join(self.project, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
        if shown:
            print(f"\n$ cat {relative}")
            print(textwrap.indent(text.rstrip(), "   "))

    def bash(self, command: str) -> None:
        self.call("Bash", {"command": command, "description": "demo"})

    def call(self, tool: str, tool_input: dict[str, Any]) -> None:
        self.calls += 1
        shown = (tool_input["command"] if tool == "Bash"
                 else _shorten(str(tool_input.get("file_path", "")), self.project))
        print(f"\n-> Claude calls {tool}: {shown}")
        payload = {
            "session_id": SESSION, "cwd": self.project, "permission_mode": "default",
            "transcript_path": os.path.join(os.path.dirname(self.project), "transcript.jsonl"),
            "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input,
            "tool_use_id": f"toolu_demo{self.calls:03d}",
        }
        done = subprocess.run(["sh", "-c", self.hooks["PreToolUse"]], input=json.dumps(payload),
                              capture_output=True, text=True, check=False, cwd="/")
        answer: dict[str, Any] = json.loads(done.stdout) if done.stdout.strip() else {}
        _show(answer, self.project)


def _hook_commands(project: str) -> dict[str, str]:
    with open(os.path.join(project, ".claude", "settings.json"), encoding="utf-8") as handle:
        settings = json.load(handle)
    return {event: groups[-1]["hooks"][0]["command"]
            for event, groups in settings["hooks"].items()}


def _shorten(text: str, project: str) -> str:
    """Paths inside the demo project, relative to it (the temporary folder's name is noise)."""
    return text.replace(project + os.sep, "").replace(project, ".")


def _show(answer: dict[str, Any], project: str) -> None:
    specific = answer.get("hookSpecificOutput") or {}
    decision = specific.get("permissionDecision")
    print("   answer: " + {"deny": "deny (the call does not run)",
                           "ask": "ask (Claude Code asks the user)"}.get(
        str(decision), "no decision (the call goes ahead under Claude Code's own rules)"))
    if "permissionDecisionReason" in specific:
        _paragraph("reason (model):", str(specific["permissionDecisionReason"]), project)
    context = str(specific.get("additionalContext", "")).splitlines()
    for line in context[1:]:  # the first line is the state line, the same on every call
        _paragraph("model sees:", line, project)
    if "systemMessage" in answer:
        _paragraph("user sees:", str(answer["systemMessage"]), project)


def _paragraph(label: str, text: str, project: str) -> None:
    print(textwrap.fill(_shorten(text, project), 100, initial_indent=f"   {label:<15} ",
                        subsequent_indent=" " * 19, break_on_hyphens=False))
