"""``governance.intent.scope``: gitignore-style owned scopes, checked against git itself."""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from governance.intent.scope import in_scope, matches


@pytest.mark.parametrize(("path", "pattern", "expected"), [
    ("src/auth/jwt.py", "src/auth/", True),
    ("src/auth", "src/auth/", False),               # a folder pattern: the file must be inside
    ("src/auth/jwt.py", "*.py", True),
    ("docs/a.md", "*.py", False),
    ("src/auth/jwt.py", "src/*.py", False),         # * does not cross /
    ("src/auth/jwt.py", "src/**/*.py", True),
    ("src/jwt.py", "src/**/*.py", True),            # ** is zero or more folders
    ("a/b/c", "a/**", True),
    ("a", "a/**", False),
    ("deep/x/build/out.o", "build", True),          # by name at any depth
    ("tests/test_x.py", "/tests/", True),
    ("x/tests/test_x.py", "/tests/", False),        # anchored
    ("f[1].txt", "f\\[1\\].txt", True),
    ("fa.txt", "f[!b].txt", True),
    ("fb.txt", "f[!b].txt", False),
])
def test_patterns(path: str, pattern: str, expected: bool) -> None:
    assert matches(path, pattern) is expected


def test_later_negations_take_back_and_outside_is_never_in_scope() -> None:
    scope = ["src/", "!src/generated/", "src/generated/keep.py"]
    assert in_scope("src/a.py", scope)
    assert not in_scope("src/generated/x.py", scope)
    assert in_scope("src/generated/keep.py", scope)
    for outside in ("../etc/passwd", "/etc/passwd", "..", "", "."):
        assert not in_scope(outside, ["**"])


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_matches_what_git_check_ignore_says(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    rng = random.Random(20261123)
    atoms = ["a", "b", "src", "x.py", "*", "**", "?", "[ab]", "*.py", "[!a]*"]
    names = ["a", "b", "src", "x.py", "ab", "bb.py", "c"]
    paths = ["/".join(rng.choice(names) for _ in range(rng.randint(1, 4))) for _ in range(40)]
    differences = []
    for _ in range(120):
        pattern = "/".join(rng.choice(atoms) for _ in range(rng.randint(1, 3)))
        pattern = ("/" if rng.random() < 0.2 else "") + pattern + ("/" if rng.random() < 0.2 else "")
        if not pattern.strip("/"):
            continue
        (tmp_path / ".gitignore").write_text(pattern + "\n")
        out = subprocess.run(["git", "check-ignore", "--no-index", "-v", "--stdin"],
                             input="\n".join(paths), capture_output=True, text=True,
                             cwd=tmp_path, check=False).stdout
        ignored = {line.split("\t")[1] for line in out.splitlines() if "\t" in line}
        differences += [(pattern, p) for p in paths if (p in ignored) != matches(p, pattern)]
    assert differences == []
