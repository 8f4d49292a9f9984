"""The README documents every command a user can run, and every hook the installer writes."""

from __future__ import annotations

import re

from governance.commands.cli import COMMANDS
from tests.helpers import REPO

README = (REPO / "README.md").read_text()


def test_every_cli_command_is_in_the_readme() -> None:
    missing = [name for name in COMMANDS if f"governance {name}" not in README]
    assert not missing, f"README.md does not mention: {missing}"


def test_every_user_facing_just_recipe_is_in_the_readme() -> None:
    lines = [line for line in (REPO / "justfile").read_text().splitlines() if ":=" not in line]
    recipes = [m.group(1) for line in lines if (m := re.match(r"([a-z][a-z-]*)[^:]*:", line))]
    internal = {"default", "setup", "lint", "ci", "test"}
    missing = [r for r in recipes if r not in internal and f"just {r}" not in README]
    assert not missing, f"README.md does not mention: {missing}"


def test_every_hook_script_is_documented() -> None:
    for script in sorted((REPO / "hooks").glob("*.py")):
        assert script.name in README, script.name
