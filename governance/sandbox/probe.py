"""Whether Claude Code's Bash sandbox can start on this machine, and what to do where it cannot.

Linux needs bubblewrap (``bwrap``) and ``socat`` on ``PATH`` and unprivileged user namespaces; the
probe starts ``bwrap`` the way a sandboxed command starts (read-only root, private network and
process namespaces) rather than trusting the binaries' presence. macOS needs ``sandbox-exec``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass, field

LINUX_TOOLS = {"bwrap": "bubblewrap", "socat": "socat"}


@dataclass
class Probe:
    """The verdict: ``ok``, and where not, what is wrong and how to fix it."""

    ok: bool
    platform: str
    problems: list[str] = field(default_factory=list)
    fixes: list[str] = field(default_factory=list)

    def explain(self) -> str:
        if self.ok:
            return f"the sandbox can start here ({self.platform})"
        return "; ".join(self.problems) + ". Fix: " + "; ".join(self.fixes)


def probe(timeout: float = 15.0) -> Probe:
    if sys.platform == "darwin":
        if shutil.which("sandbox-exec"):
            return Probe(True, "macOS (Seatbelt)")
        return Probe(False, "macOS", ["sandbox-exec is not on PATH"],
                     ["use the system's /usr/bin/sandbox-exec (PATH must include /usr/bin)"])
    if not sys.platform.startswith("linux"):
        return Probe(False, sys.platform, [f"Claude Code has no Bash sandbox on {sys.platform}"],
                     ["run Claude Code on Linux or macOS, or rely on tamper evidence alone"])
    missing = [package for tool, package in LINUX_TOOLS.items() if not shutil.which(tool)]
    if missing:
        return Probe(False, "Linux", [f"{' and '.join(missing)} not installed (not on PATH)"],
                     [f"sudo apt-get install {' '.join(missing)} (dnf/pacman: the same package "
                      "names)"])
    bwrap = shutil.which("bwrap") or "bwrap"
    try:
        done = subprocess.run([bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-net",
                               "--unshare-pid", "--die-with-parent", "--", "true"],
                              capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Probe(False, "Linux (bubblewrap)", [f"bwrap could not run ({exc})"],
                     ["reinstall bubblewrap"])
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip().splitlines()
        return Probe(False, "Linux (bubblewrap)",
                     [f"bwrap cannot create a sandbox: {said[-1] if said else done.returncode}"],
                     ["allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1;"
                      " on Ubuntu 24.04+ also kernel.apparmor_restrict_unprivileged_userns=0), or "
                      "run where containers may create namespaces"])
    return Probe(True, "Linux (bubblewrap + socat)")
