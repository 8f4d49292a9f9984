"""``just bench team``: the team database at scale, and the same server on SQLite beside it.

``python -m governance.bench.team [--decisions 1000000] [--projects 100] [--agents 50]
[--seconds 20] [--rate 50] [--ledger 50000] [--team-calls 100] [--sqlite-decisions N,...]
[--store-cache DIR] [--quick] [--json]``:

1. starts a throwaway PostgreSQL cluster (a Unix socket in a temporary folder), runs ``governance
   db migrate --database URL`` and loads ``--decisions`` generated decisions over ``--projects``
   projects and ``--agents`` agents with ``COPY`` (:mod:`governance.bench.team_load`; each phase
   timed), then verifies them (counts per project, calibration sums against a recount, rows
   against those the engine itself writes, queries through the decision store);
2. starts ``governance serve --database URL`` on a loopback port, serving one of the loaded
   projects, and mints an agent token scoped to each project (the served project's and a
   team-wide one with ``governance token add``, the others in this process). Each call names its
   project in the ``X-Governance-Project`` header; a server that does not honour the header
   refuses a token scoped to another project, so then only the served project is driven (the
   report says which);
3. sends ``cstp.preAction`` (recording, as agents call it) at ``--rate`` requests/s for
   ``--seconds`` seconds, open loop (latency counted from when each call was due), spread over
   the projects' tokens and ``--agents`` declared agents, each call with its own words from the
   loaded vocabulary; then ``cstp.checkGuardrails`` the same way; then ``--team-calls``
   preAction calls with the team-wide token (whose reads span every project), one after another;
4. ships a generated ledger of ``--ledger`` records into the server's central copy (``POST
   /ledger/ship``, batches of 1,000) and reports records/s;
5. does 2 to 4 again on the default engine, SQLite: one project's store of the per-project share
   (``--decisions`` / ``--projects``) and, when ``--store-cache`` holds one, a store of
   ``--decisions`` in one file (``python -m governance.bench.server --store-cache DIR`` makes it).

Targets (issue 30): preAction p50 <= 5 ms and p99 <= 25 ms, checkGuardrails p50 <= 2 ms, ledger
ingest >= 5,000 records/s, on PostgreSQL. Exits 1 when one is missed, 2 when PostgreSQL or
psycopg is missing.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from governance.bench import openloop
from governance.install.settings import module_command

PRE_P50_MS = 5.0
PRE_P99_MS = 25.0
GUARD_P50_MS = 2.0
INGEST_PER_S = 5_000
HEADER = "X-Governance-Project"
CLI = module_command("governance.commands", sys.executable)


# -- the machine -------------------------------------------------------------------------------
def machine() -> dict[str, Any]:
    model = "?"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            model = next((line.split(":", 1)[1].strip() for line in handle
                          if line.startswith("model name")), "?")
        with open("/proc/meminfo", encoding="utf-8") as handle:
            ram = int(next(line.split()[1] for line in handle if line.startswith("MemTotal")))
    except (OSError, StopIteration, ValueError):
        ram = 0
    return {"cpus": os.cpu_count(), "cpu_model": model, "ram_gb": round(ram / 1024 / 1024, 1),
            "python": platform.python_version(), "system": platform.platform(terse=True),
            "load_average_before": round(os.getloadavg()[0], 2),
            "idle_round_trip_ms": idle_round_trip()}


def shared_buffers(ram_gb: float) -> str:
    """PostgreSQL's ``shared_buffers`` for the bench's cluster: a quarter of the machine's memory
    (PostgreSQL's advice for a server of its own), at least 128 MB and at most 8 GB."""
    return f"{int(min(max(ram_gb * 1024 / 4, 128), 8192))}MB"


def idle_round_trip(rounds: int = 50, gap: float = 0.02) -> float:
    """The median ms of one message to another process and back over a loopback socket, each
    sent after ``gap`` s idle, as the bench's calls are: what waking a sleeping process costs
    on this machine. A call crosses several such hops (client, server, database), so on a
    machine where this is large the floor of every latency is too."""
    import socket

    left, right = socket.socketpair()
    child = os.fork()
    if child == 0:    # echo until the other end closes
        left.close()
        try:
            while data := right.recv(16):
                right.sendall(data)
        finally:
            os._exit(0)
    right.close()
    spent = []
    try:
        for _ in range(rounds):
            time.sleep(gap)
            began = time.perf_counter()
            left.sendall(b"x")
            left.recv(16)
            spent.append((time.perf_counter() - began) * 1000)
    finally:
        left.close()
        os.waitpid(child, 0)
    spent.sort()
    return round(spent[len(spent) // 2], 3)


# -- servers and tokens ------------------------------------------------------------------------
def _env(project_id: str | None) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items()
           if key not in ("GOVERNANCE_DATABASE_URL", "GOVERNANCE_PROJECT_ID")}
    if project_id:
        env["GOVERNANCE_PROJECT_ID"] = project_id
    return env


class Server:
    """``governance serve`` for ``project`` on a free loopback port, in its own process group
    (its worker processes stop with it)."""

    def __init__(self, project: Path, database: str | None, project_id: str | None) -> None:
        from governance.bench.server import _get, free_port
        from governance.server import credential

        self.port = free_port()
        self.token = credential.load_or_create(str(project))
        argv = [*CLI, "serve", "--project", str(project), "--port", str(self.port), "--rate", "0",
                *(["--database", database] if database else [])]
        log = project / "bench-server.log"     # a file: a pipe nobody reads could fill up
        with open(log, "wb") as stderr:
            self.child = subprocess.Popen(argv, env=_env(project_id), stdout=subprocess.DEVNULL,
                                          stderr=stderr, start_new_session=True)
        deadline = time.monotonic() + 60
        while _get(f"http://127.0.0.1:{self.port}/healthz") != 200:
            if self.child.poll() is not None or time.monotonic() > deadline:
                self.stop()
                error = log.read_text(errors="replace")[-2000:]
                raise RuntimeError(f"governance serve did not start: {error}")
            time.sleep(0.02)

    def stop(self) -> None:
        if self.child.poll() is None:
            for sig, wait in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
                try:
                    os.killpg(self.child.pid, sig)
                    self.child.wait(wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
                except ProcessLookupError:
                    break
        try:   # worker processes left behind in the group
            os.killpg(self.child.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def mint(agent: str, project: str | None, database: str | None, folder: Path) -> str:
    """A new agent token (``governance token add``; the token is its last line)."""
    argv = [*CLI, "token", "add", "--agent", agent, "--role", "agent", "--expires", "1d",
            *(["--project", project] if project else []),
            *(["--database", database] if database else [])]
    done = subprocess.run(argv, env=_env(None), capture_output=True, text=True, cwd=folder,
                          check=True, timeout=60)
    return done.stdout.strip().splitlines()[-1].strip()


def mint_many(url: str, projects: Sequence[str]) -> dict[str, str]:
    """An agent token scoped to each of ``projects``, minted in this process (what ``governance
    token add`` does, without a process per token)."""
    from governance.server.identity import DatabaseTokens
    from governance.server.identity import mint as minted

    tokens = DatabaseTokens(url)
    return {project: minted(tokens, f"bench-{project}", "agent", project, "1d")[0]
            for project in projects}


# -- requests ----------------------------------------------------------------------------------
def actions(count: int, seed: int) -> list[dict[str, Any]]:
    """``count`` actions, each with its own words from the loaded decisions' vocabulary."""
    from governance.bench.decisions import _sentence, _vocabulary
    from governance.bench.team_load import SEED
    from governance.decisions.fields import CATEGORIES, STAKES

    vocabulary = _vocabulary(random.Random(SEED))
    rng = random.Random(seed)
    return [{"description": _sentence(rng, vocabulary, rng.randint(8, 14)),
             "category": rng.choice(CATEGORIES), "stakes": rng.choice(STAKES),
             "confidence": round(rng.uniform(0.3, 0.95), 2),
             "tags": sorted({rng.choice(vocabulary[:200]) for _ in range(2)}),
             "pattern": _sentence(rng, vocabulary[:300], 2),
             "reasons": [{"type": "analysis", "text": _sentence(rng, vocabulary, 6)}]}
            for _ in range(count)]


class Callers:
    """Who sends each call: (token, project id) pairs; the i-th call is theirs in turn, its
    agent one of ``agents``."""

    def __init__(self, pairs: list[tuple[str, str]], agents: int) -> None:
        self.pairs = pairs
        self.agents = agents

    def request(self, method: str, action: dict[str, Any], index: int) -> openloop.Request:
        from governance.bench.team_load import agent_name

        token, project = self.pairs[index % len(self.pairs)]
        body = {"jsonrpc": "2.0", "method": method, "id": index,
                "params": {"action": action,
                           "agent": {"id": agent_name(index * 7 % self.agents)}}}
        return "/cstp", json.dumps(body).encode(), {
            "Authorization": f"Bearer {token}", "Content-Type": "application/json",
            HEADER: project}


def honours_header(port: int, token: str, project: str) -> bool:
    """Whether the server lets a token scoped to ``project`` (not the one it serves) act there,
    naming it in the header: the header is honoured."""
    import http.client

    body = json.dumps({"jsonrpc": "2.0", "method": "cstp.checkGuardrails", "id": 0,
                       "params": {"action": actions(1, 0)[0]}}).encode()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("POST", "/cstp", body, {"Authorization": f"Bearer {token}",
                                             "Content-Type": "application/json", HEADER: project})
        response = conn.getresponse()
        return openloop.rpc_problem(response.status, response.read()) is None
    finally:
        conn.close()


def drive(server: Server, callers: Callers, args: argparse.Namespace) -> dict[str, Any]:
    """preAction, then checkGuardrails, each at ``--rate`` for ``--seconds``, after a warm-up."""
    count = max(1, int(args.rate * args.seconds))
    found: dict[str, Any] = {}
    for method, seed in (("cstp.preAction", 1), ("cstp.checkGuardrails", 2)):
        warm = partial(_nth, callers, method, actions(20, seed + 10))
        openloop.run(server.port, warm, min(args.rate, 20), min(1.0, args.seconds / 2),
                     openloop.rpc_problem)
        planned = partial(_nth, callers, method, actions(count, seed))
        found[method.split(".")[1]] = openloop.run(server.port, planned, args.rate, args.seconds,
                                                   openloop.rpc_problem)
    return found


def _nth(callers: Callers, method: str, planned: list[dict[str, Any]], index: int
         ) -> openloop.Request:
    return callers.request(method, planned[index % len(planned)], index)


# -- the ledger --------------------------------------------------------------------------------
def make_ledger(folder: Path, records: int) -> tuple[str, int]:
    """A project ledger of ``records`` hash-chained records (about 300 bytes each); its folder
    and its size in bytes."""
    from governance.ledger import chain

    gov = folder / ".claude" / "governance"
    gov.mkdir(parents=True)
    for n in range(records):
        chain.append(str(gov), {"event": "PreToolUse", "tool": "Bash", "n": n,
                                "decision": "allow", "input": chain.digest(n)})
    return str(gov), (gov / chain.LEDGER).stat().st_size


def ingest(server: Server, ledger: str, project: str) -> dict[str, Any]:
    from governance.ledger.shipping import Central, ship

    central = Central(f"http://127.0.0.1:{server.port}", server.token)
    try:
        began = time.perf_counter()
        done = ship(central, ledger, project, batch=1000)
        spent = time.perf_counter() - began
    finally:
        central.close()
    return {"records": done.sent, "stored": done.stored, "seconds": round(spent, 2),
            "per_s": round(done.sent / spent)}


# -- the runs ----------------------------------------------------------------------------------
def run_postgres(args: argparse.Namespace, root: Path, ledger: str, report: dict[str, Any]
                 ) -> None:
    from governance.bench.cluster import Cluster
    from governance.storage import pool

    buffers = shared_buffers(report["machine"]["ram_gb"]) if not args.quick else "128MB"
    report["machine"]["postgresql_shared_buffers"] = buffers
    with Cluster([f"shared_buffers={buffers}", "max_connections=200"]) as cluster:
        try:
            _postgres(args, root, ledger, report, cluster)
        finally:
            pool.close_all()


def _postgres(args: argparse.Namespace, root: Path, ledger: str, report: dict[str, Any],
              cluster: Any) -> None:
    from governance.bench.server import _project
    from governance.bench.team_load import load, project_name, share, verify

    report["machine"]["postgresql"] = cluster.version()
    url = cluster.create("governance")
    folder = _project(root / "postgres", 0, sandbox=False)
    began = time.perf_counter()
    subprocess.run([*CLI, "db", "migrate", "--database", url], env=_env(None), check=True,
                   capture_output=True, cwd=folder, timeout=120)
    migrate_s = round(time.perf_counter() - began, 2)
    start = time.time() - args.decisions * 60.0
    phases = {"migrate_s": migrate_s,
              **load(url, args.decisions, args.projects, args.agents, start)}
    say(args, f"loaded {args.decisions:,} decisions: {phases}")
    began = time.perf_counter()
    checked = verify(url, args.decisions, args.projects, args.agents, start)
    checked["seconds"] = round(time.perf_counter() - began, 2)
    say(args, f"verified: {checked}")
    served = project_name(0)
    projects = [project_name(i) for i in range(args.projects)]
    tokens = {served: mint(f"bench-{served}", served, url, folder)}   # through the CLI
    tokens.update(mint_many(url, projects[1:]))                      # the others at once
    team = mint("bench-team", None, url, folder)
    server = Server(folder, url, served)
    try:
        header = len(projects) > 1 and honours_header(server.port, tokens[projects[1]],
                                                      projects[1])
        pairs = [(tokens[project], project) for project in (projects if header else [served])]
        random.Random(3).shuffle(pairs)
        say(args, f"server on port {server.port}; {HEADER} honoured: {header}")
        cases = drive(server, Callers(pairs, args.agents), args)
        everyone = Callers([(team, project) for project in (projects if header else [served])],
                           args.agents)
        cases["preAction_team"] = openloop.sequential(
            server.port, partial(_nth, everyone, "cstp.preAction", actions(args.team_calls, 4)),
            args.team_calls, openloop.rpc_problem)
        cases["ledger"] = ingest(server, ledger, "team-ledger")
    finally:
        server.stop()
    import psycopg

    with psycopg.connect(url) as conn:
        now: dict[str, int] = dict(conn.execute(
            "SELECT project_id, decisions FROM projects").fetchall())
    grew = sum(now.get(project_name(i), 0) > share(i, args.decisions, args.projects)
               for i in range(args.projects))
    report["runs"].append({
        "engine": "PostgreSQL", "decisions": args.decisions, "projects": args.projects,
        "agents": args.agents, "per_project": args.decisions // args.projects,
        "header_honoured": header, "projects_recorded_into": grew,
        "load": phases, "verified": checked, **cases})


def run_sqlite(args: argparse.Namespace, root: Path, size: int, ledger: str | None,
               report: dict[str, Any]) -> None:
    from governance.bench.server import _project

    cache = Path(args.store_cache) if args.store_cache else None
    cached = bool(cache and (cache / f"decisions-{size}.db").exists())
    began = time.perf_counter()
    folder = _project(root / f"sqlite-{size}", size, cache, sandbox=False)
    made_s = round(time.perf_counter() - began, 2)
    token = mint("bench-sqlite", str(folder), None, folder)
    from governance.storage.database import PROJECT_ENV, project_id

    saved = os.environ.pop(PROJECT_ENV, None)   # the server's id: its folder's (see _env)
    try:
        served = project_id(str(folder))
    finally:
        if saved is not None:
            os.environ[PROJECT_ENV] = saved
    server = Server(folder, None, None)
    try:
        cases = drive(server, Callers([(token, served)], args.agents), args)
        if ledger:
            cases["ledger"] = ingest(server, ledger, "team-ledger")
    finally:
        server.stop()
    report["runs"].append({"engine": "SQLite", "decisions": size, "projects": 1,
                           "per_project": size, "store": "copied from the store cache"
                           if cached else "generated (bench.decisions)",
                           "load": {"total_s": made_s}, **cases})


def say(args: argparse.Namespace, line: str) -> None:
    if not args.json:
        print(line, flush=True)


# -- the report --------------------------------------------------------------------------------
def judged(report: dict[str, Any]) -> dict[str, bool]:
    found: dict[str, bool] = {}
    for run in report["runs"]:
        if run["engine"] != "PostgreSQL":
            continue
        pre, guard = run["preAction"], run["checkGuardrails"]
        found["preAction p50 <= 5 ms"] = pre["p50_ms"] <= PRE_P50_MS
        found["preAction p99 <= 25 ms"] = pre["p99_ms"] <= PRE_P99_MS
        found["no errors"] = not pre["errors"] and not guard["errors"]
        found["checkGuardrails p50 <= 2 ms"] = guard["p50_ms"] <= GUARD_P50_MS
        found["ledger ingest >= 5,000 records/s"] = run["ledger"]["per_s"] >= INGEST_PER_S
    return found


def table(report: dict[str, Any]) -> str:
    rows = ["| engine | decisions | load | preAction p50 / p95 / p99 / max ms | errors "
            "| checkGuardrails p50 / p99 / max ms | errors | ledger ingest records/s |",
            "|---|---|---|---|---|---|---|---|"]
    for run in report["runs"]:
        pre, guard = run["preAction"], run["checkGuardrails"]
        if run["engine"] == "PostgreSQL":
            where = (f"{run['decisions']:,} over {run['projects']} projects, "
                     f"{run['agents']} agents")
            load = f"{run['load']['total_s']:.0f} s (COPY)"
        else:
            where = f"{run['decisions']:,} in one project's file"
            load = (f"{run['load']['total_s']:.0f} s (copied)" if "cache" in run["store"]
                    else f"{run['load']['total_s']:.0f} s (inserts)")
        ledger = f"{run['ledger']['per_s']:,}" if "ledger" in run else "-"
        rows.append(
            f"| {run['engine']} | {where} | {load} | {_four(pre)} | {pre['errors']} | "
            f"{guard['p50_ms']} / {guard['p99_ms']} / {guard['max_ms']} | {guard['errors']} "
            f"| {ledger} |")
        if "preAction_team" in run:
            team = run["preAction_team"]
            rows.append(f"| {run['engine']}, team-wide token: one caller, back to back "
                        f"({team['per_s']:g}/s) | reads all {run['decisions']:,} | | "
                        f"{_four(team)} | {team['errors']} | | | |")
    return "\n".join(rows)


def _four(case: dict[str, Any]) -> str:
    return " / ".join(_ms(case[key]) for key in ("p50_ms", "p95_ms", "p99_ms", "max_ms"))


def _ms(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:g}"


def printed(report: dict[str, Any], args: argparse.Namespace) -> None:
    box = report["machine"]
    print(f"\nmachine: {box['cpus']} CPUs ({box['cpu_model']}), {box['ram_gb']} GB RAM, "
          f"PostgreSQL {box.get('postgresql', '-')} (shared_buffers "
          f"{box.get('postgresql_shared_buffers', '-')}), Python {box['python']}, {box['system']}; "
          f"load average {box['load_average_before']} before, {box['load_average_after']} after; "
          f"a message to an idle process and back {box['idle_round_trip_ms']} ms")
    print(f"calls: {args.rate:g}/s for {args.seconds:g} s each, open loop, latency from when "
          f"each call was due; preAction records (auto_record); server --rate 0")
    for run in report["runs"]:
        extra = ""
        if run["engine"] == "PostgreSQL":
            extra = (f" {HEADER} honoured: {run['header_honoured']}; recorded into "
                     f"{run['projects_recorded_into']} projects; load phases {run['load']}")
        for case in ("preAction", "checkGuardrails"):
            if run[case]["error_kinds"]:
                extra += f"; {case} errors {run[case]['error_kinds']}"
        print(f"{run['engine']} {run['decisions']:,}:{extra}")
    print()
    print(table(report))
    print()
    for target, met in report["targets"].items():
        print(f"{target}: {'met' if met else 'MISSED'}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m governance.bench.team",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--decisions", type=int, default=1_000_000,
                        help="decisions loaded into PostgreSQL (default 1,000,000)")
    parser.add_argument("--projects", type=int, default=100, help="projects (default 100)")
    parser.add_argument("--agents", type=int, default=50, help="agents (default 50)")
    parser.add_argument("--seconds", type=float, default=20, help="seconds per case (default 20)")
    parser.add_argument("--rate", type=float, default=50, help="calls per second (default 50)")
    parser.add_argument("--ledger", type=int, default=50_000,
                        help="ledger records shipped (default 50,000)")
    parser.add_argument("--team-calls", type=int, default=100,
                        help="preAction calls with a team-wide token, one after another "
                             "(default 100)")
    parser.add_argument("--sqlite-decisions", metavar="N,...",
                        help="SQLite stores to compare (default: the per-project share, and "
                             "--decisions when --store-cache holds a store of that size)")
    parser.add_argument("--store-cache", metavar="DIR",
                        help="reuse SQLite stores kept there (decisions-N.db), keep new ones")
    parser.add_argument("--no-sqlite", action="store_true", help="PostgreSQL only")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 1,000 decisions, 3 projects, 10 calls/s for 1 s")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if args.quick:   # smaller defaults; sizes given on the command line still win
        parser.set_defaults(decisions=1_000, projects=3, agents=4, seconds=1.0, rate=10.0,
                            ledger=1_000, team_calls=10)
        args = parser.parse_args(argv)
    from governance.bench.cluster import missing

    why = missing()
    if why:
        print(f"no team bench: {why}", file=sys.stderr)
        return 2
    if args.sqlite_decisions:
        sizes = [int(n) for n in args.sqlite_decisions.split(",") if n]
    else:
        sizes = [max(1, args.decisions // args.projects)]
        if args.store_cache and (Path(args.store_cache) / f"decisions-{args.decisions}.db"
                                 ).exists():
            sizes.append(args.decisions)
    report: dict[str, Any] = {"machine": machine(), "command": " ".join(
        ["python -m governance.bench.team", *(argv if argv is not None else sys.argv[1:])]),
        "rate": args.rate, "seconds": args.seconds, "runs": []}
    root = Path(tempfile.mkdtemp(prefix="governance-bench-team-"))
    try:
        began = time.perf_counter()
        ledger, size = make_ledger(root / "ledger", args.ledger)
        report["ledger"] = {"records": args.ledger, "bytes_per_record": size // max(1,
                                                                                     args.ledger),
                            "made_s": round(time.perf_counter() - began, 2)}
        run_postgres(args, root, ledger, report)
        if not args.no_sqlite:
            for index, size in enumerate(sizes):
                run_sqlite(args, root, size, ledger if index == 0 else None, report)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    report["machine"]["load_average_after"] = round(os.getloadavg()[0], 2)
    report["targets"] = judged(report)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        printed(report, args)
    return 0 if all(report["targets"].values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
