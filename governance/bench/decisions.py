"""Benchmark of the decision memory: query latency by store size, pre_action latency, hot path.

``python -m governance.bench.decisions [--sizes 1000,10000,100000] [--json]`` builds a throwaway
project, fills it with synthetic decisions (one transaction per batch), and measures:

- query p50/p95 at each size (keyword ranking, random 3-word queries);
- ``pre_action`` in-process (auto_record off and on) and as a whole ``governance pre-action``
  process, at the largest size;
- ``evaluate_tool_call`` (the PreToolUse guardrail check) with no and with tool-call guardrails;
- keyword versus hybrid ranking on the labelled set in
  ``tests/decisions/data/labelled_decisions.json`` (hybrid needs the optional embedding
  packages; ``--no-ranking`` skips this part).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from governance.decisions.fields import CATEGORIES, STAKES
from governance.decisions.store import DecisionStore
from governance.install.settings import module_command

OUTCOMES = ("success", "success", "partial", "failure", None, None)
TOOL_RULE = """guardrails:
  - id: no-env-writes
    name: No writes to .env files
    severity: block
    condition:
      all:
        - {field: primitive, "==": file-write}
        - {field: paths, matches: '(^|/)\\.env$'}
    message: Writing .env files is not allowed.
"""


def _vocabulary(rng: random.Random, size: int = 3000) -> list[str]:
    syllables = ["ka", "lo", "mi", "ren", "to", "sa", "vi", "dor", "pe", "lu", "zan", "qui",
                 "mar", "tek", "no", "ba", "fi", "gro", "sel", "ux"]
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(syllables) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def _sentence(rng: random.Random, vocab: list[str], count: int) -> str:
    # Zipf-like: low indexes are common words, high indexes rare ones.
    return " ".join(vocab[min(int(rng.paretovariate(1.1)) - 1, len(vocab) - 1)]
                    if rng.random() < 0.5 else rng.choice(vocab) for _ in range(count))


def _rows(rng: random.Random, vocab: list[str], start: int, count: int
          ) -> Iterator[tuple[str, str, dict[str, Any], dict[str, Any], float]]:
    now = time.time()
    for index in range(start, start + count):
        action = {
            "description": _sentence(rng, vocab, rng.randint(8, 16)),
            "category": rng.choice(CATEGORIES), "stakes": rng.choice(STAKES),
            "confidence": round(rng.random(), 2),
            "reasons": [{"type": "analysis", "text": _sentence(rng, vocab, 6)}],
            "tags": sorted({rng.choice(vocab[:200]) for _ in range(2)}),
            "pattern": _sentence(rng, vocab[:300], 2), "context": {},
        }
        yield (f"dec-{index:08x}", f"agent-{index % 7}", action, {"state": "DO"},
               now - (start + count - index) * 60.0)


def _fill(store: DecisionStore, rng: random.Random, vocab: list[str], target: int) -> None:
    have = store.count()
    while have < target:
        batch = min(20_000, target - have)
        store.insert_many(_rows(rng, vocab, have, batch))
        have += batch
    outcome_rows = [(rng.choice(OUTCOMES), f"dec-{i:08x}") for i in range(0, target, 3)]
    store.db.executemany("UPDATE decisions SET outcome = ?, reviewed_at = created_at "
                         "WHERE id = ? AND outcome IS NULL", outcome_rows)


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    def pick(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 3)
    return {"p50_ms": pick(0.50), "p95_ms": pick(0.95), "n": len(ordered)}


def _time(call: Callable[[], object], repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    return samples


def _request(rng: random.Random, vocab: list[str], auto_record: bool) -> dict[str, Any]:
    return {"agent_id": "agent-1", "options": {"auto_record": auto_record},
            "action": {"description": _sentence(rng, vocab, 10), "category": "architecture",
                       "stakes": "medium", "confidence": 0.7, "tags": ["bench"],
                       "pattern": "bench pattern", "reasons": [{"type": "analysis",
                                                                "text": "benchmark"}]}}


def bench(sizes: Sequence[int], cli_runs: int, queries: int) -> dict[str, Any]:
    from governance.decisions.guardrails import evaluate_tool_call
    from governance.decisions.pre_action import pre_action

    root = tempfile.mkdtemp(prefix="governance-bench-")
    project = os.path.join(root, "project")
    os.makedirs(os.path.join(project, ".claude", "governance"))
    rng = random.Random(6)
    vocab = _vocabulary(rng)
    report: dict[str, Any] = {"query": {}}
    try:
        store = DecisionStore.for_project(project)
        for size in sorted(sizes):
            start = time.perf_counter()
            _fill(store, rng, vocab, size)
            fill_seconds = time.perf_counter() - start
            texts = [" ".join(rng.choice(vocab[:1500]) for _ in range(3))
                     for _ in range(queries)]
            found: list[int] = []
            samples = []
            for text in texts:
                begin = time.perf_counter()
                found.append(len(store.query(text, limit=5)))
                samples.append(time.perf_counter() - begin)
            report["query"][str(size)] = {**_percentiles(samples),
                                          "fill_s": round(fill_seconds, 2),
                                          "mean_hits": round(sum(found) / len(found), 2)}
        size = store.count()
        facts = {"tool": "Write", "primitive": "file-write", "state": "DO", "paths": ["/p/a.py"],
                 "command": None}
        report["decisions"] = size
        report["pre_action_in_process"] = {
            "auto_record_false": _percentiles(_time(lambda: pre_action(
                project, "agent-1", **_split(_request(rng, vocab, False)), store=store), 100)),
            "auto_record_true": _percentiles(_time(lambda: pre_action(
                project, "agent-1", **_split(_request(rng, vocab, True)), store=store), 100)),
        }
        store.close()
        request_path = os.path.join(root, "request.json")
        with open(request_path, "w", encoding="utf-8") as handle:
            json.dump(_request(rng, vocab, True), handle)
        command = [*module_command("governance.commands", sys.executable), "pre-action", "--json",
                   request_path, "--project", project]
        env = {**os.environ, "HOME": root}
        cli = _time(lambda: subprocess.run(command, env=env, capture_output=True, check=True),
                    cli_runs)
        report["pre_action_cli_process"] = _percentiles(cli)
        evaluate_tool_call(project, facts)
        report["evaluate_tool_call"] = {
            "no_tool_guardrails": _percentiles(_time(
                lambda: evaluate_tool_call(project, facts), 2000))}
        with open(os.path.join(project, ".claude", "governance", "guardrails.yaml"), "w",
                  encoding="utf-8") as handle:
            handle.write(TOOL_RULE)
        evaluate_tool_call(project, facts)
        report["evaluate_tool_call"]["one_tool_guardrail"] = _percentiles(_time(
            lambda: evaluate_tool_call(project, facts), 2000))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return report


def _split(request: dict[str, Any]) -> dict[str, Any]:
    return {"action": request["action"], "options": request["options"]}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="governance.bench.decisions", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=200, help="queries per size")
    parser.add_argument("--cli-runs", type=int, default=10)
    parser.add_argument("--no-ranking", action="store_true",
                        help="skip the keyword versus hybrid comparison on the labelled set")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    sizes = [int(size) for size in args.sizes.split(",") if size]
    report = bench(sizes, args.cli_runs, args.queries)
    if not args.no_ranking:
        from governance.bench.ranking import compare, default_set_path

        if os.path.exists(default_set_path()):
            report["ranking"] = compare()
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"decision memory benchmark ({report['decisions']} decisions at the end)")
    for size, figures in report["query"].items():
        print(f"  query at {int(size):>7,}: p50 {figures['p50_ms']:8.3f} ms  "
              f"p95 {figures['p95_ms']:8.3f} ms  (fill {figures['fill_s']} s)")
    for mode, figures in report["pre_action_in_process"].items():
        print(f"  pre_action in-process, {mode}: p50 {figures['p50_ms']:.3f} ms  "
              f"p95 {figures['p95_ms']:.3f} ms")
    cli = report["pre_action_cli_process"]
    print(f"  pre_action whole CLI process: p50 {cli['p50_ms']:.1f} ms  "
          f"p95 {cli['p95_ms']:.1f} ms")
    for mode, figures in report["evaluate_tool_call"].items():
        print(f"  evaluate_tool_call, {mode}: p50 {figures['p50_ms']:.4f} ms  "
              f"p95 {figures['p95_ms']:.4f} ms")
    if "ranking" in report:
        for name, figures in report["ranking"].items():
            print(f"  ranking {name}: {json.dumps(figures)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
