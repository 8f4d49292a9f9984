"""Files Claude Code treats as sensitive, where a hook's ``ask`` does not reach the user.

Seen in the real client (2.1.330, tests/e2e/test_sandbox_gaps.py): in ``bypassPermissions`` mode,
a PreToolUse ``ask`` for a Write or Edit of one of these files is answered yes without a prompt
(under ``-p`` too), while the same ``ask`` for an ordinary file is put to the user (and refused
under ``-p``). In every other mode Claude Code asks for them itself. The lists are Claude Code's
own (its check of "a sensitive file"): folders anywhere in the path, a pair of folders, and file
names, compared without regard to case.

Hot path: loaded only for an ``ask`` on a file tool in ``bypassPermissions``.
"""

from __future__ import annotations

FOLDERS = frozenset({".git", ".vscode", ".idea", ".claude", ".husky", ".cargo", ".devcontainer",
                     ".yarn", ".mvn"})
FOLDER_PAIRS = ((".config", "git"),)
NAMES = frozenset({
    ".gitconfig", ".gitmodules", ".bashrc", ".bash_profile", ".zshrc", ".zprofile", ".profile",
    ".zshenv", ".zlogin", ".zlogout", ".bash_login", ".bash_aliases", ".bash_logout", ".envrc",
    ".ripgreprc", ".mcp.json", ".claude.json", ".npmrc", ".yarnrc", ".yarnrc.yml", ".pnp.cjs",
    ".pnp.loader.mjs", ".pnp.js", ".pnp.data.json", ".pnpmfile.cjs", "bunfig.toml", ".bunfig.toml",
    ".bazelrc", ".bazelversion", ".bazeliskrc", ".pre-commit-config.yaml", "lefthook.yml",
    ".lefthook.yml", "lefthook.yaml", ".lefthook.yaml", "gradle-wrapper.properties",
    "maven-wrapper.properties", ".devcontainer.json", "pyrightconfig.json"})
FILE_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")
PATH_KEYS = ("file_path", "notebook_path")


def is_sensitive(path: str) -> bool:
    """Whether Claude Code treats ``path`` as a sensitive file."""
    parts = [p.lower() for p in path.replace("\\", "/").split("/") if p not in ("", ".")]
    if not parts:
        return False
    if parts[-1] in NAMES or any(p in FOLDERS for p in parts[:-1]):
        return True
    return any(parts[i] == first and parts[i + 1] == second
               for first, second in FOLDER_PAIRS for i in range(len(parts) - 1))


def ask_is_swallowed(tool: str, tool_input: dict[str, object], mode: object) -> str | None:
    """The path, when an ``ask`` for this call would be approved by Claude Code unasked."""
    if mode != "bypassPermissions" or tool not in FILE_TOOLS:
        return None
    for key in PATH_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and is_sensitive(value):
            return value
    return None
