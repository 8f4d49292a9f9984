"""The hook time per tool call as the real Claude Code sees it, side by side for the three
transports: command hooks (a process per call), http hooks (`governance serve`) and mcp_tool hooks
(`governance install --mcp-hooks`). A figure script, not a test: `just bench-client`.

Each transport gets a fresh project in DO and one `claude -p` run per round (the e2e harness: the
pinned client against the fake model on loopback, in its own network namespace) in which the model
makes ``--calls`` Bash calls. The figure is the PreToolUse hook's time (the hook the tool call
waits for) from Claude Code's debug log (`--debug hooks`, millisecond timestamps):

- a command hook: Claude Code's own "finished with status 0 (N ms)";
- an http hook: from "HTTP hook POST to .../hooks/PreToolUse" to "HTTP hook response status";
- an mcp_tool hook: from "mcp_tool calling" to the hook's "success" line.

The first call of each run is left out (the cold start of the interpreter or of the server's
imports). The http hooks reach `governance serve --socket` through the harness's bridge (a TCP
port beside the client forwarding to the unix socket), one hop more than a user has.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from claude_runner import ClaudeRunner, install_claude, network_isolation_available  # noqa: E402
from fake_api import Text, ToolUse  # noqa: E402
from test_http_hooks import serve, stop  # noqa: E402
from test_scenarios import DO, governance  # noqa: E402

PORT = 18766
STAMP = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3})Z ")


def _at(line: str) -> float | None:
    found = STAMP.match(line)
    if not found:
        return None
    return datetime.fromisoformat(found.group(1)).timestamp() * 1000


def pre_tool_use_ms(log: str, transport: str) -> list[float]:
    """Every PreToolUse hook's time in a Claude Code debug log, in order."""
    times: list[float] = []
    started: float | None = None
    for line in log.splitlines():
        if transport == "command":
            found = re.search(r"Hooks: PreToolUse:\S+ \[.*\] finished with status \d+ \((\d+)ms\)",
                              line)
            if found:
                times.append(float(found.group(1)))
            continue
        if transport == "http" and "Hooks: HTTP hook POST" in line:
            started = _at(line) if "/hooks/PreToolUse" in line else None
        elif transport == "mcp" and "Hooks: mcp_tool calling" in line:
            started = _at(line)
        elif started is not None and (
                (transport == "http" and "Hooks: HTTP hook response status" in line)
                or (transport == "mcp" and "Hook PreToolUse:" in line and " success:" in line)):
            ended = _at(line)
            if ended is not None:
                times.append(ended - started)
            started = None
        elif started is not None and transport == "mcp" and "Hook " in line and " success:" in line:
            started = None   # another event's mcp_tool hook
    return times


def run_once(runner: ClaudeRunner, work: Path, transport: str, calls: int) -> list[float]:
    project = Path(tempfile.mkdtemp(prefix=f"{transport}-", dir=work)) / "project"
    (project / ".claude").mkdir(parents=True)
    server = None
    bridge = None
    flags = {"command": [], "http": ["--http", "--port", str(PORT)],
             "mcp": ["--mcp-hooks"]}[transport]
    governance("install", "--project", str(project), "--no-sandbox", *flags)
    governance("state", "set", DO, "--project", str(project))
    if transport == "http":
        socket_path = Path(tempfile.mkdtemp(prefix="gov-", dir="/tmp")) / "server.sock"
        server = serve(project, socket_path)
        bridge = (PORT, socket_path)
    home = project.parent / "home"
    home.mkdir()
    turns = [[ToolUse("Bash", {"command": f"true {i}", "description": "work"})]
             for i in range(calls)]
    try:
        run = runner.run(project, f"timing {transport}", [*turns, [Text("done")]], home=home,
                         args=["--debug", "hooks"], bridge=bridge, timeout=300)
    finally:
        if server is not None:
            stop(server)
            socket_path.parent.rmdir()   # the server removed its socket
    if run.returncode != 0:
        raise SystemExit(f"{transport}: claude exited {run.returncode}: {run.stderr[-1500:]}")
    logs = sorted((home / ".claude" / "debug").glob("*.txt"))
    text = "\n".join(p.read_text(errors="replace") for p in logs)
    times = pre_tool_use_ms(text, transport)
    if len(times) != calls:
        raise SystemExit(f"{transport}: {len(times)} PreToolUse hook times in the debug log for "
                         f"{calls} calls")
    return times


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="hook_timing", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=30, help="Bash calls per run (default 30)")
    parser.add_argument("--rounds", type=int, default=3, help="runs per transport (default 3)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if args.calls < 2 or args.rounds < 1:
        parser.error("--calls must be at least 2 and --rounds at least 1")
    binary = install_claude()
    work = Path(tempfile.mkdtemp(prefix="hook-timing-"))
    runner = ClaudeRunner(binary=binary, isolate=network_isolation_available(), workdir=work)
    transports = ("command", "http", "mcp")
    pre: dict[str, list[float]] = {t: [] for t in transports}
    cold: dict[str, list[float]] = {t: [] for t in transports}
    for _ in range(args.rounds):   # interleaved, so drift on the machine hits all alike
        for transport in transports:
            times = run_once(runner, work, transport, args.calls)
            cold[transport].append(times[0])
            pre[transport].extend(times[1:])
    rows = []
    for transport in transports:
        warm = sorted(pre[transport])
        rows.append({"transport": transport, "calls": len(warm),
                     "p50_ms": statistics.median(warm),
                     "p90_ms": warm[int(0.9 * (len(warm) - 1))], "max_ms": warm[-1],
                     "first_call_ms": statistics.median(cold[transport])})
    if args.json:
        print(json.dumps({"calls": args.calls, "rounds": args.rounds, "rows": rows}, indent=2))
        return 0
    print(f"PreToolUse hook time as Claude Code logs it: {args.calls} Bash calls per run, "
          f"{args.rounds} run(s) per transport, DO state")
    print("| Hooks | p50 | p90 | max | first call of a session |")
    print("|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['transport']} | {row['p50_ms']:.0f} ms | {row['p90_ms']:.0f} ms | "
              f"{row['max_ms']:.0f} ms | {row['first_call_ms']:.0f} ms |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
