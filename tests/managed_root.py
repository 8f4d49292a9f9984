"""A private ``/etc`` for tests of the managed (organisation) layer: no test touches the real one.

``ManagedRoot(tmp_path).wrap(cmd)`` runs ``cmd`` in a private mount namespace (``unshare -m``,
with a user namespace mapping the caller to root when the caller is not root) where ``/etc`` is an
overlay: the real ``/etc`` underneath, and a temp folder on top that receives every write.
``root.etc`` is that folder: write ``root.etc / "claude-code" / ...`` before a run and the command
sees ``/etc/claude-code/...``; read it after a run to see what the command wrote there.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

_MOUNT = ('mount -t overlay overlay -o "lowerdir=/etc,upperdir=$GOV_TEST_UPPER,'
          'workdir=$GOV_TEST_WORK" /etc && exec "$@"')


def _unshare(extra: tuple[str, ...] = ()) -> list[str]:
    flags = "-m" if os.geteuid() == 0 else "-rm"
    return ["unshare", flags, *extra, "--", "sh", "-c", _MOUNT, "sh"]


@functools.cache
def unavailable() -> str:
    """Why the private /etc cannot be made here ("" when it can)."""
    if not sys.platform.startswith("linux"):
        return "the managed layer's tests need Linux mount namespaces"
    if shutil.which("unshare") is None:
        return "`unshare` (util-linux) is not installed"
    probe = Path(os.environ.get("TMPDIR", "/tmp")) / f"gov-managed-probe-{os.getpid()}"
    (probe / "u").mkdir(parents=True, exist_ok=True)
    (probe / "w").mkdir(exist_ok=True)
    try:
        done = subprocess.run(
            [*_unshare(), "test", "-d", "/etc"], capture_output=True, text=True, timeout=20,
            env={**os.environ, "GOV_TEST_UPPER": str(probe / "u"), "GOV_TEST_WORK": str(probe / "w")},
            check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"`unshare -m` with an overlay on /etc failed: {exc}"
    finally:
        shutil.rmtree(probe, ignore_errors=True)
    if done.returncode != 0:
        return ("a private mount namespace with an overlay on /etc is not allowed here "
                f"(`unshare -m` said: {done.stderr.strip()[:200]})")
    return ""


def require() -> None:
    reason = unavailable()
    if reason:
        pytest.skip(reason)


class ManagedRoot:
    """A private /etc overlay rooted in ``base``."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.etc = base / "etc-upper"
        self.work = base / "etc-work"
        self.etc.mkdir(parents=True, exist_ok=True)
        self.work.mkdir(parents=True, exist_ok=True)

    @property
    def managed(self) -> Path:
        """What the wrapped commands see as /etc/claude-code."""
        return self.etc / "claude-code"

    @property
    def org(self) -> Path:
        """What the wrapped commands see as /etc/claude-code/governance."""
        return self.managed / "governance"

    def env(self, env: dict[str, str] | None = None) -> dict[str, str]:
        return {**(os.environ if env is None else env), "GOV_TEST_UPPER": str(self.etc),
                "GOV_TEST_WORK": str(self.work)}

    def wrap(self, command: list[str], network: bool = False) -> list[str]:
        """``command`` run inside the private /etc (and a private network with ``network``)."""
        return [*_unshare(("-n",) if network else ()), *command]

    def run(self, command: list[str], env: dict[str, str] | None = None, timeout: float = 60,
            **kw: object) -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.wrap(command), env=self.env(env), capture_output=True,
                              text=True, timeout=timeout, check=False, **kw)  # type: ignore[call-overload]
