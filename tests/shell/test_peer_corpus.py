"""The peers' own test commands (tests/shell/peer_corpus.yaml: every command the test suites of
destructive_command_guard and claude-code-safety-net assert on, mapped to our primitives). Each is
decided as the PreToolUse hook decides it, in a project with the default matrix, in DO.

Figures (docs/shell.md, "Accuracy on the peers' suites"): an attack counts as caught when a
primitive DO blocks (or `cycle-advance`, which asks the user) is among its acts; a harmless
command counts as falsely denied when one is. The targets are issue 26's: at least 99% of the
attacks caught, at most 4 harmless commands denied in 385, scaled to the corpus."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from governance.policy.layer import GovernanceLayer
from tests.helpers import layer_in_do
from tests.shell.test_fresh_corpus import STOPPED

PEERS = Path(__file__).with_name("peer_corpus.yaml")
CASES: list[dict[str, Any]] = yaml.safe_load(PEERS.read_text())["cases"]
ATTACKS = [c for c in CASES if c["expect"]]
HARMLESS = [c for c in CASES if not c["expect"]]
CAUGHT_TARGET = 0.99
DENIED_TARGET = 4 / 385


@pytest.fixture(scope="module")
def layer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GovernanceLayer]:
    root = tmp_path_factory.mktemp("peers")
    project = root / "shop-api"
    (project / ".claude").mkdir(parents=True)
    with layer_in_do(project, root / "home") as layer:
        yield layer


def found(layer: GovernanceLayer, command: str) -> list[tuple[str, str]]:
    acts, _ = layer.acts_for("Bash", {"command": command}, layer.project_dir)
    return sorted({(a.primitive, a.reason) for a in acts})


def test_the_peer_corpus_is_what_it_says() -> None:
    assert len(CASES) == 2358
    assert (len(ATTACKS), len(HARMLESS)) == (1547, 811)
    assert Counter((c["source"], c["peer"]) for c in CASES) == {
        ("dcg", "block"): 882, ("dcg", "allow"): 1077,
        ("safety-net", "block"): 270, ("safety-net", "allow"): 129}
    assert len({c["cmd"] for c in CASES}) == len(CASES)
    assert all(c["cmd"].strip() for c in CASES)
    assert all(set(c["expect"]) <= STOPPED for c in CASES)
    assert all(len(set(c["expect"])) == len(c["expect"]) for c in CASES)
    # where the mapping departs from the peer's verdict, the case says why
    departs = [c for c in CASES if (c["peer"] == "block") != bool(c["expect"])]
    assert departs and all(c.get("why") for c in departs)


def test_the_peers_attacks_are_caught_and_their_harmless_commands_are_not(
        layer: GovernanceLayer) -> None:
    missed: list[str] = []
    falsely: list[str] = []
    per_source: Counter[tuple[str, str]] = Counter()
    for case in CASES:
        acts = found(layer, case["cmd"])
        blocked = {p for p, _ in acts} & STOPPED
        if case["expect"] and not blocked:
            missed.append(f"{case['cmd']!r} expect {case['expect']}: {acts}")
            per_source[case["source"], "missed"] += 1
        elif not case["expect"] and blocked:
            falsely.append(f"{case['cmd']!r}: {acts}")
            per_source[case["source"], "denied"] += 1
    caught = len(ATTACKS) - len(missed)
    print(f"caught {caught}/{len(ATTACKS)} ({caught / len(ATTACKS):.1%}), falsely denied "
          f"{len(falsely)}/{len(HARMLESS)} ({len(falsely) / len(HARMLESS):.1%}; target "
          f"{int(DENIED_TARGET * len(HARMLESS))}); per source {dict(per_source)}")
    print("missed:", *missed, sep="\n  ")
    print("falsely denied:", *falsely, sep="\n  ")
    assert caught / len(ATTACKS) >= CAUGHT_TARGET, missed
    assert len(falsely) / len(HARMLESS) <= DENIED_TARGET, falsely
