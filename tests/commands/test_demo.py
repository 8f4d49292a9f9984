"""`governance demo`: the tour runs from the package alone, shows each kind of answer with the
call that caused it, numbers its sections in order and leaves nothing behind."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.helpers import REPO


def test_the_tour(tmp_path: Path) -> None:
    temp, home = tmp_path / "temp", tmp_path / "home"
    temp.mkdir()
    home.mkdir()
    done = subprocess.run([sys.executable, "-m", "governance.commands.cli", "demo"],
                          capture_output=True, text=True, cwd="/", timeout=300, check=False,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(home), "TMPDIR": str(temp),
                               "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    sections = re.findall(r"^== (\d+)\. (.*)$", out, re.MULTILINE)
    assert [int(n) for n, _ in sections] == list(range(1, len(sections) + 1))
    by_title = {title.split(":")[0]: n for n, title in sections}

    def section(name: str) -> str:
        start = out.index(f"== {by_title[name]}. {name}")
        end = out.find("\n== ", start + 1)
        return out[start:end if end > 0 else None]

    deny = section("A deny")
    assert "-> Claude calls Bash: git push --force origin main" in deny
    assert "answer: deny" in deny and "vcs-push" in deny
    ask = section("An ask")
    assert "-> Claude calls Bash: rm -rf src" in ask and "answer: ask" in ask
    knowledge = section("A knowledge block")
    assert knowledge.count("-> Claude calls Bash: docker compose up -d") == 2
    assert "answer: deny" in knowledge and "SOP docker-deploy" in knowledge
    assert "answer: no decision" in knowledge   # the retry goes ahead
    intent = section("An intent refusal")
    assert "-> Claude calls Write: notes.txt" in intent
    assert "notes.txt is outside the scope of intent WORK-064" in intent
    assert "-> Claude calls Write: src/auth/jwt.py" in intent
    tamper = section("A matrix changed behind governance's back is not used")
    assert "the accepted matrix stays in force" in tamper and "answer: deny" in tamper
    assert "got 'blok'" in tamper
    assert "OK: " in section("Every decision is in the hash-chained ledger")
    assert "fail-open, loudly" not in out and "Traceback" not in out + done.stderr
    assert "\033[" not in out        # no terminal codes when the output is not a terminal
    assert list(temp.iterdir()) == [] and list(home.iterdir()) == []


def test_the_tour_reads_nothing_of_a_checkout() -> None:
    """An installed tool has no tests/, no justfile and no config/ beside the package: the demo
    uses packaged files only."""
    source = (REPO / "governance" / "commands" / "demo.py").read_text()
    for needle in ("tests", "payloads", "justfile", "config/", "REPO", "parents["):
        assert needle not in source, needle
