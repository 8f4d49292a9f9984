"""``governance install --managed`` and ``uninstall --managed``: the managed layer, written as root
for every user of the machine (``install.managed`` holds the registration, ``install.org_files``
the organisation's files). Here, in the CLI layer, it is joined with the sandbox backstop
(``sandbox.config``), which sits above ``install``.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from governance.errors import InstallError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from governance.sandbox.probe import Probe


def _words(args: argparse.Namespace, command: str) -> list[str]:
    """The arguments of this ``--managed`` call, for the command to run as root."""
    words = [command, "--managed"]
    if command == "install":
        words += ["--fail-closed"] if args.fail_closed else []
        words += [] if args.session_hooks else ["--no-session-hooks"]
        words += {True: ["--sandbox"], False: ["--no-sandbox"], None: []}[args.sandbox]
        words += {True: ["--managed-only"], False: ["--no-managed-only"], None: []}[args.managed_only]
        words += ["--org-key", os.path.abspath(args.org_key)] if args.org_key else []
        words += ["--python", os.path.abspath(args.python)] if args.python else []
    return words


def require_root(args: argparse.Namespace, command: str) -> None:
    """Refuse, naming the exact command to run, where this process may not write the managed
    layer."""
    from governance.install import managed

    problem = managed.permission_problem()
    if problem:
        raise InstallError(f"`governance {command} --managed` changes Claude Code's managed "
                           f"settings, but {problem}; nothing was changed",
                           fix=f"run it as root: {managed.sudo_command(_words(args, command))}")


def _user_probe() -> Probe:
    """Whether the sandbox can start for the users Claude Code runs as: the probe, and where it
    ran as root (who may create namespaces where users may not), bubblewrap again as ``nobody``,
    as ``sandbox.probe`` starts it. A managed ``failIfUnavailable`` on a machine whose users
    cannot start it would stop every session."""
    import shutil
    import subprocess
    import sys

    from governance.sandbox.probe import Probe, probe

    verdict = probe()
    setpriv, bwrap = shutil.which("setpriv"), shutil.which("bwrap")
    if not verdict.ok or os.geteuid() != 0 or not sys.platform.startswith("linux") \
            or setpriv is None or bwrap is None:
        return verdict
    try:
        done = subprocess.run([setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", bwrap,
                               "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-net",
                               "--unshare-pid", "--die-with-parent", "--", "true"],
                              capture_output=True, text=True, timeout=15, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Probe(False, verdict.platform, [f"bwrap could not run as a user ({exc})"],
                     ["reinstall bubblewrap"])
    if done.returncode == 0:
        return verdict
    said = (done.stderr or done.stdout).strip().splitlines()
    return Probe(False, verdict.platform,
                 [f"bwrap cannot create a sandbox for a user who is not root: "
                  f"{said[-1] if said else done.returncode}"],
                 ["allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1;"
                  " on Ubuntu 24.04+ also kernel.apparmor_restrict_unprivileged_userns=0)"])


def _managed_sandbox(args: argparse.Namespace, data: dict[str, Any], manifest: dict[str, Any],
                     python: str) -> str:
    """The sandbox backstop in the managed settings: only its part that holds without a project
    (``enabled``, ``allowUnsandboxedCommands: false``, ``failIfUnavailable: true`` and our
    installation and the managed folder in ``filesystem.denyWrite``). The network rule follows a
    project's state and the proxy is a project's, so ``governance sandbox on`` in a project adds
    those. ``--sandbox`` insists, ``--no-sandbox`` takes ours back, neither keeps what is there
    (or turns it on where users can start it)."""
    from governance.project import installation_paths, managed_dir, managed_settings_path
    from governance.sandbox import config

    record = manifest.get("sandbox")
    if args.sandbox is False:
        if record is None:
            return "Sandbox: left out of the managed settings (--no-sandbox)."
        done = config.remove(data, manifest.pop("sandbox"))
        return "Sandbox settings taken back from the managed settings: " + ", ".join(
            done or ["nothing left"]) + "."
    if record is None:
        verdict = _user_probe()
        if not verdict.ok:
            if args.sandbox:
                raise InstallError("Claude Code's sandbox cannot start on this machine: "
                                   + "; ".join(verdict.problems),
                                   fix="; ".join(verdict.fixes) + "; or install with --no-sandbox")
            return ("Sandbox: NOT in the managed settings, because it cannot start here for "
                    f"users: {'; '.join(verdict.problems)}. To get it: {'; '.join(verdict.fixes)}; "
                    "then run install --managed --sandbox.")
        record = manifest["sandbox"] = config.new_manifest(managed_settings_path())
    config.apply(data, record, [*installation_paths(python), managed_dir()], False)
    return ("Sandbox backstop in the managed settings: Bash runs confined for every user "
            "(allowUnsandboxedCommands: false, failIfUnavailable: true), our installation "
            "read-only; a project's network rule comes with `governance sandbox on` there.")


def install(args: argparse.Namespace) -> int:
    """``install --managed``: the hooks, the sandbox backstop, allowManagedHooksOnly (when asked),
    the starter organisation matrix and key, for every user of the machine."""
    from governance.install import managed, org_files, settings

    if args.http or args.mcp_hooks or args.repair or args.dry_run or args.statusline \
            or args.replace_statusline or args.slash_commands or args.mcp:
        raise InstallError("--managed registers command hooks only",
                           fix="leave out --http, --mcp-hooks, --repair, --dry-run, --statusline, "
                               "--slash-commands and --mcp (they belong to a project install)")
    require_root(args, "install")
    python = os.path.abspath(args.python) if args.python else settings.interpreter()
    if not os.access(python, os.X_OK):
        raise InstallError(f"the interpreter {python!r} is not executable",
                           fix="pass --python with the venv's python")
    entries = managed.hook_entries(python, args.fail_closed, args.session_hooks)
    from governance.install.session_entries import SESSION_EVENTS

    for name in {**settings.EVENTS, **SESSION_EVENTS}.values():
        script = os.path.join(settings.hook_scripts_dir(), name)
        if not os.path.isfile(script):
            raise InstallError(f"the hook script {script} is missing",
                               fix="reinstall claude-governance (pip install .)")
    key = org_files.read_key(args.org_key) if args.org_key else None
    data = managed.read_settings()
    manifest = managed.read_manifest() or managed.new_manifest()
    before = managed.snapshot(data, manifest)
    managed.register(data, manifest, entries)
    notes = [managed.managed_only(data, manifest, args.managed_only),
             _managed_sandbox(args, data, manifest, python)]
    placed = org_files.place(manifest, key)
    print(managed.save(data, manifest, before, bool(placed)))
    for event, handlers in entries.items():
        print(f"  {event}: {settings.identity(handlers[0])['command']}")
    for note in [*notes, *placed]:
        if note:
            print(note)
    from governance.install.org_files import file_check
    from governance.project import managed_dir, org_dir

    for folder in (managed_dir(), org_dir()):
        problem = file_check(folder).problem()
        if problem:
            print(f"WARNING: {problem}, so the hooks refuse the organisation's files (and fail "
                  f"closed for its rules): sudo chown root:root {folder} && sudo chmod go-w "
                  f"{folder}")
    print(f"What was added is recorded in {managed.manifest_path()}; `governance uninstall "
          "--managed` takes back exactly that. Projects keep their own files; a project install "
          "registers no second copy of these hooks.")
    return 0


def uninstall(args: argparse.Namespace) -> int:
    """``uninstall --managed``: what the manifest says ``install --managed`` added, nothing else."""
    from governance.install import managed
    from governance.project import managed_settings_path

    require_root(args, "uninstall")
    manifest = managed.read_manifest()
    if manifest is None:
        left = managed.our_hooks()
        print(f"Nothing to take back: no record of `governance install --managed` in "
              f"{managed.manifest_path()}."
              + (f" Governance's hooks in {managed_settings_path()} ({', '.join(left)}) were "
                 "written by someone else: remove them by hand." if left else ""))
        return 0
    data = managed.read_settings()
    before = managed.read_settings()
    notes = managed.take_back(data, manifest)
    sandbox = manifest.get("sandbox")
    if sandbox is not None:
        from governance.sandbox import config

        done = config.remove(data, sandbox)
        notes.append("Sandbox settings taken back: " + ", ".join(done or ["nothing left"]) + ".")
    notes += managed.finish_uninstall(data, manifest, before)
    for note in notes:
        print(note)
    print(f"Governance's managed layer is uninstalled; the rest of {managed_settings_path()} "
          "is as the administrator wrote it. Projects keep their own files: a project without "
          "its own hooks is no longer governed (`governance install` there registers them).")
    return 0
