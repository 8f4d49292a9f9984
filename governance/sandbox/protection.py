"""How far governance can be trusted against a script the user's own account runs: the protection
level ``doctor`` and ``status`` name.

- ``sandboxed``: Claude Code's Bash sandbox is part of governance, with our settings, and can start
  here. A Bash command cannot write governance's files, the ledger's anchor or our installation.
- ``managed``: our hooks are registered in Claude Code's managed settings
  (``/etc/claude-code/managed-settings.json`` on Linux; ``GOVERNANCE_MANAGED_SETTINGS`` names
  another file), which no project or user setting can turn off. The files are still writable.
- ``tamper-evident only``: neither. No file in the project can be trusted against such a script;
  governance keeps to what the user accepted and reports every change it sees, and the ledger's
  anchor under the user's home shows a rewritten ledger, but nothing prevents the forgery.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, NamedTuple

MANAGED_ENV = "GOVERNANCE_MANAGED_SETTINGS"
SANDBOXED, MANAGED, BOTH, EVIDENT = ("sandboxed", "managed", "sandboxed and managed",
                                     "tamper-evident only")


class Level(NamedTuple):
    name: str
    meaning: str
    raise_it: str          # "" at the top

    def line(self) -> str:
        return f"{self.name}: {self.meaning}" + (f" To raise it: {self.raise_it}"
                                                 if self.raise_it else "")

    def as_json(self) -> dict[str, Any]:
        return {"level": self.name, "meaning": self.meaning, "raise": self.raise_it or None}


def managed_settings_path() -> str:
    declared = os.environ.get(MANAGED_ENV)
    if declared:
        return declared
    if sys.platform == "darwin":
        return "/Library/Application Support/ClaudeCode/managed-settings.json"
    return "/etc/claude-code/managed-settings.json"


def managed() -> bool:
    """Whether our PreToolUse hook is registered in Claude Code's managed settings."""
    from governance.install import settings

    try:
        with open(managed_settings_path(), encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and bool(settings.our_commands(data).get("PreToolUse"))


def sandboxed(found: dict[str, Any]) -> bool:
    """From ``control.status``: part of governance, enabled, as we set it, and able to start."""
    return bool(found["governed"] and found["enabled"] and not found["drift"]
                and found["can_start"])


def level(found: dict[str, Any]) -> Level:
    """The level for a project whose sandbox status (``control.status``) is ``found``."""
    boxed, central = sandboxed(found), managed()
    where = managed_settings_path()
    fence = ("Bash commands run in Claude Code's sandbox, which cannot write governance's files, "
             "the ledger's anchor or our installation, so no script forges the state, the seal, "
             "a cache or the ledger (the Write and Edit tools are decided by the hooks).")
    sandbox_on = ("`governance sandbox on`" if found["can_start"] else
                  f"make the sandbox able to start ({found['why_not']}), then `governance "
                  "sandbox on`")
    if boxed and central:
        return Level(BOTH, fence + f" Our hooks are in the managed settings ({where}), which no "
                     "project or user setting can turn off.", "")
    if boxed:
        return Level(SANDBOXED, fence, f"register our hooks in Claude Code's managed settings "
                     f"({where}) so that no project or user setting can turn them off.")
    if central:
        return Level(MANAGED, f"our hooks are in Claude Code's managed settings ({where}), which "
                     "no project or user setting can turn off, but a script run by Bash can "
                     "still rewrite governance's files: governance keeps to what was accepted and "
                     "reports the change; it cannot prevent it.", sandbox_on + ".")
    return Level(EVIDENT, "a script run by Bash can rewrite any governance file (state, seal, "
                 "caches, the ledger and its anchor under your home): governance keeps to what "
                 "was accepted and reports what changed (`governance ledger verify` compares the "
                 "ledger with its anchor), but it cannot prevent a forgery.", sandbox_on + ".")
