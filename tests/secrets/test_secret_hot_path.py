"""What the secrets cost a hook process (issue 32's speed target): the secret lists come compiled
with the matrix and the taint is read only for a request that leaves the machine. Measured as the
modules a PreToolUse process loads (deterministic, unlike a timing), with the exact command
`governance install` writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import hook_command, install, recorded, set_state
from tests.hook.test_hook_process import HOT_PATH, loaded_modules

# What the secrets may add for a call that reads a file or fetches a page: the compiled secrets
# section asked with the call's path or host, the session's taint (one stat when unset), the
# URL's host.
SECRETS = {"governance.policy.secrets", "governance.policy.taint", "governance.policy.wildcard",
           "governance.shell.endpoint", "governance.shell.rules"}


@pytest.fixture
def pre(project: Path) -> str:
    install(project)
    set_state(project, "investigation-cycle/EXPLORE")
    return hook_command(project, "PreToolUse")


def call(project: Path, tool: str, tool_input: dict[str, Any]) -> str:
    data = recorded("PreToolUse-Read.json", project)
    data.update(tool_name=tool, tool_input=tool_input, permission_mode="default")
    return json.dumps(data)


@pytest.mark.parametrize(("tool", "tool_input"), [
    ("Read", {"file_path": "README.md"}),
    ("Grep", {"pattern": "TODO", "path": "src"}),
    ("WebFetch", {"url": "https://docs.python.org/3/library/os.html", "prompt": "read"}),
])
def test_an_ordinary_read_or_fetch_loads_nothing_heavy(project: Path, pre: str, tool: str,
                                                      tool_input: dict[str, Any]) -> None:
    loaded = loaded_modules(pre, call(project, tool, tool_input))   # asserts no heavy module
    assert loaded - HOT_PATH <= SECRETS, sorted(loaded - HOT_PATH - SECRETS)


def test_a_command_that_sends_nothing_never_reads_the_taint(project: Path, pre: str) -> None:
    loaded = loaded_modules(pre, call(project, "Bash", {"command": "ls -la src"}))
    assert "governance.policy.taint" not in loaded
