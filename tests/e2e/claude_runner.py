"""Run the real Claude Code client against the fake model, offline.

``ClaudeRunner.run`` starts a launcher process (this file run as a script), inside
``unshare -n`` when the kernel allows it, so the client, its hooks and the fake model
share a private network namespace that holds only loopback. The launcher brings the
loopback interface up, serves the scripted model, runs ``claude -p ... --output-format
stream-json --verbose`` in the project with a throw-away HOME and writes everything it
saw to a JSON file, which the runner reads back.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fake_api import FakeModel, RequestLog, Turn, turns_from_json, turns_to_json

HERE = Path(__file__).resolve().parent
INSTALL_SCRIPT = HERE / "install_claude.sh"
PINNED_VERSION = "2.1.330"
DEFAULT_TIMEOUT = 90.0

# Section 10 of the hooks reference: what the client needs to run offline and quietly.
OFFLINE_ENV = {
    "ANTHROPIC_API_KEY": "test",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "IS_SANDBOX": "1",  # lets root use --permission-mode bypassPermissions
    # a sandbox proxy a session start launches stops by itself once the run is over
    "GOVERNANCE_SANDBOX_PROXY_IDLE": "30",
    # Belt and braces when no network namespace is available: anything but the fake model
    # goes to a closed loopback port.
    "HTTP_PROXY": "http://127.0.0.1:9",
    "HTTPS_PROXY": "http://127.0.0.1:9",
    "NO_PROXY": "127.0.0.1,localhost",
}


@dataclass(frozen=True)
class FollowUp:
    """A further prompt in the same session, sent when the previous one has its result.

    ``before`` (argv) runs first, e.g. a user changing the cycle state from a terminal.
    """

    prompt: str
    before: Sequence[str] = ()
    before_cwd: str | None = None
    before_env: Mapping[str, str] | None = None


class ClaudeUnavailable(Exception):
    """The pinned client could not be installed or does not run here."""


def install_claude(cache: Path | None = None) -> Path:
    """Install (or reuse) the pinned client; return the path of its binary."""
    env = dict(os.environ)
    if cache is not None:
        env["GOVERNANCE_E2E_CACHE"] = str(cache)
    if shutil.which("npm") is None:
        raise ClaudeUnavailable("npm is not installed, so Claude Code cannot be installed")
    try:
        done = subprocess.run(
            ["bash", str(INSTALL_SCRIPT)], env=env, capture_output=True, text=True, timeout=300,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise ClaudeUnavailable("installing Claude Code timed out after 300 s") from exc
    if done.returncode != 0:
        lines = [line for line in done.stderr.strip().splitlines()
                 if line.strip() and "complete log of this run" not in line]
        tail = "; ".join(lines[:2]) or "no output"
        raise ClaudeUnavailable(
            f"installing @anthropic-ai/claude-code@{PINNED_VERSION} failed: {tail}"
        )
    return Path(done.stdout.strip().splitlines()[-1])


def network_isolation_available() -> bool:
    """Whether ``unshare -n`` (a private network namespace) works for this user.

    ``GOVERNANCE_E2E_UNSHARE=0`` turns the namespace off (plain loopback), e.g. to debug.
    """
    if os.environ.get("GOVERNANCE_E2E_UNSHARE") == "0" or shutil.which("unshare") is None:
        return False
    try:
        return subprocess.run(["unshare", "-n", "true"], capture_output=True, timeout=10,
                              check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@dataclass
class ClaudeRun:
    """What one client run produced."""

    returncode: int
    events: list[dict[str, Any]]
    stdout: str
    stderr: str
    log: RequestLog
    isolated: bool
    timed_out: bool
    seconds: float
    project: Path

    @property
    def result(self) -> dict[str, Any]:
        for event in reversed(self.events):
            if event.get("type") == "result":
                return dict(event)
        raise AssertionError(f"no result event; stderr: {self.stderr[-2000:]}")

    @property
    def permission_denials(self) -> list[dict[str, Any]]:
        return list(self.result.get("permission_denials", []))

    def tool_results(self) -> list[dict[str, Any]]:
        """tool_result blocks as they appear in the user-facing stream."""
        out: list[dict[str, Any]] = []
        for event in self.events:
            if event.get("type") != "user":
                continue
            content = event.get("message", {}).get("content")
            if isinstance(content, list):
                out.extend(b for b in content if b.get("type") == "tool_result")
        return out


@dataclass
class InteractiveRun:
    """What an interactive (terminal) session showed."""

    screen: str  # every distinct screen seen, separated by form feeds
    found: bool  # whether ``wait_for`` appeared
    log: RequestLog

    def shows(self, text: str) -> bool:
        """Whether ``text`` was on screen (the renderer drops or moves spaces)."""
        return "".join(text.split()) in "".join(self.screen.split())


@dataclass
class ClaudeRunner:
    """Runs the pinned client in a project with a throw-away HOME.

    ``wrap`` (optional) builds the launcher's command line instead of the plain ``unshare -n``:
    it gets the launcher's argv and whether to isolate the network, and returns the argv to run
    (e.g. ``tests.managed_root.ManagedRoot.wrap``, one ``unshare`` that adds a private /etc and,
    with ``network=True``, the private network). ``wrap_env`` is added to the environment of
    that command (not the client's), e.g. the variables the wrapper itself reads.
    """

    binary: Path
    isolate: bool
    workdir: Path
    extra_env: dict[str, str] = field(default_factory=dict)
    wrap: Callable[[list[str], bool], list[str]] | None = None
    wrap_env: dict[str, str] = field(default_factory=dict)

    def _launcher(self, spec_path: Path) -> list[str]:
        """The command that runs the launcher: through ``wrap``, else in ``unshare -n`` when
        isolated."""
        command = [sys.executable, str(Path(__file__).resolve()), str(spec_path)]
        if self.wrap is not None:
            return self.wrap(command, self.isolate)
        return ["unshare", "-n", *command] if self.isolate else command

    def _launch_env(self) -> dict[str, str] | None:
        return {**os.environ, **self.wrap_env} if self.wrap_env else None

    def run(
        self,
        project: Path,
        prompt: str,
        turns: Sequence[Turn] = (),
        *,
        other_scripts: Mapping[str, Sequence[Turn]] | None = None,
        permission_mode: str | None = "bypassPermissions",
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        home: Path | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        follow_ups: Sequence[FollowUp] = (),
        sink: tuple[int, Path] | None = None,
        bridge: tuple[int, Path] | None = None,
    ) -> ClaudeRun:
        """Run ``claude -p prompt``; the fake model answers ``prompt`` with ``turns``.

        ``other_scripts`` maps a substring of another conversation's first user message
        (a sub-agent's prompt) to its turns. With ``follow_ups`` the prompts go in on stdin
        (``--input-format stream-json``), one after the other in one session; ``turns``
        then covers the turns of all of them in order. ``sink`` (port, log file): a TCP server
        on 127.0.0.1:port beside the client (in its network namespace) that appends whatever
        reaches it to the log file. ``bridge`` (port, unix socket): 127.0.0.1:port beside the
        client forwards every connection to the unix socket (a server outside the client's
        network namespace, such as ``governance serve --socket``).
        """
        scratch = Path(tempfile.mkdtemp(prefix="run-", dir=self.workdir))
        home = home or scratch / "home"
        home.mkdir(parents=True, exist_ok=True)
        if follow_ups:
            argv = [str(self.binary), "-p", "--input-format", "stream-json"]
        else:
            argv = [str(self.binary), "-p", prompt]
        argv += ["--output-format", "stream-json", "--verbose"]
        if permission_mode is not None:
            argv += ["--permission-mode", permission_mode]
        argv += list(args)
        child_env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "TMPDIR": str(scratch),
            **OFFLINE_ENV,
            **self.extra_env,
            **(env or {}),
        }
        scripts = {prompt: turns_to_json(turns)}
        for key, more in (other_scripts or {}).items():
            scripts[key] = turns_to_json(more)
        output_path = scratch / "launcher-output.json"
        spec: dict[str, Any] = {
            "argv": argv, "cwd": str(project), "env": child_env, "scripts": scripts,
            "timeout": timeout, "output": str(output_path),
            "loopback_up": self.isolate,
            "sink": [sink[0], str(sink[1])] if sink else None,
            "bridge": [bridge[0], str(bridge[1])] if bridge else None,
            "prompts": [{"prompt": prompt, "before": []}] + [
                {"prompt": f.prompt, "before": list(f.before), "cwd": f.before_cwd,
                 "env": dict(f.before_env or {})} for f in follow_ups
            ] if follow_ups else [],
        }
        spec_path = scratch / "launcher-spec.json"
        spec_path.write_text(json.dumps(spec))
        started = time.monotonic()
        done = subprocess.run(self._launcher(spec_path), capture_output=True, text=True,
                              timeout=timeout + 30, check=False, env=self._launch_env())
        seconds = time.monotonic() - started
        if not output_path.exists():
            raise AssertionError(f"launcher failed ({done.returncode}): {done.stderr[-3000:]}")
        out = json.loads(output_path.read_text())
        events = []
        for line in out["stdout"].splitlines():
            line = line.strip()
            if line.startswith("{"):
                events.append(json.loads(line))
        return ClaudeRun(
            returncode=out["returncode"], events=events, stdout=out["stdout"],
            stderr=out["stderr"], log=RequestLog.from_json(out["requests"]),
            isolated=self.isolate, timed_out=out["timed_out"], seconds=seconds, project=project,
        )


    def run_interactive(
        self,
        project: Path,
        prompt: str,
        turns: Sequence[Turn],
        *,
        wait_for: str,
        env: Mapping[str, str] | None = None,
        timeout: float = 40.0,
        args: Sequence[str] = (),
    ) -> InteractiveRun:
        """Start ``claude`` in a terminal (tmux, 160x40), type ``prompt`` and read the screen
        until ``wait_for`` appears (spaces ignored) or ``timeout`` passes.

        The throw-away HOME is seeded so that no first-run dialog appears: onboarding done,
        the project trusted, the test API key approved.
        """
        scratch = Path(tempfile.mkdtemp(prefix="tty-", dir=self.workdir))
        home = scratch / "home"
        (home / ".claude").mkdir(parents=True)
        (home / ".claude.json").write_text(json.dumps({
            "hasCompletedOnboarding": True, "theme": "dark", "bypassPermissionsModeAccepted": True,
            "customApiKeyResponses": {"approved": [OFFLINE_ENV["ANTHROPIC_API_KEY"][-20:]],
                                      "rejected": []},
            "projects": {str(project): {"hasTrustDialogAccepted": True,
                                        "hasCompletedProjectOnboarding": True}},
        }))
        child_env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8",
            "TERM": "xterm-256color", "HOME": str(home), "TMPDIR": str(scratch),
            **OFFLINE_ENV, **self.extra_env, **(env or {}),
        }
        output_path = scratch / "launcher-output.json"
        spec: dict[str, Any] = {
            "argv": [str(self.binary), *args], "cwd": str(project), "env": child_env,
            "scripts": {prompt: turns_to_json(turns)}, "timeout": timeout,
            "output": str(output_path), "loopback_up": self.isolate, "prompts": [],
            "interactive": {"prompt": prompt, "wait_for": wait_for},
        }
        spec_path = scratch / "launcher-spec.json"
        spec_path.write_text(json.dumps(spec))
        done = subprocess.run(self._launcher(spec_path), capture_output=True, text=True,
                              timeout=timeout + 60, check=False, env=self._launch_env())
        if not output_path.exists():
            raise AssertionError(f"launcher failed ({done.returncode}): {done.stderr[-3000:]}")
        out = json.loads(output_path.read_text())
        return InteractiveRun(out["stdout"], out["returncode"] == 0,
                              RequestLog.from_json(out["requests"]))


def _loopback_up() -> None:
    """Bring ``lo`` up in a fresh network namespace (it starts down)."""
    import fcntl
    import socket
    import struct

    get_flags, set_flags, iff_up = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH", b"lo", 0)
        flags = struct.unpack("16sH", fcntl.ioctl(sock, get_flags, request))[1]
        fcntl.ioctl(sock, set_flags, struct.pack("16sH", b"lo", flags | iff_up))


def _text(value: str | bytes | None) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value or ""


def _run_once(spec: dict[str, Any], env: dict[str, str]) -> tuple[int, str, str, bool]:
    try:
        done = subprocess.run(spec["argv"], cwd=spec["cwd"], env=env, capture_output=True,
                              text=True, timeout=spec["timeout"], stdin=subprocess.DEVNULL,
                              check=False)
    except subprocess.TimeoutExpired as exc:
        return -9, _text(exc.stdout), _text(exc.stderr), True
    return done.returncode, done.stdout, done.stderr, False


def _converse(spec: dict[str, Any], env: dict[str, str]) -> tuple[int, str, str, bool]:
    """Send the prompts on stdin one by one, each after the previous one's result."""
    import threading

    prompts = list(spec["prompts"])
    with tempfile.TemporaryFile("w+") as err:
        child = subprocess.Popen(spec["argv"], cwd=spec["cwd"], env=env, stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=err, text=True)
        assert child.stdin is not None and child.stdout is not None
        timer = threading.Timer(spec["timeout"], child.kill)
        timer.start()

        def send(item: dict[str, Any]) -> None:
            if item["before"]:
                subprocess.run(item["before"], cwd=item.get("cwd"), check=True, timeout=60,
                               env={**os.environ, **item.get("env", {})}, capture_output=True)
            message = {"type": "user", "message": {"role": "user", "content": item["prompt"]}}
            assert child.stdin is not None
            child.stdin.write(json.dumps(message) + "\n")
            child.stdin.flush()

        lines: list[str] = []
        try:
            send(prompts.pop(0))
            for line in child.stdout:
                lines.append(line)
                if line.startswith("{") and json.loads(line).get("type") == "result":
                    if prompts:
                        send(prompts.pop(0))
                    else:
                        child.stdin.close()
            child.wait()
        finally:
            timed_out = not timer.is_alive() and child.returncode == -9
            timer.cancel()
        err.seek(0)
        return child.returncode, "".join(lines), err.read(), timed_out


def _squeeze(text: str) -> str:
    return "".join(text.split())


def _terminal(spec: dict[str, Any], env: dict[str, str]) -> tuple[int, str, str, bool]:
    """Drive an interactive session in a private tmux server (a real terminal emulator, so
    the screen reads as a person sees it); returncode 0 = ``wait_for`` appeared."""
    import shlex

    socket = os.path.join(env["TMPDIR"], "tmux.sock")
    tmux = ["tmux", "-S", socket, "-f", "/dev/null"]
    assignments = " ".join(shlex.quote(f"{key}={value}") for key, value in env.items())
    command = f"exec env -i {assignments} " + " ".join(shlex.quote(a) for a in spec["argv"])
    subprocess.run([*tmux, "new-session", "-d", "-s", "e2e", "-x", "160", "-y", "40",
                    "-c", spec["cwd"], command], check=True, timeout=30)
    deadline = time.monotonic() + spec["timeout"]
    screens: list[str] = []

    def wait(text: str) -> bool:
        wanted = _squeeze(text)
        while time.monotonic() < deadline:
            shown = subprocess.run([*tmux, "capture-pane", "-p", "-t", "e2e"], text=True,
                                   capture_output=True, timeout=30, check=False).stdout
            if not screens or screens[-1] != shown:
                screens.append(shown)
            if wanted in _squeeze(shown):
                return True
            time.sleep(0.2)
        return False

    try:
        found = False
        if wait("shift+tab"):  # the prompt box is drawn
            subprocess.run([*tmux, "send-keys", "-t", "e2e", "-l", spec["interactive"]["prompt"]],
                           check=True, timeout=30)
            time.sleep(0.3)
            subprocess.run([*tmux, "send-keys", "-t", "e2e", "Enter"], check=True, timeout=30)
            found = wait(spec["interactive"]["wait_for"])
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True, timeout=30, check=False)
    return (0 if found else 1), "\n\f\n".join(screens), "", not found


def _start_sink(port: int, log: Path) -> None:
    """A loopback TCP server that records every connection's first bytes (a daemon thread: it
    stops with the launcher)."""
    import socket
    import threading

    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", port))
    server.listen(16)
    log.write_text("")

    def serve() -> None:
        while True:
            conn, _ = server.accept()
            with conn:
                conn.settimeout(3)
                try:
                    data = conn.recv(4096)
                except OSError:
                    data = b""
                with log.open("ab") as fh:
                    fh.write(b"CONNECTION " + data.replace(b"\n", b" ")[:200] + b"\n")
                try:
                    conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok")
                except OSError:
                    pass

    threading.Thread(target=serve, daemon=True).start()


def _start_bridge(port: int, path: Path) -> None:
    """127.0.0.1:port forwards each connection, both ways, to the unix socket ``path`` (daemon
    threads: they stop with the launcher)."""
    import socket
    import threading

    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", port))
    server.listen(64)

    def pipe(source: socket.socket, target: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                target.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, target):
                try:
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def serve() -> None:
        while True:
            conn, _ = server.accept()
            # no Nagle: an answer written in two parts must not wait for the client's delayed ACK
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                upstream.connect(str(path))
            except OSError:
                conn.close()       # the server is down: the client sees a refused connection
                continue
            threading.Thread(target=pipe, args=(conn, upstream), daemon=True).start()
            threading.Thread(target=pipe, args=(upstream, conn), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()


def _launch(spec_path: Path) -> int:
    spec = json.loads(spec_path.read_text())
    if spec["loopback_up"]:
        _loopback_up()
    scripts = {key: turns_from_json(turns) for key, turns in spec["scripts"].items()}
    if spec.get("sink"):
        _start_sink(int(spec["sink"][0]), Path(spec["sink"][1]))
    if spec.get("bridge"):
        _start_bridge(int(spec["bridge"][0]), Path(spec["bridge"][1]))
    with FakeModel(scripts) as fake:
        env = dict(spec["env"], ANTHROPIC_BASE_URL=fake.url)
        if spec.get("interactive"):
            talk = _terminal
        else:
            talk = _converse if spec["prompts"] else _run_once
        returncode, stdout, stderr, timed_out = talk(spec, env)
        requests = fake.log.to_json()
    Path(spec["output"]).write_text(json.dumps({
        "returncode": returncode, "stdout": stdout, "stderr": stderr,
        "timed_out": timed_out, "requests": requests,
    }))
    return 0


if __name__ == "__main__":
    raise SystemExit(_launch(Path(sys.argv[1])))
