"""``just bench`` (knowledge part): the PreToolUse hook with 1,000 SOPs and 100,000 memories.

Paired ratios against a bare interpreter, as ``governance.bench.hooks``: a call that nothing
matches stays within the core target (<= 1.7x), a call with matches <= 2.5x. Each measured call
comes from its own session, so every matching call really finds, renders and records its
knowledge (within a session it would be shown once per cooldown). Then a repeated-pattern workload
(a few hundred calls cycling through ten commands, with memory and decision changes on the way)
prints the index's hit rate and the lookup time percentiles from ``governance knowledge stats``.
Last, the incremental index (``knowledge.increment``): at each store size of ``--delta-sizes``
(10,000 and 100,000 memories), the time to add one memory and see it in a lookup (store, delta,
lookup), for each of ``--adds`` memories added one after another, as the delta grows, and the
full rebuild it saves (target <= 50 ms at the largest size, the median).
Exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from governance.bench.hooks import (
    PRE_TARGET,
    REPO,
    bench_parser,
    figures,
    floor_argv,
    hook_argv,
    measure,
    outcome,
)
from governance.install.settings import module_command

MATCH_TARGET = 2.5
HIT_TARGET = 0.8
DELTA_TARGET_MS = 50.0
DELTA_SIZES = (10_000, 100_000)
SOPS = 1000
MEMORIES = 100_000
TECHNOLOGIES = ("docker", "kubernetes", "terraform", "postgres", "git", "python", "node", "ssh")


def _words(rng: random.Random, vocabulary: list[str], count: int) -> str:
    # Zipf-like: a few words are common, most are rare
    return " ".join(vocabulary[min(int(rng.paretovariate(1.1)) - 1, len(vocabulary) - 1)]
                    if rng.random() < 0.5 else rng.choice(vocabulary) for _ in range(count))


def populate(project: Path, sops: int = SOPS, memories: int = MEMORIES, seed: int = 7) -> None:
    """``sops`` SOP files and ``memories`` memories, of the shapes teams write."""
    from governance.knowledge.memory import MemoryStore

    rng = random.Random(seed)
    vocabulary = [f"{rng.choice('bcdfghklmnprstvz')}{rng.choice('aeiou')}"
                  f"{rng.choice('bcdfghklmnprstvz')}{i:05d}" for i in range(30_000)]
    folder = project / ".claude" / "sops"
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(sops):
        kind = i % 5
        if kind == 0:
            front = f"match:\n  services: [svc-{i:04d}]\n  hosts: ['node-{i:04d}.internal']\n"
        elif kind == 1:
            front = f"match:\n  commands: [tool{i:04d} deploy]\n"
        elif kind == 2:
            front = f"match:\n  projects: [project-{i:04d}]\n"
        elif kind == 3:
            front = f"match:\n  hosts: ['10.{i // 250}.{i % 250}.*']\n"
        else:
            front = ""
        body = (f"# Runbook {i}\n\n## Preflight\n- {_words(rng, vocabulary, 25)}\n"
                f"- {_words(rng, vocabulary, 20)}\n\n## Gotchas\n- {_words(rng, vocabulary, 30)}\n"
                f"\n## Credentials\n- vault item team-{i % 40}/runbook-{i}\n")
        name = f"runbook-{i:04d}" if front else f"area{i:04d}-notes"
        (folder / f"{name}.ai.sop").write_text((f"---\n{front}---\n" if front else "") + body)
    (folder / "docker-deploy.ai.sop").write_text(
        (REPO / "examples" / "sops" / "docker-deploy.ai.sop").read_text())
    items = []
    categories = ("process", "technical", "security", "gotchas", "credentials")
    for i in range(memories):
        words = _words(rng, vocabulary, rng.randint(8, 20))
        if i % 1000 == 0:
            words += f" {TECHNOLOGIES[(i // 1000) % len(TECHNOLOGIES)]} compose volumes"
        items.append((f"{words} (note {i})", [categories[i % 5]], round(rng.uniform(0.3, 1.0), 2),
                      "bench", None))
    with MemoryStore.for_project(str(project)) as store:
        store.add_many(items)


def _payloads(project: Path, out: Path, name: str, command: str, sessions: int) -> list[str]:
    paths = []
    for k in range(sessions):
        payload = {"session_id": f"bench-{name}-{k}", "transcript_path": "/dev/null",
                   "cwd": str(project), "hook_event_name": "PreToolUse", "tool_name": "Bash",
                   "tool_input": {"command": command}, "tool_use_id": f"toolu_{k:06d}",
                   "permission_mode": "default"}
        path = out / f"{name}-{k}.json"
        path.write_text(json.dumps(payload))
        paths.append(str(path))
    return paths


def workload(project: Path, hook: list[str], out: Path, calls: int) -> dict[str, object]:
    """Repeated patterns: ten commands in turn; every 100 calls a memory added (the command
    rebuilds the index) and a decision recorded and reviewed (reviewed patterns are memories: the
    next call finds the index stale and it is rebuilt in the background)."""
    from governance.commands.knowledge import stats

    commands = ["docker compose ps", "ls -la src", "git status", "kubectl get pods",
                "terraform plan", "psql -c 'select 1'", "ssh node-0005.internal uptime",
                "tool0001 deploy --dry-run", "npm test", "cat README.md"]
    paths = {c: _payloads(project, out, f"w{i}", c, 1)[0] for i, c in enumerate(commands)}
    python = sys.executable
    for k in range(calls):
        if k and k % 100 == 0:
            subprocess.run([*module_command("governance.commands", python), "memory", "add",
                            f"bench workload note {k} about docker compose volumes",
                            "--category", "gotchas", "--project", str(project)],
                           capture_output=True, check=True)
            from governance.decisions.store import DecisionStore

            store = DecisionStore.for_project(str(project))
            try:
                decision = store.record(
                    {"description": f"bench decision {k}", "category": "tooling", "stakes": "low",
                     "confidence": 0.7, "reasons": [], "tags": [], "context": "",
                     "pattern": "pin docker compose images by digest"}, "bench")
                store.review(decision["id"], "success")
            finally:
                store.close()
        with open(paths[commands[k % len(commands)]], "rb") as fh:
            subprocess.run(hook, stdin=fh, capture_output=True, check=True)
    time.sleep(0.5)
    return stats(str(project))


def delta_curve(root: Path, memories: int, sops: int, adds: int) -> dict[str, object]:
    """Add ``adds`` memories one at a time to a project of ``memories``; for each, the time to
    store it, bring the index up to date (``increment.refresh``) and find it with a lookup."""
    from governance.bench.hooks import _project
    from governance.knowledge import lookup
    from governance.knowledge.increment import refresh
    from governance.knowledge.indexer import current, rebuild
    from governance.knowledge.memory import MemoryStore

    project = _project(root, f"delta-{memories}", False)
    populate(project, sops, memories, seed=11)
    _index, full = rebuild(str(project))
    rows = []
    for k in range(adds):
        word = f"zq{k:04d}x"
        started = time.perf_counter()
        with MemoryStore.for_project(str(project)) as store:
            # two words of its own (words all of them share become too common to find by)
            store.add(f"bench delta note {word}a {word}b about the staging volumes",
                      ["gotchas"], 0.9, "bench")
        stored = time.perf_counter()
        _index, summary = refresh(str(project))
        _index.close()
        refreshed = time.perf_counter()
        index, how = current(str(project))
        try:
            command = f"{word}a {word}b"
            found = lookup.find(index, str(project), "Bash", {"command": command},
                                str(project), [{"primitive": "shell-execute", "segment": command}],
                                {"shell-execute"}, "DO")
        finally:
            index.close()
        done = time.perf_counter()
        if how != "hit" or not any(word in m["text"] for m in found.memories):
            raise AssertionError(f"the memory added was not found ({how}, {summary})")
        rows.append({"delta": summary.get("delta", 0), "how": summary.get("how", "rebuilt"),
                     "why": summary.get("rebuilt", ""),
                     "store": stored - started, "refresh": refreshed - stored,
                     "lookup": done - refreshed, "total": done - started})
    return {"memories": memories, "full": full["seconds"], "rows": rows}


def _print_curve(curve: dict[str, object]) -> float:
    rows = curve["rows"]
    assert isinstance(rows, list)
    totals = sorted(r["total"] for r in rows)
    median = float(totals[len(totals) // 2]) * 1000
    print(f"{curve['memories']:>7} memories: full rebuild {curve['full']:.2f} s; add one memory "
          f"and find it: median {median:.1f} ms, max {totals[-1] * 1000:.1f} ms "
          f"({len(rows)} adds)")
    print(f"  {'add':>5} {'delta':>6} {'how':>8} {'store ms':>9} {'refresh ms':>11} "
          f"{'lookup ms':>10} {'total ms':>9}")
    step = max(1, len(rows) // 10)
    for k, row in enumerate(rows):
        if k % step == 0 or k == len(rows) - 1 or row["how"] != "delta":
            print(f"  {k + 1:>5} {row['delta']:>6} {row['how']:>8} {row['store'] * 1000:>9.2f} "
                  f"{row['refresh'] * 1000:>11.2f} {row['lookup'] * 1000:>10.2f} "
                  f"{row['total'] * 1000:>9.2f}  {row['why']}")
    return median


def main(argv: Sequence[str] | None = None) -> int:
    parser = bench_parser("governance-bench-knowledge", __doc__)
    parser.add_argument("--sops", type=int, default=SOPS)
    parser.add_argument("--memories", type=int, default=MEMORIES)
    parser.add_argument("--calls", type=int, default=300, help="calls of the workload")
    parser.add_argument("--delta-sizes", default=",".join(map(str, DELTA_SIZES)),
                        help="store sizes for the incremental index, comma-separated")
    parser.add_argument("--adds", type=int, default=200,
                        help="memories added one at a time at each size")
    parser.add_argument("--only-delta", action="store_true",
                        help="measure only the incremental index")
    args = parser.parse_args(argv)
    from governance.bench.hooks import _project
    from governance.knowledge.indexer import rebuild

    floor = floor_argv(args.cache)
    root = Path(tempfile.mkdtemp(prefix="governance-bench-knowledge-"))
    failures = 0
    try:
        if args.only_delta:
            return outcome(_deltas(root, args), "knowledge ")
        project = _project(root, "shop-api", False)
        started = time.perf_counter()
        populate(project, args.sops, args.memories)
        filled = time.perf_counter() - started
        _index, summary = rebuild(str(project))
        print(f"knowledge: {summary['sops']} SOPs, {summary['memories']} memories "
              f"(written in {filled:.1f} s); index {summary['bytes'] / 2**20:.1f} MiB, "
              f"{summary['keys']} keys, {summary['common_terms']} common terms dropped, "
              f"built in {summary['seconds']:.2f} s")
        hook = hook_argv(project, "PreToolUse")
        out = root / "payloads"
        out.mkdir()
        cases = [("no match", "ls -la src", PRE_TARGET),
                 ("no match, pipeline", "cat access.log | grep -v healthz | sort | uniq -c | "
                                        "sort -rn | head -20", PRE_TARGET),
                 ("match: SOP + memories", "docker compose up -d", MATCH_TARGET),
                 ("match: host glob SOP", "ssh 10.3.18.4 uptime", MATCH_TARGET)]
        print(f"floor: {' '.join(floor)}   rounds: {args.rounds}")
        print(f"{'case':<26} {'command':<42} {'ratio':>6} {'target':>6} {'ms':>7} {'peak MiB':>9}")
        for name, command, target in cases:
            stdins = _payloads(project, out, name.replace(" ", "-").replace(":", ""), command,
                               args.rounds + 3)
            result = measure(floor, hook, stdins, args.rounds)
            ok, columns = figures(result, target)
            failures += not ok
            shown = command if len(command) <= 40 else command[:37] + "..."
            print(f"{name:<26} {shown:<42} {columns}")
        seen = workload(project, hook, out, args.calls)
        rate = seen["cache_hit_rate"]
        lookup = seen["lookup_ms"]
        ok = isinstance(rate, float) and rate >= HIT_TARGET
        failures += not ok
        print(f"workload: {args.calls} calls over 10 commands: index {seen['cache']}, hit rate "
              f"{rate:.0%} (target >= {HIT_TARGET:.0%})" + ("" if ok else "   MISSED"))
        if isinstance(lookup, dict):
            print(f"lookup time: p50 {lookup['p50']:.2f} ms, p95 {lookup['p95']:.2f} ms, "
                  f"p99 {lookup['p99']:.2f} ms; injected {seen['injected']}, "
                  f"repeats {seen['repeat']}")
        failures += _deltas(root, args)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return outcome(failures, "knowledge ")



def _deltas(root: Path, args: argparse.Namespace) -> int:
    sizes = [int(n) for n in args.delta_sizes.split(",") if n]
    print("incremental index: add one memory, then find it (store + delta + lookup, in process)")
    median = 0.0
    for size in sizes:
        median = _print_curve(delta_curve(root, size, args.sops, args.adds))
    ok = median <= DELTA_TARGET_MS
    print(f"at {sizes[-1]} memories: median {median:.1f} ms (target <= {DELTA_TARGET_MS:.0f} ms)"
          + ("" if ok else "   MISSED"))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
