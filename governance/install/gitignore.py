"""What git keeps out of a governed project: the local and secret files governance writes.

Governance writes two kinds of files into a project:

- **shared** ones, which a team commits: the matrix override, guardrails and knowledge settings
  (``.claude/governance/{activity_matrix,guardrails,knowledge}.yaml``), the SOPs
  (``.claude/sops/``), the declared intents (``.orchestration/active_intents.yaml``);
- **local** ones, which belong to one checkout or are secret: the cycle state, the ledger, the
  seal and its matrix copy, caches, databases, session files, selections, the server's token,
  record, lock and log, settings backups (everything else under ``.claude/governance/``),
  Claude Code's ``.claude/settings.local.json`` (where install puts the server token) and the
  intent trace (``.orchestration/agent_trace.jsonl``, a hash chain one checkout appends to).

``.claude/governance/.gitignore`` is ours: it ignores everything and lets the shared names
through, so a file a later version adds is local by default. The two other folders are not ours:
there install appends a marked block (``BLOCK_MARK``) and uninstall takes exactly that block out
once the files it covers are gone.
``check`` asks the real ``git check-ignore`` whether each file that exists is where it belongs.
"""

from __future__ import annotations

import os
import subprocess

from governance.project import GOVERNANCE_SUBDIR, INTENTS_FOLDER, INTENTS_NAME

SHARED_NAMES = ("activity_matrix.yaml", "guardrails.yaml", "knowledge.yaml")
OWN_MARK = "# Written by `governance install`"
OWN_IGNORE = f"""{OWN_MARK}. Everything governance keeps in this folder is local to the checkout
# (cycle state, ledger, seal, caches, databases, sessions, the server's token and log, backups) and
# stays out of git, including files a later version adds. What a team shares is let through:
*
!/.gitignore
""" + "".join(f"!/{name}\n" for name in SHARED_NAMES)
# What earlier versions wrote there (replaced by OWN_IGNORE on the next install).
OLD_OWN_IGNORE_START = "# Local governance data: state, ledger, caches."
BLOCK_MARK = "# governance: local files (added by `governance install`, removed by uninstall)"
TRACE_NAMES = ("agent_trace.jsonl", "agent_trace.jsonl.lock", "agent_trace.torn",
               "agent_trace.*.jsonl")
# folder (relative to the project) -> the local files governance writes there
BLOCKS: dict[str, tuple[str, ...]] = {
    ".claude": ("settings.local.json",),
    INTENTS_FOLDER: TRACE_NAMES,
}


def own_path(project: str) -> str:
    return os.path.join(project, GOVERNANCE_SUBDIR, ".gitignore")


def block_text(names: tuple[str, ...]) -> str:
    return BLOCK_MARK + "\n" + "".join(f"/{name}\n" for name in names)


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def _write(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def ensure_own(project: str) -> None:
    """Write our ``.claude/governance/.gitignore`` when the folder has none (what writes a secret
    there calls it first, so the secret is never committable, installed or not)."""
    path = own_path(project)
    if not os.path.exists(path):
        _write(path, OWN_IGNORE)


def write(project: str) -> list[str]:
    """Write our ``.gitignore`` files; returns a sentence for each one changed (a
    ``.claude/governance/.gitignore`` the user wrote is kept, and said so). A folder governance
    has not written into yet (no ``.orchestration/``) gets nothing."""
    notes: list[str] = []
    path = own_path(project)
    current = _read(path)
    if current != OWN_IGNORE:
        if current is None or current.startswith((OWN_MARK, OLD_OWN_IGNORE_START)):
            _write(path, OWN_IGNORE)
            notes.append(f"Wrote {path}: git ignores governance's local files and keeps "
                         f"{', '.join(SHARED_NAMES)}.")
        else:
            notes.append(f"Kept your {path} (not the one install writes); `governance doctor` "
                         "checks that it ignores the local files.")
    for folder, names in BLOCKS.items():
        where = os.path.join(project, folder)
        if not os.path.isdir(where):
            continue
        target = os.path.join(where, ".gitignore")
        text = _read(target) or ""
        block = block_text(names)
        if block in text:
            continue
        _write(target, text + ("\n" if text and not text.endswith("\n") else "") + block)
        notes.append(f"Added to {target}: {', '.join(names)} (local files).")
    return notes


def remove(project: str) -> list[str]:
    """Take out what ``write`` put in, as far as no file it keeps out is left (uninstall keeps
    the state and the ledger, which must stay out of git): a block whose files are gone, our
    ``.claude/governance/.gitignore`` once it is the folder's only file. A file left empty goes.
    Returns what it did."""
    notes: list[str] = []
    for folder, names in BLOCKS.items():
        target = os.path.join(project, folder, ".gitignore")
        text = _read(target)
        block = block_text(names)
        if text is None or block not in text or any(
                os.path.exists(os.path.join(project, folder, name)) for name in names):
            continue
        kept = text.replace(block, "")
        if kept.strip():
            _write(target, kept)
        else:
            os.unlink(target)
        notes.append(f"Took governance's lines out of {target}")
    path = own_path(project)
    current = _read(path)
    if current is not None and current.startswith((OWN_MARK, OLD_OWN_IGNORE_START)):
        if os.listdir(os.path.dirname(path)) == [".gitignore"]:
            os.unlink(path)
            notes.append(f"Removed {path}")
        else:
            notes.append(f"Kept {path}, so the state and ledger left in its folder stay out of "
                         "git (remove the folder to remove them all).")
    return notes


def _files_under(folder: str) -> list[str]:
    found: list[str] = []
    for root, dirs, names in os.walk(folder):
        dirs.sort()
        found.extend(os.path.join(root, name) for name in sorted(names))
    return found


def classify(project: str) -> tuple[list[str], list[str]]:
    """(local, shared): the files governance writes that exist in ``project``, relative to it."""
    gov = os.path.join(project, GOVERNANCE_SUBDIR)
    shared_here = {os.path.join(gov, name) for name in (*SHARED_NAMES, ".gitignore")}
    local: list[str] = []
    shared: list[str] = []
    for path in _files_under(gov):
        (shared if path in shared_here else local).append(path)
    for folder, names in BLOCKS.items():
        local.extend(p for name in names
                     if os.path.isfile(p := os.path.join(project, folder, name)))
    claude = os.path.join(project, ".claude")
    if os.path.isdir(claude):   # what earlier versions left beside the settings
        local.extend(os.path.join(claude, name) for name in sorted(os.listdir(claude))
                     if name.startswith(("settings.json.bak-", "settings.local.json.bak-")))
    if os.path.isfile(old := os.path.join(project, ".mcp.json.bak")):
        local.append(old)
    shared.extend(p for p in [os.path.join(project, INTENTS_FOLDER, INTENTS_NAME),
                              *_files_under(os.path.join(project, ".claude", "sops"))]
                  if os.path.isfile(p))
    return ([os.path.relpath(p, project) for p in local],
            [os.path.relpath(p, project) for p in shared])


def _git(project: str, *argv: str, stdin: str = "") -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(["git", *argv], cwd=project, input=stdin, capture_output=True,
                              text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None


def ignored_by(project: str, paths: list[str]) -> dict[str, tuple[str, str, str]] | None:
    """For each path, the ignore rule git applies to it as (file, line, pattern) (a pattern that
    starts with ``!`` lets it through); ("", "", "") when none does. None when ``project`` is not
    in a git work tree or git cannot run."""
    inside = _git(project, "rev-parse", "--is-inside-work-tree")
    if inside is None or inside.returncode != 0 or inside.stdout.strip() != "true":
        return None
    if not paths:
        return {}
    done = _git(project, "check-ignore", "--no-index", "--stdin", "-z", "-v", "-n",
                stdin="\0".join(paths) + "\0")
    if done is None or done.returncode not in (0, 1):
        return None
    fields = done.stdout.split("\0")
    return {fields[at + 3]: (fields[at], fields[at + 1], fields[at + 2])
            for at in range(0, len(fields) - 3, 4)}


def ignores(rule: tuple[str, str, str] | None) -> bool:
    """True when a rule from ``ignored_by`` ignores its path (a ``!`` pattern lets it through)."""
    return rule is not None and bool(rule[2]) and not rule[2].startswith("!")


def tracked(project: str, paths: list[str]) -> list[str]:
    """Those of ``paths`` that git already tracks (ignoring does not untrack them)."""
    if not paths:
        return []
    done = _git(project, "ls-files", "-z", "--", *paths)
    return [p for p in done.stdout.split("\0") if p] if done and done.returncode == 0 else []


def check(project: str) -> list[tuple[bool | None, str, str]]:
    """``(ok, what, fix)`` lines for ``governance doctor`` (ok None: a note): every local file
    governance wrote is ignored by git and not tracked, every shared one is not ignored."""
    local, shared = classify(project)
    rules = ignored_by(project, local + shared)
    if rules is None:
        return [(None, "not a git repository (or git is not installed): the check that git keeps "
                       "governance's local files out was skipped", "")]
    lines: list[tuple[bool | None, str, str]] = []
    exposed = [p for p in local if not ignores(rules.get(p))]
    if exposed:
        lines.append((False, f"git would commit {len(exposed)} local governance file(s): "
                             f"{', '.join(exposed)}",
                      f"governance install --project {project} (it writes the .gitignore files)"))
    committed = sorted(tracked(project, local))
    if committed:
        lines.append((False, f"git already tracks {len(committed)} local governance file(s): "
                             f"{', '.join(committed)}",
                      "git rm --cached " + " ".join(committed)))
    for path in shared:
        rule = rules.get(path)
        if rule is not None and ignores(rule):
            lines.append((False, f"git ignores {path}, which a team shares (pattern {rule[2]!r} "
                                 f"at {rule[0]}:{rule[1]})",
                          f"take the pattern {rule[2]!r} out of {rule[0]}"))
    if len(lines) == 0:
        lines.append((True, f"git ignores the {len(local)} local governance file(s) and keeps the "
                            f"{len(shared)} shared one(s)", ""))
    return lines
