"""``governance.intent.guard``: mutating calls under ``require_intent``: no intent, in scope, out of
scope, shell targets, and symlink and ``..`` escapes."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from governance.intent import guard, selection
from governance.policy.layer import GovernanceLayer
from tests.intent.test_spec_selection import declare


def verdict(project: Path, tool: str, tool_input: dict[str, Any], session: str = "s1",
            work_item: str = "") -> guard.Verdict:
    acts: list[dict[str, Any]] = []
    if tool == "Bash":
        acts = GovernanceLayer(str(project)).decide(tool, tool_input, str(project)).acts
    return guard.check(str(project), session, work_item, tool, tool_input, str(project), acts)


def test_reads_need_no_intent(project: Path) -> None:
    declare(project)
    assert not verdict(project, "Read", {"file_path": str(project / "x")}).denied
    assert not verdict(project, "Bash", {"command": "ls -la src"}).denied


def test_no_intent_is_denied_with_the_list(project: Path) -> None:
    declare(project)
    found = verdict(project, "Write", {"file_path": str(project / "src/auth/jwt.py")})
    assert found.denied and "WORK-064 (JWT auth)" in found.reason
    assert "INT-002" not in found.reason                 # done: not offered
    # no MCP server registered: the user selects it (tests/hook/test_deny_commands.py: with one)
    assert "`governance intent select ID`" in found.reason
    assert "select_active_intent" not in found.reason


def test_in_scope_and_out_of_scope(project: Path) -> None:
    declare(project)
    selection.choose(str(project), "WORK-064", "s1", by="agent")
    assert not verdict(project, "Edit", {"file_path": str(project / "src/auth/jwt.py")}).denied
    assert not verdict(project, "Write", {"file_path": "tests/auth/t.py"}).denied   # relative
    out = verdict(project, "Write", {"file_path": str(project / "src/billing/x.py")})
    assert out.denied and "src/billing/x.py" in out.reason and "src/auth/" in out.reason
    assert verdict(project, "Write", {"file_path": "/etc/passwd"}).denied
    assert verdict(project, "Edit", {"file_path": str(project / "src/auth/../billing/x.py")}).denied


def test_the_work_item_selects_its_intent(project: Path) -> None:
    declare(project)
    assert not verdict(project, "Write", {"file_path": "src/auth/a.py"},
                       work_item="WORK-064").denied
    assert verdict(project, "Write", {"file_path": "src/auth/a.py"}, work_item="INT-002").denied


def test_shell_writes(project: Path) -> None:
    declare(project)
    selection.choose(str(project), "WORK-064")
    assert not verdict(project, "Bash", {"command": "echo x > src/auth/a.py"}).denied
    assert verdict(project, "Bash", {"command": "echo x > README.md"}).denied
    assert verdict(project, "Bash", {"command": "sed -i s/a/b/ src/auth/*.py"}).denied  # unnamed
    unnamed = verdict(project, "Bash", {"command": "rm -f \"$F\""})
    assert unnamed.denied and "a file the command does not name" in unnamed.reason


def test_a_symlink_out_of_the_scope_is_out(project: Path, tmp_path: Path) -> None:
    declare(project)
    selection.choose(str(project), "WORK-064")
    (project / "src" / "auth").mkdir(parents=True)
    (project / "docs").mkdir()
    os.symlink(project / "docs", project / "src" / "auth" / "link")
    os.symlink(tmp_path, project / "src" / "auth" / "away")
    assert verdict(project, "Write", {"file_path": "src/auth/link/a.md"}).denied
    assert verdict(project, "Write", {"file_path": "src/auth/away/a.md"}).denied
    assert not verdict(project, "Write", {"file_path": "src/auth/real.py"}).denied


def test_the_memo_follows_the_file(project: Path) -> None:
    path = declare(project)
    assert [i["id"] for i in guard.declared(str(project))] == ["WORK-064", "INT-002"]
    path.write_text(path.read_text().replace("WORK-064", "WORK-065"))
    assert [i["id"] for i in guard.declared(str(project))] == ["WORK-065", "INT-002"]
