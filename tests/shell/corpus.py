"""The shell analysis corpus (tests/shell/corpus.yaml) as typed cases, plus the protected-path
predicate the corpus assumes. Imported by the in-process tests and by the hook subprocess tests."""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from functools import cache

import yaml

CORPUS_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus.yaml")
PROTECTED_GLOBS = (".claude/settings*.json", ".claude/governance", ".claude/governance/*")


@dataclass(frozen=True)
class Case:
    category: str
    command: str
    expect: frozenset[str]

    @property
    def id(self) -> str:
        return f"{self.category}:{self.command[:60]}"


@cache
def load_corpus() -> list[Case]:
    """Every corpus case, in file order."""
    with open(CORPUS_PATH, encoding="utf-8") as handle:
        document = yaml.safe_load(handle)
    cases = []
    for category, items in document["categories"].items():
        for item in items:
            cases.append(Case(category, item["cmd"], frozenset(item["expect"])))
    return cases


def is_protected(path: str) -> bool:
    """The corpus's protected paths, for a path relative to the project root (the cwd)."""
    rel = os.path.normpath(path)
    return any(fnmatch.fnmatchcase(rel, pattern) for pattern in PROTECTED_GLOBS)
