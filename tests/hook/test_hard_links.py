"""Hard links to protected files: making one is governance-admin, and a file that is another name
for a protected file (same device and inode) is that file for every tool. Through the exact
installed PreToolUse command in a temporary project in PLAN, with the link made for real."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from governance.policy.layer import GovernanceLayer
from tests.helpers import install, set_state
from tests.hook.test_exec_config import decision, last_primitives, pre

STATE = ".claude/governance/state.json"


@pytest.fixture
def governed(project: Path) -> Path:
    install(project)
    set_state(project, "implementation-cycle/PLAN/WORK-25")
    return project


def test_linking_a_protected_file_is_denied(governed: Path) -> None:
    for command in (f"ln {STATE} s.json", f"ln -f {STATE} sub/", f"cp -l {STATE} s.json",
                    f"link {STATE} s.json", f"ln -t . {STATE}"):
        answer = pre(governed, "Bash", {"command": command})
        assert decision(answer) == "deny", command
        assert "governance-admin" in last_primitives(governed)
    # a symbolic link is resolved whenever it is used; making one is an ordinary write
    assert decision(pre(governed, "Bash", {"command": "ln -s src/app.py app.py"})) == "none"


def test_a_hard_link_made_outside_governance_is_the_protected_file(governed: Path) -> None:
    link = governed / "s.json"
    os.link(governed / STATE, link)                               # the link, made for real
    for tool, field in (("Write", "file_path"), ("Edit", "file_path"),
                        ("NotebookEdit", "notebook_path")):
        answer = pre(governed, tool, {field: str(link), "content": "{}"})
        assert decision(answer) == "deny", tool
        assert last_primitives(governed) == ["governance-admin"]
    for command in ("echo '{}' > s.json", "sed -i s/PLAN/DO/ s.json", "cd sub/.. && tee s.json"):
        assert decision(pre(governed, "Bash", {"command": command})) == "deny", command
    before = (governed / STATE).read_text()
    link.write_text(before.replace("PLAN", "DO"))                 # what the write would do
    assert (governed / STATE).read_text() != before


def test_other_multiply_linked_files_stay_ordinary(governed: Path) -> None:
    (governed / "a.txt").write_text("a\n")
    os.link(governed / "a.txt", governed / "b.txt")
    assert decision(pre(governed, "Write", {"file_path": str(governed / "b.txt"),
                                            "content": "b"})) == "none"
    layer = GovernanceLayer(str(governed))
    assert not layer.is_protected("b.txt") and not layer.is_protected("missing.txt")


def test_links_in_every_protected_folder_are_found(governed: Path) -> None:
    agents = governed / ".claude" / "agents"
    agents.mkdir()
    (agents / "reviewer.md").write_text("Review.\n")
    os.link(agents / "reviewer.md", governed / "r.md")
    sops = Path(os.environ["HOME"]) / ".claude" / "sops"
    sops.mkdir(parents=True)
    (sops / "deploy.md").write_text("Deploy.\n")
    os.link(sops / "deploy.md", governed / "d.md")
    layer = GovernanceLayer(str(governed))
    assert layer.is_protected("r.md") and layer.is_protected(str(governed / "d.md"))
    done = subprocess.run(["stat", "-c", "%h", str(governed / "r.md")], capture_output=True,
                          text=True, check=True)
    assert done.stdout.strip() == "2"
