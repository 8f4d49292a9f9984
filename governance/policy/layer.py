"""GovernanceLayer: the one place that decides what a tool call may do in the current state.

Hot path: imports ``os`` and our small modules (``wildcard`` instead of ``fnmatch``), each where it
is first needed: a PostToolUse call, which only maps the tool and reads the state, never loads
``decision`` or ``shell``, nor ``wildcard`` unless a glob must be matched. Deciding
is a dictionary look-up:
``decide[state][primitive]`` was expanded from ``rules[primitive][STATE | _all_states]`` when the
matrix was compiled.
"""

from __future__ import annotations

import os

from governance.policy import matrix as matrix_module
from governance.policy.state import StateView, read_state
from governance.project import sandbox_manifest_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from governance.policy.decision import Decision
    from governance.shell import Act

FILE_TOOLS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path",
              "NotebookEdit": "notebook_path"}
SHELL_TOOLS = ("Bash",)
READING = ("mcp-read", "memory-search")  # MCP primitives that only read: their paths may be ours
# The tool Claude Code calls for our ``type: "mcp_tool"`` hooks (``governance install --mcp-hooks``).
# The agent calling it itself would forge hook calls and ledger records: it is governance-admin,
# whatever the matrix says (as writes to our own installation are).
HOOK_SERVER = "governance-hooks"
HOOK_TOOL = "decide_tool_call"
HOOK_TOOL_NAME = f"mcp__{HOOK_SERVER}__{HOOK_TOOL}"


def _match(name: str, pattern: str) -> bool:
    """``wildcard.match``, imported only for a name that starts with the pattern's literal part
    (what comes before its first ``*``, ``?`` or ``[``): most paths written share no prefix with
    any protected pattern, and the module is never loaded."""
    cut = min((k for k in (pattern.find("*"), pattern.find("?"), pattern.find("[")) if k >= 0),
              default=-1)
    if cut < 0:
        return name == pattern
    if not name.startswith(pattern[:cut]):
        return False
    from governance.policy.wildcard import match

    return match(name, pattern)

class GovernanceLayer:
    def __init__(self, project_dir: str, matrix: dict[str, Any] | None = None) -> None:
        self.project_dir = project_dir
        self.matrix = matrix if matrix is not None else matrix_module.load(project_dir)
        self._state: StateView | None = None
        self._installed: list[str] | None = None

    # --- state -------------------------------------------------------------------------------
    def get_activity_state(self) -> StateView:
        if self._state is None:
            self._state = read_state(self.project_dir, self.matrix)
        return self._state

    def blocked_primitives(self, state: str) -> list[str]:
        summary = self.matrix["summary"].get(state)
        return list(summary["blocked"]) if summary else []

    def summary(self, state: str) -> dict[str, list[str]]:
        return dict(self.matrix["summary"].get(state, {}))

    # --- mapping -----------------------------------------------------------------------------
    def map_tool_to_primitive(self, tool_name: str, tool_input: dict[str, Any] | None = None,
                              cwd: str | None = None) -> str:
        """The primitive of a tool call (for Bash, the most restrictive of its acts)."""
        acts, _ = self.acts_for(tool_name, tool_input or {}, cwd)
        if len(acts) == 1:
            return acts[0].primitive
        from governance.policy.decision import SEVERITY
        state = self.get_activity_state().state
        return max(acts, key=lambda a: SEVERITY[self._rule(a.primitive, state)[0]]).primitive

    def tool_primitive(self, tool_name: str) -> tuple[str, str]:
        """(primitive, mapping key) from the tools: section; ``unknown`` when nothing matches."""
        exact = self.matrix["tools_exact"].get(tool_name)
        if exact is not None:
            return exact[0], exact[2]
        for pattern, primitive, _file, key in self.matrix["tools_glob"]:
            if _match(tool_name, pattern):
                return primitive, key
        return "unknown", "default_action"

    def acts_for(self, tool_name: str, tool_input: dict[str, Any],
                 cwd: str | None = None) -> tuple[list[Act], str]:
        from governance.shell import Act

        if tool_name == HOOK_TOOL_NAME:
            return [Act("governance-admin", tool_name, "calls the governance hooks' own tool")], \
                "protected_paths"
        primitive, map_key = self.tool_primitive(tool_name)
        if tool_name in FILE_TOOLS:
            target = tool_input.get(FILE_TOOLS[tool_name])
            if isinstance(target, str) and self.is_protected(target, cwd):
                return [Act("governance-admin", target, "writes a governance-protected file")], \
                    "protected_paths"
        if tool_name in SHELL_TOOLS:
            return self._shell_acts(tool_input, cwd, primitive), map_key
        if tool_name.startswith("mcp__") and primitive not in READING:
            target = self._mcp_target(tool_name, tool_input, cwd)
            if target is not None:
                return [Act("governance-admin", target, f"{tool_name} touches a governance-"
                                                        "protected file")], "protected_paths"
        return [Act(primitive)], map_key

    def _mcp_target(self, tool_name: str, tool_input: dict[str, Any],
                    cwd: str | None) -> str | None:
        """The first protected path among an MCP tool's path arguments (``mcp_paths``)."""
        spec = self.matrix.get("mcp_paths") or {}
        server = tool_name.split("__")[1] if tool_name.count("__") >= 2 else ""
        for key in spec.get("servers", {}).get(server) or spec.get("keys", ()):
            value = tool_input.get(key)
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, str) and item and self.is_protected(
                        item[7:] if item.startswith("file://") else item, cwd):
                    return item
        return None

    def _shell_acts(self, tool_input: dict[str, Any], cwd: str | None, primitive: str) -> list[Act]:
        from governance.shell import Act

        command = tool_input.get("command")
        acts: list[Act] = []
        shell = matrix_module.load_shell(self.project_dir, self.matrix)
        if shell and isinstance(command, str):
            from governance.shell.analysis import analyse_command

            base = cwd or self.project_dir
            acts = list(analyse_command(command, shell,
                                        is_protected=lambda p: self.is_protected(p, base)))
        if tool_input.get("dangerouslyDisableSandbox") is True and os.path.exists(
                sandbox_manifest_path(self.project_dir)):
            acts.insert(0, Act("sandbox-escape", "dangerouslyDisableSandbox: true",
                               "asks to run outside the sandbox, which governance makes mandatory"))
        if tool_input.get("run_in_background") is True:
            acts.insert(0, Act("shell-background", "run_in_background: true",
                               "runs in the background"))
        return acts or [Act(primitive, command if isinstance(command, str) else "")]

    def is_protected(self, path: str, cwd: str | None = None) -> bool:
        """True when ``path`` is a governance file the agent may not change: a ``protected_paths``
        glob (relative to the project, absolute, or ``~/`` for the user's home) or a part of our
        installation. Compared without regard to case, as a case-insensitive file system would
        (``.CLAUDE/settings.json`` is the same file there)."""
        base = cwd or self.project_dir
        full = os.path.realpath(os.path.join(base, os.path.expanduser(path))).lower()
        for place in self._installation():
            if full == place or full.startswith(place + os.sep):
                return True
        root = self.project_dir.lower()
        rel = full[len(root) + 1:] if full.startswith(root + os.sep) else None
        for pattern in self.matrix["protected"]:
            pattern = pattern.lower()
            if pattern.startswith("~/"):
                pattern = self._home() + pattern[1:]
            if os.path.isabs(pattern):
                if _match(full, pattern):
                    return True
            elif rel is not None and _match(rel, pattern):
                return True
        return False

    def _installation(self) -> list[str]:
        found = self._installed
        if found is None:
            known = self.matrix.get("installation")   # resolved when the matrix was compiled
            if not isinstance(known, list):
                from governance.project import installation_paths

                known = installation_paths()
            found = self._installed = [str(p).lower() for p in known]
        return found

    def _home(self) -> str:
        return os.path.realpath(os.environ.get("HOME") or os.path.expanduser("~")).lower()

    def protected_places(self) -> list[str]:
        """Every place the agent may not change, spelled out for a person (``governance doctor``)."""
        from governance.project import installation_paths

        places = []
        for pattern in self.matrix["protected"]:
            if pattern.startswith("~/"):
                places.append(os.path.join(os.path.expanduser("~"), pattern[2:]))
            elif os.path.isabs(pattern):
                places.append(pattern)
            else:
                places.append(os.path.join(self.project_dir, pattern))
        return places + installation_paths()
    def _rule(self, primitive: str, state: str) -> tuple[str, str, str, str, str]:
        entry = self.matrix["decide"].get(state, {}).get(primitive)
        if entry is None:
            return (self.matrix["default_action"], "", "", self.matrix["default_file"],
                    "default_action")
        return tuple(entry)

    def check_activity(self, primitive: str, state: StateView | str | None = None,
                       context: dict[str, Any] | None = None) -> Decision:
        """The decision for one primitive in a state (the current state when not given)."""
        from governance.policy.decision import Decision

        if state is None:
            view = self.get_activity_state()
        elif isinstance(state, str):
            view = StateView(state, source="given")
        else:
            view = state
        action, message, redirect_to, rule_file, rule_key = self._rule(primitive, view.state)
        context = context or {}
        decision = Decision(action, primitive, view, rule_file, rule_key, message, redirect_to,
                            tool=str(context.get("tool_name", "")))
        if primitive == "skill-invoke" and action not in ("block", "redirect"):
            self._check_skill(decision, context.get("tool_input") or {})
        return decision

    def _check_skill(self, decision: Decision, tool_input: dict[str, Any]) -> None:
        restriction = self.matrix["skills"].get(decision.state.state)
        skill = tool_input.get("skill") or tool_input.get("name") or tool_input.get("command")
        if not restriction or not isinstance(skill, str):
            return
        blocked = any(_match(skill, p) for p in restriction["blocked"])
        allowed = restriction["allowed"]
        if not blocked and allowed is not None:
            blocked = not any(_match(skill, p) for p in allowed)
        if blocked:
            decision.action = "block"
            decision.message = restriction["message"].replace("{skill}", skill)
            decision.rule_file = restriction["file"]
            decision.rule_key = restriction["key"]
            decision.segment = skill

    def decide(self, tool_name: str, tool_input: dict[str, Any], cwd: str | None = None) -> Decision:
        """The decision for a whole tool call: the most restrictive of its acts."""
        from governance.policy.decision import SEVERITY

        acts, map_key = self.acts_for(tool_name, tool_input, cwd)
        view = self.get_activity_state()
        context = {"tool_name": tool_name, "tool_input": tool_input}
        best: Decision | None = None
        records = []
        for act in acts:
            decision = self.check_activity(act.primitive, view, context)
            decision.segment = decision.segment or act.segment
            record: dict[str, Any] = {"primitive": act.primitive, "segment": act.segment,
                                      "reason": act.reason, "action": decision.action}
            if act.targets is not None:
                record["targets"] = act.targets
            records.append(record)
            if best is None or SEVERITY[decision.action] > SEVERITY[best.action] or (
                    SEVERITY[decision.action] == SEVERITY[best.action]
                    and act.primitive == "governance-admin"):
                best = decision  # on a tie, self-protection's message is the one to show
        assert best is not None
        best.acts = records
        best.map_rule = map_key
        return best
