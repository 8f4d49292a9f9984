"""The server soak: ``python -m governance.bench.soak [--minutes 10] [--workers 8]``.

Starts ``governance serve`` for a throwaway project (DO state) on a free loopback port and, for the
given time, sends it a mixed load from several threads:

- good traffic: PreToolUse hook calls, ``cstp.checkGuardrails``, now and then ``cstp.preAction``;
- malformed JSON (to ``/cstp`` and to a hook), JSON nested 100,000 deep, a body that is not UTF-8;
- oversized bodies (announced and sent), missing and wrong tokens, a Basic header;
- unknown methods and paths, invalid params, batch bombs (101 and 10,000 calls, an empty batch,
  100 valid calls);
- slow clients: headers that trickle in, a body that never finishes, connections opened and left.

It checks as it goes: no answer is 5xx, no request without the token gets anything but 401, and
the server stays up. Every minute it prints the server's RSS (its worker processes included)
and what was sent. At the end it stops the server with SIGTERM (exit 0 expected) and verifies
the ledger. Exits 1 on any failed check, or when the RSS grew by more than 25 % from the first
minute to the last. Loopback only, bounded in time; not part of CI (``just soak``).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from governance.install.settings import module_command

RSS_GROWTH_LIMIT = 0.25


class Soak:
    """The shared tallies of the load threads."""

    def __init__(self, port: int, token: str, project: Path, stop_at: float) -> None:
        self.port = port
        self.token = token
        self.project = project
        self.stop_at = stop_at
        self.lock = threading.Lock()
        self.sent: Counter[str] = Counter()
        self.statuses: Counter[int] = Counter()
        self.failures: list[str] = []

    def running(self) -> bool:
        return time.monotonic() < self.stop_at and len(self.failures) < 20

    def tally(self, kind: str, status: int) -> None:
        with self.lock:
            self.sent[kind] += 1
            self.statuses[status] += 1

    def fail(self, what: str) -> None:
        with self.lock:
            self.failures.append(what)
            print(f"FAIL {what}", flush=True)


def _hook_body(project: Path, rng: random.Random) -> bytes:
    command = rng.choice(["git status", "ls -la src | grep auth", "curl https://example.com",
                          "rm -rf build", "python -m pytest -q", "echo $(whoami) > out.txt"])
    return json.dumps({"session_id": f"soak-{rng.randrange(50)}", "transcript_path": "",
                       "cwd": str(project), "hook_event_name": "PreToolUse", "tool_name": "Bash",
                       "tool_input": {"command": command},
                       "tool_use_id": f"toolu_{rng.randrange(10**9)}"}).encode()


ACTION = {"description": "Move session storage from Redis to PostgreSQL",
          "category": "architecture", "stakes": "medium", "confidence": 0.8}


def _rpc(method: str, params: Any, ident: Any = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params, "id": ident}


def _request(soak: Soak, kind: str, method: str, path: str, body: bytes | None,
             headers: dict[str, str], authorised: bool = True) -> None:
    """One request on a fresh connection; checks the status and, without the token, the body."""
    conn = http.client.HTTPConnection("127.0.0.1", soak.port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        data = response.read()
    except (OSError, http.client.HTTPException) as exc:
        if kind == "oversized-sent":   # the server may answer 413 and close while we still send
            soak.tally(kind, 0)
            return
        soak.fail(f"{kind}: {type(exc).__name__}: {exc}")
        return
    finally:
        conn.close()
    soak.tally(kind, response.status)
    if response.status >= 500:
        soak.fail(f"{kind}: {response.status} {data[:200]!r}")
    if not authorised and response.status != 401:
        soak.fail(f"{kind}: without a valid token the answer was {response.status} "
                  f"{data[:200]!r}")


def _good(soak: Soak, rng: random.Random) -> None:
    auth = {"Authorization": f"Bearer {soak.token}", "Content-Type": "application/json"}
    roll = rng.random()
    if roll < 0.6:
        _request(soak, "hook", "POST", "/hooks/PreToolUse", _hook_body(soak.project, rng), auth)
    elif roll < 0.95:
        body = json.dumps(_rpc("cstp.checkGuardrails", {"action": ACTION,
                                                        "agent": {"id": f"a{rng.randrange(5)}"}}))
        _request(soak, "checkGuardrails", "POST", "/cstp", body.encode(), auth)
    else:
        body = json.dumps(_rpc("cstp.preAction", {"action": ACTION, "agent": {"id": "soak"}}))
        _request(soak, "preAction", "POST", "/cstp", body.encode(), auth)


def _bad(soak: Soak, rng: random.Random) -> None:
    auth = {"Authorization": f"Bearer {soak.token}", "Content-Type": "application/json"}
    case = rng.randrange(15)
    if case == 0:
        _request(soak, "malformed-cstp", "POST", "/cstp", b'{"jsonrpc": "2.0", "method": ', auth)
    elif case == 1:
        _request(soak, "malformed-hook", "POST", "/hooks/PreToolUse", b"{not json", auth)
    elif case == 2:
        _request(soak, "deep-json", "POST", "/cstp", b"[" * 100_000 + b"]" * 100_000, auth)
    elif case == 3:
        _request(soak, "not-utf8", "POST", "/hooks/PreToolUse", b'{"a": "\xff\xfe"}', auth)
    elif case == 4:
        _request(soak, "oversized-sent", "POST", "/cstp", b" " * (2 * 1024 * 1024), auth)
    elif case == 5:
        _request(soak, "no-token", "POST", "/cstp",
                 json.dumps(_rpc("cstp.checkGuardrails", {"action": ACTION})).encode(),
                 {"Content-Type": "application/json"}, authorised=False)
    elif case == 6:
        _request(soak, "wrong-token", "POST", "/hooks/PreToolUse",
                 _hook_body(soak.project, rng),
                 {"Authorization": f"Bearer {soak.token[:-2]}xx"}, authorised=False)
    elif case == 7:
        _request(soak, "basic-auth", "GET", "/openapi.json", None,
                 {"Authorization": "Basic dXNlcjpwYXNz"}, authorised=False)
    elif case == 8:
        _request(soak, "unknown-method", "POST", "/cstp",
                 json.dumps(_rpc("cstp.launchMissiles", {})).encode(), auth)
    elif case == 9:
        _request(soak, "invalid-params", "POST", "/cstp",
                 json.dumps(_rpc("cstp.checkGuardrails", {"action": {"stakes": 7}})).encode(),
                 auth)
    elif case == 10:
        bomb = [_rpc("cstp.checkGuardrails", {"action": ACTION}, i)
                for i in range(rng.choice([101, 10_000]))]
        _request(soak, "batch-bomb", "POST", "/cstp", json.dumps(bomb).encode(), auth)
    elif case == 11:
        batch = [_rpc("cstp.checkGuardrails", {"action": ACTION, "agent": {"id": "batch"}}, i)
                 for i in range(100)]
        _request(soak, "batch-100", "POST", "/cstp", json.dumps(batch).encode(), auth)
    elif case == 12:
        _request(soak, "empty-batch", "POST", "/cstp", b"[]", auth)
    elif case == 13:   # a new agent id every time: the rate limiter's table must stay bounded
        body = json.dumps(_rpc("cstp.checkGuardrails", {
            "action": ACTION, "agent": {"id": f"flood-{rng.randrange(10**12)}"}}))
        _request(soak, "agent-flood", "POST", "/cstp", body.encode(), auth)
    else:
        _request(soak, "unknown-path", "POST", "/hooks/NoSuchEvent", b"{}", auth)


def _slow(soak: Soak, rng: random.Random) -> None:
    """A client that trickles its headers, or never finishes its body, or says nothing."""
    case = rng.randrange(3)
    kind = ("slow-headers", "slow-body", "silent")[case]
    with socket.create_connection(("127.0.0.1", soak.port), timeout=30) as sock:
        try:
            if case == 0:
                head = (f"POST /cstp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
                        f"{soak.token}\r\n").encode()
                for byte in head:
                    sock.sendall(bytes([byte]))
                    time.sleep(0.2)
                    if not soak.running():
                        return
            elif case == 1:
                sock.sendall((f"POST /cstp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
                              f"{soak.token}\r\nContent-Length: 1000\r\n\r\n{{").encode())
            answer = sock.recv(4096)   # the server's cut-off (408) or its close
        except OSError:
            answer = b""
    status = int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else 0
    soak.tally(kind, status)
    if status >= 500:
        soak.fail(f"{kind}: {answer[:200]!r}")


def _worker(soak: Soak, seed: int, pick: Callable[[Soak, random.Random], None],
            pause: float) -> None:
    rng = random.Random(seed)
    while soak.running():
        try:
            pick(soak, rng)
        except Exception as exc:   # a check of ours that broke: report, go on
            soak.fail(f"{pick.__name__}: {type(exc).__name__}: {exc}")
        time.sleep(pause * rng.random())


def rss_kib(pid: int) -> int:
    """The resident memory of ``pid`` and of its live children (the server's CSTP worker
    processes), in KiB."""
    total = 0
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    total = int(line.split()[1])
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as fh:
                total += sum(rss_kib(int(child)) for child in fh.read().split())
    except OSError:
        pass
    return total


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="soak", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--workers", type=int, default=8, help="good and bad traffic threads")
    parser.add_argument("--slow", type=int, default=4, help="slow-client threads")
    args = parser.parse_args(argv)
    if args.minutes <= 0 or args.workers < 2 or args.slow < 0:
        parser.error("--minutes must be positive, --workers at least 2, --slow at least 0")
    from governance.bench.server import _get, _project, free_port, stop
    from governance.ledger.verifier import verify
    from governance.server import credential

    work = Path(tempfile.mkdtemp(prefix="governance-soak-"))
    project = _project(work, 1000)
    token = credential.load_or_create(str(project))
    port = free_port()
    # the server as a user starts it: default rate limit (20/s, burst 60 per agent)
    child = subprocess.Popen([*module_command("governance.commands", sys.executable), "serve",
                              "--project", str(project), "--port", str(port)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while _get(f"http://127.0.0.1:{port}/healthz") != 200:
        if child.poll() is not None or time.monotonic() > deadline:
            print("soak: the server did not start")
            return 1
        time.sleep(0.05)
    soak = Soak(port, token, project, time.monotonic() + args.minutes * 60)
    threads = [threading.Thread(target=_worker, args=(soak, i, _good if i % 2 == 0 else _bad,
                                                      0.05), daemon=True)
               for i in range(args.workers)]
    threads += [threading.Thread(target=_worker, args=(soak, 1000 + i, _slow, 1.0), daemon=True)
                for i in range(args.slow)]
    print(f"soak: {args.minutes:g} min against governance serve (pid {child.pid}, port {port}), "
          f"{args.workers} workers, {args.slow} slow clients; project {project}", flush=True)
    for thread in threads:
        thread.start()
    rss: list[int] = []
    minute = 0
    while soak.running():
        time.sleep(min(60.0, max(0.0, soak.stop_at - time.monotonic())))
        if child.poll() is not None:
            soak.fail(f"the server exited with {child.returncode}")
            break
        minute += 1
        rss.append(rss_kib(child.pid))
        with soak.lock:
            total = sum(soak.sent.values())
            five = sum(n for s, n in soak.statuses.items() if s >= 500)
        print(f"minute {minute}: RSS {rss[-1] / 1024:.1f} MiB, {total} requests, {five} 5xx, "
              f"{len(soak.failures)} failed checks", flush=True)
    soak.stop_at = 0
    for thread in threads:
        thread.join(timeout=35)
    code = None
    if child.poll() is None:
        stop(child)
        code = child.returncode
    checks = verify(str(project / ".claude" / "governance"))
    print("sent:", ", ".join(f"{k} {n}" for k, n in sorted(soak.sent.items())))
    print("statuses:", ", ".join(f"{s or 'closed'}: {n}" for s, n in sorted(soak.statuses.items())))
    print(f"SIGTERM: exit {code}; ledger verifies: {checks.ok} ({checks.records} records"
          + (f"; {checks.problem}" if checks.problem else "") + ")")
    growth = (rss[-1] - rss[0]) / rss[0] if len(rss) > 1 and rss[0] else 0.0
    if rss:
        print(f"RSS first minute {rss[0] / 1024:.1f} MiB, last {rss[-1] / 1024:.1f} MiB "
              f"({growth:+.0%})")
    ok = not soak.failures and code == 0 and growth <= RSS_GROWTH_LIMIT and checks.ok
    print("soak: " + ("passed" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
