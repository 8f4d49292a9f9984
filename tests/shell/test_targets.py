"""The files a Bash command writes or deletes, as the shell analysis names them on its acts (what
an intent's owned scope is checked against): relative to the call's folder, absolute, or "?" when
they cannot be named."""

from __future__ import annotations

from pathlib import Path

import pytest

from governance.policy.layer import GovernanceLayer


def targets(project: Path, command: str) -> dict[str, list[str]]:
    decision = GovernanceLayer(str(project)).decide("Bash", {"command": command}, str(project))
    found: dict[str, list[str]] = {}
    for act in decision.acts:
        if "targets" in act:
            found.setdefault(act["primitive"], []).extend(act["targets"])
    return found


@pytest.mark.parametrize(("command", "expected"), [
    ("echo hi > out.txt", {"file-write": ["out.txt"]}),
    ("printf x | tee a.txt ../b.txt", {"file-write": ["a.txt", "../b.txt"]}),
    ("cd sub && echo x >> log/a.log", {"file-write": ["sub/log/a.log"]}),
    ("cd \"$DIR\" && echo x > a", {"file-write": ["?"]}),
    ("sed -i s/a/b/ src/app.py", {"file-write": ["src/app.py"]}),
    ("sed -i s/a/b/ src/*.py", {"file-write": ["?"]}),
    ("rm -f \"$TARGET\"", {"file-delete": ["?"]}),
    ("mv a.txt /tmp/x.txt", {"file-write": ["a.txt", "/tmp/x.txt"]}),   # the source goes too
    ("cat a.txt | grep x", {}),
])
def test_targets(project: Path, command: str, expected: dict[str, list[str]]) -> None:
    found = targets(project, command)
    assert {k: v for k, v in found.items() if k in expected or v} == expected
