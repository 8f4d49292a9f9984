"""Whether a mutating call may run under the session's active intent (``require_intent``).

Hot path: ``os`` and our modules. The declared intents are read from a memo compiled when
``.orchestration/active_intents.yaml`` changes (``intent.spec`` and ``yaml`` load only then). A call
is checked file by file: each target is made absolute against the call's folder, symlinks and
``..`` resolved, and must lie inside the project and inside the active intent's owned scope. A
target the shell analysis could not name (``?``) is out of scope.
"""

from __future__ import annotations

from governance import system
from governance.intent import scope, selection
from governance.policy import seal
from governance.project import intents_path, require_config_libraries, signature

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MEMO = "intents.marshal"
PATH_TOOLS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path",
              "NotebookEdit": "notebook_path"}
WRITING = ("file-write", "file-delete")


def declared(project: str) -> list[dict[str, Any]]:
    """The declared intents as plain dicts (from the memo, bound to the seal like every derived
    file: ``governance.policy.derived``; compiled on a change)."""
    source = intents_path(project)
    seen = signature([source])
    known = seal.recall_derived(project, MEMO, seen)
    if isinstance(known, list):
        return known
    require_config_libraries("the intents file")   # a hook runs with -S: yaml is in the venv
    from governance.intent.spec import load
    from governance.policy import derived

    intents = [i.as_json() for i in load(project)]
    derived.remember(project, MEMO, seen, intents)
    return intents


def targets(tool: str, tool_input: dict[str, Any], acts: list[dict[str, Any]]) -> list[str] | None:
    """The files the call writes or deletes; None when it mutates nothing."""
    key = PATH_TOOLS.get(tool)
    if key is not None:
        value = tool_input.get(key)
        return [value if isinstance(value, str) and value else "?"]
    found: list[str] = []
    for act in acts:
        if act.get("primitive") in WRITING:
            found.extend(act.get("targets") or ["?"])
    return found or None


def relative(project: str, cwd: str | None, target: str) -> str | None:
    """``target`` relative to the resolved project root, or None when it is outside it (or not
    a name at all)."""
    if target == "?" or not target:
        return None
    base = cwd or project
    path = system.realpath(system.join(base, system.expanduser(target)))
    root = system.realpath(project)
    if path == root or not path.startswith(root.rstrip("/") + "/"):
        return None
    return path[len(root.rstrip("/")) + 1:]


class Verdict:
    """The active intent (or None) and, when the call may not run, why."""

    __slots__ = ("active", "denied", "reason", "source")

    def __init__(self, active: dict[str, Any] | None, source: str) -> None:
        self.active = active
        self.source = source
        self.denied = False
        self.reason = ""


def check(project: str, session: str, work_item: str, tool: str, tool_input: dict[str, Any],
          cwd: str | None, acts: list[dict[str, Any]]) -> Verdict:
    """The verdict for one call under ``require_intent``."""
    intents = declared(project)
    chosen, source = selection.selected(project, session, work_item)
    active = next((i for i in intents if i["id"] == chosen and i["status"] == "active"), None)
    verdict = Verdict(active, source if active else "")
    files = targets(tool, tool_input, acts)
    if files is None:
        return verdict
    if active is None:
        listed = [f"{i['id']} ({i['title']})" for i in intents if i["status"] == "active"]
        verdict.denied = True
        from governance.policy import remedy

        how = remedy.intent_select(project)
        verdict.reason = (
            "No intent is active, and this project requires one for every change. "
            + (f"Active intents: {', '.join(listed)}. {how[0].upper()}{how[1:]}, then retry."
               if listed else
               "None is declared: ask the user to declare one in .orchestration/"
               "active_intents.yaml (`governance intent new`)."))
        return verdict
    outside = []
    for target in files:
        inside = relative(project, cwd, target)
        if inside is None or not scope.in_scope(inside, active["owned_scope"]):
            outside.append("a file the command does not name" if target == "?" else target)
    if outside:
        from governance.policy import remedy

        verdict.denied = True
        verdict.reason = (
            f"{', '.join(outside)} is outside the scope of intent {active['id']} "
            f"({', '.join(active['owned_scope'])}). Stay inside it, "
            f"{remedy.intent_select(project, 'another intent')}, or ask the user to widen the "
            "scope.")
    return verdict
