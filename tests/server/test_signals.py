"""The agent cannot stop governance's resident server with a signal: ``kill`` with its pid or
its group, ``kill -9 -1``, ``pkill``/``killall`` that select it, ``fuser -k`` on its port are
``governance-admin`` while it runs, through the exact installed PreToolUse command. Kills of other
processes, and any kill with no server running, stay what they were."""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hook.test_exec_config import decision, last_primitives, pre
from tests.server.conftest import Served, start_server, stop_server


@pytest.fixture
def served(project: Path) -> Iterator[Served]:
    from tests.helpers import install, set_state

    install(project)
    set_state(project, "implementation-cycle/DO/WORK-31")
    running = start_server(project)
    yield running
    stop_server(running)


def admin(project: Path, command: str) -> bool:
    answer = pre(project, "Bash", {"command": command})
    return decision(answer) == "deny" and "governance-admin" in last_primitives(project)


def test_signals_that_reach_the_server_are_governance_admin(served: Served) -> None:
    pid, port, project = served.process.pid, served.port, served.project
    group = os.getpgid(pid)
    user = pwd.getpwuid(os.getuid()).pw_name
    commands = [
        f"kill {pid}", f"kill -9 {pid}", f"kill -s KILL {pid}", f"kill -KILL -- {pid}",
        f"kill -TERM -{group}", "kill -9 -1", f"sleep 1; kill {pid} 2>/dev/null",
        "pkill -f 'governance.commands serve'", "pkill -f serve", "pkill python",
        f"pkill -9 -u {user}", f"pkill -U {os.getuid()}", f"killall -u {user}",
        f"fuser -k {port}/tcp", f"timeout 5 kill {pid}",
    ]
    comm = Path(f"/proc/{pid}/comm").read_text().strip()
    commands.append(f"killall {comm}")
    for command in commands:
        assert admin(project, command), command


def test_other_kills_stay_quiet_and_unknown_pids_are_asked(served: Served) -> None:
    project = served.project
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        for command in (f"kill {other.pid}", "kill %1", "sleep 30 & kill $!",
                        "pkill -f 'vite --port 5173'", "killall node", "kill -l",
                        "fuser -k 5173/tcp"):
            answer = pre(project, "Bash", {"command": command})
            assert "governance-admin" not in last_primitives(project), command
            assert decision(answer) != "deny", command
        for command in ("kill $(cat /tmp/some.pid)", "pkill -u \"$(id -un)\""):
            pre(project, "Bash", {"command": command})
            assert "shell-unknown" in last_primitives(project), command
    finally:
        other.kill()
        other.wait()


def test_with_no_server_running_a_kill_is_what_it_was(project: Path) -> None:
    from tests.helpers import install, set_state

    install(project)
    set_state(project, "implementation-cycle/DO/WORK-31")
    for command in ("kill -9 -1", "pkill python", "kill $(cat /tmp/some.pid)"):
        pre(project, "Bash", {"command": command})
        assert not {"governance-admin", "shell-unknown"} & set(last_primitives(project)), command


def test_the_kill_would_have_stopped_the_server(served: Served) -> None:
    assert admin(served.project, f"kill {served.process.pid}")
    subprocess.run(["kill", str(served.process.pid)], check=True)     # what the attack does
    assert served.process.wait(20) == 0
