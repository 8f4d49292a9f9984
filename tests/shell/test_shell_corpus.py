"""Every corpus case through the analysis in-process, plus the corpus's own shape and figures."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from governance.shell.analysis import analyse_command
from governance.shell.schema import load_default_shell
from tests.shell.corpus import Case, is_protected, load_corpus

CASES = load_corpus()
SHELL = load_default_shell()


def primitives(command: str, shell: dict[str, Any] = SHELL) -> frozenset[str]:
    return frozenset(a.primitive for a in analyse_command(command, shell,
                                                          is_protected=is_protected))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_case(case: Case) -> None:
    assert primitives(case.command) == case.expect


def test_corpus_size_by_category() -> None:
    counts = Counter(c.category for c in CASES)
    assert len(CASES) >= 400
    assert counts["nesting"] >= 80
    assert counts["traps"] >= 80
    assert set(counts) == {"everyday", "compound", "wrappers", "nesting", "traps",
                           "self-protection", "administration", "holdout"}


def test_commands_are_unique() -> None:
    commands = [c.command for c in CASES]
    assert len(commands) == len(set(commands))


def test_every_act_names_its_segment_and_reason() -> None:
    for case in CASES:
        for act in analyse_command(case.command, SHELL, is_protected=is_protected):
            assert act.primitive and act.reason, case.command
            assert act.segment.strip(), case.command


def test_precision_and_recall_per_primitive() -> None:
    """Micro-averaged over (case, primitive) pairs; printed with ``pytest -s``."""
    tp: Counter[str] = Counter()
    fp: Counter[str] = Counter()
    fn: Counter[str] = Counter()
    for case in CASES:
        got = primitives(case.command)
        for prim in got & case.expect:
            tp[prim] += 1
        for prim in got - case.expect:
            fp[prim] += 1
        for prim in case.expect - got:
            fn[prim] += 1
    for prim in sorted(set(tp) | set(fp) | set(fn)):
        precision = tp[prim] / ((tp[prim] + fp[prim]) or 1)
        recall = tp[prim] / ((tp[prim] + fn[prim]) or 1)
        print(f"{prim:18} precision {precision:.3f} recall {recall:.3f} (n={tp[prim] + fn[prim]})")
    total_tp, total_fp, total_fn = sum(tp.values()), sum(fp.values()), sum(fn.values())
    precision = total_tp / (total_tp + total_fp)
    recall = total_tp / (total_tp + total_fn)
    print(f"overall            precision {precision:.3f} recall {recall:.3f}")
    assert precision >= 0.98 and recall >= 0.98
