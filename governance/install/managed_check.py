"""What ``governance doctor`` reports about the managed layer: our hooks in Claude Code's managed
settings (with their interpreter, and who installed them), ``allowManagedHooksOnly``, the sandbox
backstop, a second copy of the hooks in the project, and the organisation's matrix and key, which
must be owned by root and writable by no one else.
"""

from __future__ import annotations

import os
import shlex

from governance.errors import InstallError
from governance.install import settings
from governance.install.managed import ONLY_KEY, read_manifest, read_settings, sudo_command
from governance.install.org_files import file_check
from governance.project import managed_dir, managed_settings_path, org_dir, org_key_path, org_matrix_path


def _hook_argv(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:
        return []


def check(project_hooks: dict[str, list[str]]) -> list[tuple[bool | None, str, str]]:
    """``(ok, what, fix)`` lines for ``governance doctor`` about the managed layer (``ok`` None:
    a note): our hooks there and their interpreter, who installed them, ``allowManagedHooksOnly``,
    the sandbox backstop, the organisation's matrix and key (owned by root, writable by no one
    else, or the hook refuses them). ``project_hooks``: ours in the project's settings."""
    path = managed_settings_path()
    again = sudo_command(["install", "--managed"])
    try:
        data = read_settings()
    except InstallError as exc:
        return [(False, f"the managed settings cannot be read: {exc.render()}",
                 "repair the file as root (Claude Code ignores it as it is)")]
    try:
        manifest = read_manifest()
    except InstallError as exc:
        manifest = None
        lines: list[tuple[bool | None, str, str]] = [(False, exc.render(), "")]
    else:
        lines = []
    hooks = settings.our_commands(data)
    if not hooks and manifest is None:
        return [(None, f"no managed layer: governance's hooks are not in Claude Code's managed "
                       f"settings ({path}) (optional, for an administrator: {again})", "")]
    if hooks:
        pre = hooks.get("PreToolUse", [""])[0]
        argv = _hook_argv(pre)
        who = "not by `governance install --managed` (no manifest)"
        if manifest is not None:
            by = manifest.get("installed_by") or {}
            sudo = f" (sudo from {by['sudo_user']})" if by.get("sudo_user") else ""
            who = (f"by root{sudo} on {manifest.get('installed_at', '?')} with governance "
                   f"{manifest.get('governance', '?')}")
        lines.append((True, f"managed settings ({path}) run governance's hooks for every user "
                            f"({', '.join(hooks)}) with {argv[0] if argv else repr(pre)}; installed {who}",
                      ""))
        gone = next((arg for arg in argv[:1] + [a for a in argv if a.endswith('.py')]
                     if arg.startswith("/") and not os.path.exists(arg)), None)
        if gone is not None:
            lines.append((False, f"the managed PreToolUse hook runs {gone}, which is gone, so "
                                 "Claude Code's failure policy decides every call", again))
        if data.get(ONLY_KEY) is True:
            lines.append((True, f"{ONLY_KEY}: true (user, project and plugin hooks are ignored)",
                          ""))
        else:
            lines.append((None, f"{ONLY_KEY} is not set: projects and users may add hooks of "
                                "their own (optional: --managed-only)", ""))
        doubled = sorted(set(hooks) & set(project_hooks))
        if doubled and data.get(ONLY_KEY) is not True:
            lines.append((False, f"governance's hooks are registered both in the managed "
                                 f"settings and in the project ({', '.join(doubled)}): every "
                                 "call is decided and recorded twice",
                          "governance install in the project (it drops the project's copy while "
                          "the managed hooks are there)"))
        elif doubled:
            lines.append((None, f"the project's own governance hooks ({', '.join(doubled)}) are "
                                f"ignored ({ONLY_KEY}); `governance uninstall` there removes them",
                          ""))
    elif manifest is not None:
        lines.append((False, f"`governance install --managed` ran, but its hooks are no longer in "
                             f"{path}", again))
    sandbox = data.get("sandbox")
    if isinstance(sandbox, dict) and sandbox.get("enabled") is True:
        lines.append((True, "the managed settings turn Claude Code's Bash sandbox on for every "
                            f"user (allowUnsandboxedCommands: "
                            f"{str(sandbox.get('allowUnsandboxedCommands', True)).lower()})", ""))
    lines += _org_files(again)
    return lines


def _org_files(again: str) -> list[tuple[bool | None, str, str]]:
    lines: list[tuple[bool | None, str, str]] = []
    matrix = file_check(org_matrix_path())
    if not matrix.exists:
        lines.append((None, f"no organisation matrix ({matrix.path}): projects keep their own "
                            "rules only", ""))
    else:
        found = [item for item in (file_check(path) for path in
                                   (managed_dir(), org_dir(), matrix.path)) if item.problem()]
        for item in found:
            where = shlex.quote(item.path)
            lines.append((False, f"{item.problem()}: the hooks refuse the organisation's files "
                                 "and fail closed for its rules",
                          f"sudo chown root:root {where} && sudo chmod go-w {where}"))
        if not found:
            lines.append((True, f"organisation matrix {matrix.path} (owner root, mode "
                                f"{matrix.mode:o})", ""))
    key = file_check(org_key_path())
    if not key.exists:
        lines.append((None, f"no organisation key ({key.path}): signed bundles cannot be "
                            f"verified (optional: {again} --org-key FILE)", ""))
    elif key.problem():
        lines.append((False, f"{key.problem()}: a bundle signed with another key could pass",
                      f"sudo chown root:root {key.path} && sudo chmod 644 {key.path}"))
    else:
        lines.append((True, f"organisation key {key.path}", ""))
    return lines
