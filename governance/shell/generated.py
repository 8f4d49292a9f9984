"""Generated output: whether a recursive delete only removes what the project can build again.

``rm -rf dist`` before a build, ``rm -rf .pytest_cache htmlcov`` after the tests: deleting what
git ignores is not destroying work. A pattern with ``regenerable: true`` (``rm -r``) is
``file-delete`` instead of its primitive when every target is

- in a git repository: inside its work tree, not ``.git`` itself, holding no file git tracks
  (``git ls-files``) and ignored by git (``git check-ignore``);
- with no git repository: inside the folder the command runs in and named like a build or cache
  folder (``shell.build_folders``: ``dist``, ``build``, ``node_modules``, ``.pytest_cache`` ...).

Anything else (a tracked file, the repository, a path outside it, a folder that holds tracked work,
a target known only at run time) keeps the pattern's primitive, and the reason says which.

Cold path: loaded only for a recursive delete. Git runs as a subprocess with the repository's
configuration unable to start a command (no fs monitor, no pager, no optional locks); the answer
is remembered per path in a small memo (``.claude/governance/.cache/ignored.marshal``, when the
project has that folder) keyed by the stat of ``.git/index``, ``.git/info/exclude`` and every
``.gitignore`` from the top of the work tree down to the path.
"""

from __future__ import annotations

import os

from governance.project import recall, remember, signature

TYPE_CHECKING = False
if TYPE_CHECKING:
    from governance.shell.walk import Walk

MEMO = "ignored.marshal"
_MAX_MEMO = 256


def check(an: Walk, targets: list[tuple[str | None, str]]) -> tuple[bool, str]:
    """(True, why) when every target is output the project can regenerate, else (False, why)."""
    if not targets:
        return False, "the folders it deletes are not named"
    kinds: dict[str, list[str]] = {}
    for value, raw in targets:
        path = an.where(value)
        if value is not None and an.names is not None:
            from governance.shell.copies import through_link  # ln -s /srv b/h; rm -rf b/h/

            through = through_link(an, value)
            if through == "?":
                return False, f"{raw} goes through a symbolic link to a place known only at run time"
            if through is not None:
                path = through
        if an.root is None:
            return False, "the folder the command runs in is not known"
        if path == "?" or "{}" in (raw or ""):   # find -exec rm -rf {}: found at run time
            return False, f"{raw or '?'} is known only at run time"
        if not os.path.isabs(path):
            path = os.path.join(an.root, path)
        ok, why = _one(an, os.path.realpath(path), raw)  # a symbolic link: what it points at
        if not ok:
            return False, why
        kinds.setdefault(why, []).append(raw)
    return True, "; ".join(f"{_names(raws)} {'is' if len(raws) == 1 else 'are'} {why}"
                           for why, raws in kinds.items())


def _names(raws: list[str]) -> str:
    return raws[0] if len(raws) == 1 else ", ".join(raws[:-1]) + " and " + raws[-1]


def _one(an: Walk, path: str, raw: str) -> tuple[bool, str]:
    top = _work_tree(os.path.realpath(an.root or path))
    if top is None:
        root = os.path.realpath(an.root or "")
        if path == root or not path.startswith(root.rstrip("/") + "/"):
            return False, f"{raw} is outside the folder the command runs in"
        if os.path.basename(path) in an.shell.get("build_folders", ()):
            return True, "named like a build or cache folder (no git repository here)"
        return False, f"{raw} is not a build or cache folder (shell.build_folders)"
    if path == top or not path.startswith(top.rstrip("/") + "/"):
        return False, f"{raw} is the repository or outside it"
    rel = os.path.relpath(path, top)
    if ".git" in rel.split(os.sep):
        return False, f"{raw} is the repository's own .git folder"
    answer = _answer(top, rel)
    if answer == "tracked":
        return False, f"{raw} holds files git tracks"
    if answer == "ignored":
        return True, "ignored by git: output the project can build again"
    if answer == "unknown":
        return False, f"git could not say whether {raw} is ignored"
    return False, f"{raw} is not ignored by git"


def _work_tree(start: str) -> str | None:
    folder = os.path.abspath(start)
    while True:
        if os.path.exists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _answer(top: str, rel: str) -> str:
    """"tracked", "ignored", "not ignored" or "unknown", from the memo or from git."""
    git = os.path.join(top, ".git")
    chain = [os.path.join(top, *rel.split(os.sep)[:k], ".gitignore")
             for k in range(rel.count(os.sep) + 1)]
    seen = signature([os.path.join(git, "index"), os.path.join(git, "info", "exclude"), *chain]) \
        if os.path.isdir(git) else None
    cache = os.path.join(top, ".claude", "governance", ".cache")
    memo_path = os.path.join(cache, MEMO)
    use_memo = seen is not None and os.path.isdir(os.path.dirname(cache))
    memo = recall(memo_path, "v1") if use_memo else None
    entries = dict(memo) if isinstance(memo, dict) else {}
    hit = entries.get(rel)
    if isinstance(hit, tuple) and len(hit) == 2 and hit[0] == seen:
        return str(hit[1])
    answer = _ask_git(top, rel)
    if use_memo and answer != "unknown":
        if len(entries) >= _MAX_MEMO:
            entries.clear()
        entries[rel] = (seen, answer)
        remember(memo_path, "v1", entries)
    return answer


def _ask_git(top: str, rel: str) -> str:
    import subprocess

    base = ["git", "--no-pager", "-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false"]
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"}
    if rel.startswith(":"):
        rel = "./" + rel                  # a path, not pathspec magic
    paths = [rel] if os.path.lexists(os.path.join(top, rel)) else [rel, rel + "/"]
    try:
        tracked = subprocess.run([base[0], "--literal-pathspecs", *base[1:], "ls-files", "-z",
                                  "--", rel], cwd=top,
                                 capture_output=True, timeout=5, env=env, check=False)
        if tracked.returncode != 0:
            return "unknown"
        if tracked.stdout:
            return "tracked"
        ignored = subprocess.run([*base, "check-ignore", "--", *paths], cwd=top,
                                 capture_output=True, timeout=5, env=env, check=False)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    if ignored.returncode == 0 and ignored.stdout.strip():
        return "ignored"
    return "not ignored" if ignored.returncode == 1 else "unknown"
