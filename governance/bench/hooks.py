"""``just bench``: the hook's cost as paired ratios against a bare interpreter.

Floor: ``python -I -c pass`` in a pristine venv (nothing installed, bytecode caching on). Each
sample runs the floor and the real hook command (exactly as ``governance install`` writes it, with a
recorded payload on stdin) back to back; the figure is the median of the per-pair ratios. Peak memory
is each hook process's own max RSS (``wait4``). Targets: PreToolUse <= 1.7x, PostToolUse <= 1.8x,
peak < 16 MiB, for every recorded payload, with the default matrix and with a generated
300-primitive matrix. Exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

PRE_TARGET = 1.7
POST_TARGET = 1.8
MEMORY_TARGET_KIB = 16 * 1024
REPO = Path(__file__).resolve().parents[2]
PAYLOADS = REPO / "tests" / "payloads" / "claude-code-2.1.330"


# Timing runs in a lean child process (the pristine interpreter): a spawned process's max RSS
# includes its parent's memory at exec time, so spawning from this (pydantic-laden) process would
# overstate every hook's peak.
RUNNER = r"""
import json, os, sys, time, statistics
floor, hook, stdins, rounds = json.loads(sys.argv[1])
env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
def spawn(argv, path):
    actions = [(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)]
    if path:
        actions.append((os.POSIX_SPAWN_OPEN, 0, path, os.O_RDONLY, 0))
    start = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, env, file_actions=actions)
    _, status, usage = os.wait4(pid, 0)
    return time.perf_counter() - start, os.waitstatus_to_exitcode(status), usage.ru_maxrss
for k in range(3):
    spawn(hook, stdins[k % len(stdins)])
ratios, peaks, times = [], [], []
for k in range(rounds):
    stdin = stdins[(k + 3) % len(stdins)]
    base = spawn(floor, None)[0]
    spent, code, peak = spawn(hook, stdin)
    if code != 0:
        sys.exit(f"hook exited {code} on {stdin}")
    ratios.append(spent / base); peaks.append(peak); times.append(spent)
print(json.dumps({"ratio": statistics.median(ratios), "peak_kib": max(peaks),
                  "ms": statistics.median(times) * 1000}))
"""


def pristine_python(cache: Path) -> str:
    python = cache / "bin" / "python"
    if not python.exists():
        base = getattr(sys, "_base_executable", sys.executable)
        subprocess.run([base, "-m", "venv", "--without-pip", str(cache)], check=True)
    return str(python)


def floor_argv(cache: str) -> list[str]:
    """The floor: a bare interpreter of a pristine venv, doing nothing."""
    return [pristine_python(Path(cache) / "pristine-venv"), "-I", "-c", "pass"]


def hook_argv(project: Path, event: str) -> list[str]:
    """The hook command ``governance install`` wrote for ``event``, as an argument vector."""
    from governance.install import settings

    commands = settings.our_commands(settings.load(settings.settings_path(str(project))))
    return shlex.split(commands[event][0])


def figures(result: dict[str, float], target: float) -> tuple[bool, str]:
    """Whether ``result`` meets ``target`` (and the memory target), and its table columns."""
    ok = result["ratio"] <= target and result["peak_kib"] < MEMORY_TARGET_KIB
    return ok, (f"{result['ratio']:>6.2f} {target:>6.2f} {result['ms']:>7.2f} "
                f"{result['peak_kib'] / 1024:>9.1f}" + ("" if ok else "   MISSED"))


def bench_parser(prog: str, description: str | None) -> argparse.ArgumentParser:
    """A bench's arguments: ``--rounds`` (paired runs per case) and ``--cache``."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--rounds", type=int, default=25, help="paired runs per case")
    parser.add_argument("--cache", default=str(REPO / ".bench"), help="where the pristine venv lives")
    return parser


def outcome(failures: int, what: str = "") -> int:
    """Say whether every target was met; the exit code."""
    print(f"all {what}targets met" if not failures else f"{failures} {what}target(s) missed")
    return 1 if failures else 0


def big_matrix(path: Path, primitives: int = 300) -> None:
    states = ["EXPLORE", "DESIGN", "PLAN", "DO", "CHECK", "DONE"]
    lines = ["version: '1.0'", "extends: default", "rules:"]
    for i in range(primitives):
        lines.append(f"  gen-{i:03d}:")
        for j, state in enumerate(states):
            action = ("allow", "warn", "block")[(i + j) % 3]
            lines.append(f"    {state}: {{action: {action}, message: 'generated rule {i} in {state}'}}")
    lines.append("tools:")
    lines += [f"  mcp__gen__tool{i:03d}: gen-{i:03d}" for i in range(primitives)]
    path.write_text("\n".join(lines) + "\n")


def _project(root: Path, name: str, matrix: bool) -> Path:
    from governance.commands.cli import build_parser
    from governance.project import governance_dir

    project = root / name
    (project / ".claude").mkdir(parents=True)
    args = build_parser("install").parse_args(["install", "--project", str(project),
                                               "--no-sandbox"])  # the hooks cost the same
    args._run(args)
    if matrix:
        from governance.commands.accept import accept_matrix

        big_matrix(Path(governance_dir(str(project))) / "activity_matrix.yaml")
        accepted, problems = accept_matrix(str(project))  # as `governance validate` does
        if not accepted:
            raise SystemExit("the benchmark matrix is invalid: " + "; ".join(problems))
    from governance.policy import matrix as matrix_module
    from governance.policy import state

    compiled = matrix_module.load(str(project))
    state.set_state(str(project), compiled, "implementation-cycle", "DO", "WORK-064")
    return project


def _payload_file(src: Path, project: Path, out_dir: Path) -> str:
    text = src.read_text().replace("/home/dev/shop-api", str(project))
    target = out_dir / f"{project.name}-{src.name}"
    target.write_text(text)
    return str(target)


def measure(floor: list[str], hook: list[str], stdin: str | list[str], rounds: int
            ) -> dict[str, float]:
    """Paired timing of ``hook`` against ``floor``: the median ratio, peak RSS and median ms.
    ``stdin``: one input file, or several the rounds take in turn."""
    stdins = [stdin] if isinstance(stdin, str) else stdin
    done = subprocess.run([floor[0], "-I", "-c", RUNNER, json.dumps([floor, hook, stdins, rounds])],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"benchmark runner failed: {done.stderr.strip()}")
    result: dict[str, float] = json.loads(done.stdout)
    return result


def extra_payloads(out_dir: Path) -> list[Path]:
    """Bash cases for the shell analysis: a short command, a long pipeline, a 10 KB heredoc."""
    base = json.loads((PAYLOADS / "PreToolUse-Bash.json").read_text())
    heredoc = "cat > notes.md <<'EOF'\n" + ("line of text for the heredoc body\n" * 300) + "EOF"
    pipeline = " | ".join(["cat access.log", "grep -v healthz", "awk '{print $1}'", "sort",
                           "uniq -c", "sort -rn", "head -20", "tee top.txt", "wc -l"] * 3)
    inline = ("python3 -c 'import json, sys; data = json.load(open(\"package.json\")); "
              "print(data.get(\"version\")); sys.exit(0)'")
    cases = {"bash-short": "ls -la src", "bash-pipeline": pipeline, "bash-heredoc-10k": heredoc,
             "bash-inline-python": inline}
    paths = []
    for name, command in cases.items():
        payload = dict(base, tool_input={"command": command, "description": name})
        path = out_dir / f"PreToolUse-{name}.json"
        path.write_text(json.dumps(payload))
        paths.append(path)
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    parser = bench_parser("governance-bench", __doc__)
    parser.add_argument("--only", help="substring filter on payload names")
    args = parser.parse_args(argv)
    floor = floor_argv(args.cache)
    root = Path(tempfile.mkdtemp(prefix="governance-bench-"))
    failures = 0
    try:
        payload_dir = root / "payloads"
        payload_dir.mkdir()
        sources = sorted(PAYLOADS.glob("P*ToolUse*.json")) + extra_payloads(payload_dir)
        if args.only:
            sources = [s for s in sources if args.only in s.name]
        print(f"floor: {' '.join(floor)}   rounds: {args.rounds}   (ratio = median of paired runs)")
        print(f"{'matrix':<8} {'payload':<40} {'ratio':>6} {'target':>6} {'ms':>7} {'peak MiB':>9}")
        for matrix_name, big in (("default", False), ("300-prim", True)):
            project = _project(root, f"project-{matrix_name}", big)
            for src in sources:
                event = "PreToolUse" if src.name.startswith("PreToolUse") else "PostToolUse"
                stdin = _payload_file(src, project, payload_dir)
                result = measure(floor, hook_argv(project, event), stdin, args.rounds)
                ok, columns = figures(result, PRE_TARGET if event == "PreToolUse" else POST_TARGET)
                failures += not ok
                print(f"{matrix_name:<8} {src.stem:<40} {columns}")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return outcome(failures)


if __name__ == "__main__":
    raise SystemExit(main())
