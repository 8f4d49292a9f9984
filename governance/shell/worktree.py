"""The files a git command puts in the working tree from another commit, asked of git itself.

``git checkout BRANCH``, ``switch``, ``reset --hard REV``, ``merge``, ``rebase``, ``cherry-pick``,
``revert``, ``pull`` and ``stash`` name no file, yet each replaces every tracked file that differs
between what is checked out and what it brings: a branch whose ``.claude/settings.json`` grants
more, a commit that drops the project's hooks. Which files those are is a question for the
repository, so git answers it (``git diff --name-only``) when the command is analysed; each file
named is then checked as any file the command writes (``shell.extraction``).

- a commit that replaces the working tree (``checkout``, ``switch``, ``reset --hard|--keep|--merge``):
  the files that differ between ``HEAD`` and it (``switch --orphan``: every tracked file);
- a commit merged or replayed (``merge``, ``rebase``, ``pull``): the files it changed since it
  forked from ``HEAD`` (``HEAD...REV``);
- a commit picked or reverted: the files it changed (``REV^!``; a range ``A..B``: its files);
- the command discards local changes (``reset --hard``, ``checkout -f``, ``switch
  --discard-changes``, ``stash``, ``merge --abort``): the tracked files changed since ``HEAD``;
  ``rebase --abort`` goes back to ``ORIG_HEAD`` as well.

A name git does not know as a commit is not one (``git checkout src`` names a path, which the
command's own patterns read); a revision known only at run time cannot be asked about (None).
git runs with the repository's configuration unable to start a command (no pager, external diff,
text conversion or file-system monitor) and takes no lock.

Cold path: imported by ``shell.extraction`` for these git subcommands only; ``subprocess`` is
loaded then.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from governance.shell.rules import Argv

MAX_NAMES = 20000
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
_GIT = ["git", "--no-pager", "-c", "core.fsmonitor=false", "-c", "diff.external=",
        "-c", "core.pager=cat", "-c", "core.quotePath=false"]
_DIFF = ["diff", "--name-only", "-z", "--no-ext-diff", "--no-textconv", "--no-renames"]
_DISCARDS = {"reset": ("--hard", "--merge", "--keep"), "checkout": ("-f", "--force"),
             "switch": ("--discard-changes", "-f", "--force")}


class Unknown(Exception):
    """git cannot say which files the command replaces (a revision known only at run time, git
    missing or too slow); ``what`` names it for the reason."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


# set (in Walk.vars) when the command moved a branch, HEAD or a tag: which commit a later
# checkout, reset or merge in the same command brings is known only at run time
REFS_MOVED = "\0git-refs-moved"


def replaced(folder: str, sub: str, argv: Argv) -> list[str]:
    """The files, relative to the working tree's top, that ``git SUB ARGV`` run in ``folder``
    replaces with another version (or deletes); raises ``Unknown`` when git cannot say."""
    args = [value for value, _raw in argv.positionals[1:]]
    flags = set(argv.flags)
    comparisons: list[list[str]] = []
    if sub in ("checkout", "switch"):
        comparisons += _switched(sub, args, flags, argv)
    elif sub == "reset":
        if flags & {"--hard", "--merge", "--keep"} and not _paths_given(args, flags):
            comparisons.append(["HEAD", _revision(args[0] if args else "HEAD")])
    elif sub in ("merge", "rebase", "pull"):
        comparisons += _merged(sub, args, flags, argv)
    elif sub in ("cherry-pick", "revert"):
        if not flags & {"--continue", "--skip", "--quit", "--abort"}:
            mainline = bool(flags & {"-m", "--mainline"})
            for arg in args:
                if mainline and arg is not None and arg.isdigit():
                    continue                  # git cherry-pick -m 1 REV: the 1 is the parent
                rev = _revision(arg)
                comparisons.append([rev] if ".." in rev else [rev + "^!"])
    elif sub == "stash" and _stash_reverts(args, flags):
        comparisons.append(["HEAD"])          # local changes go into the stash: the files revert
    if flags & set(_DISCARDS.get(sub, ())) or (sub in ("merge", "rebase") and "--abort" in flags):
        comparisons.append(["HEAD"])
    if sub == "rebase" and "--abort" in flags:
        comparisons.append(["HEAD", "ORIG_HEAD"])
    names: list[str] = []
    for comparison in comparisons:
        found = _diff(folder, comparison)
        if found is not None:
            names += found
    return list(dict.fromkeys(names))


def _switched(sub: str, args: list[str | None], flags: set[str], argv: Argv) -> list[list[str]]:
    if "--" in flags or "--pathspec-from-file" in argv.values:
        return []                             # git checkout REV -- PATHS: the paths, read elsewhere
    if sub == "switch" and "--orphan" in argv.values:
        return [["HEAD", EMPTY_TREE]]         # an unborn branch: the tracked files go away
    if sub == "checkout" and len(args) > 1:
        return []                             # git checkout TREE PATH...: paths, read elsewhere
    if not args:
        return []                             # git checkout -b NEW: stays on HEAD's files
    arg = args[0]
    rev = "@{-1}" if arg == "-" else _revision(arg)
    return [["HEAD", rev]]


def _merged(sub: str, args: list[str | None], flags: set[str], argv: Argv) -> list[list[str]]:
    if flags & {"--continue", "--skip", "--quit", "--abort", "--edit-todo",
                "--show-current-patch"}:
        return []
    revs: list[str] = []
    if sub == "rebase":
        onto = argv.values.get("--onto")
        if onto:
            revs.append(_revision(onto[-1][0]))
        revs += [_revision(a) for a in args[:2]] or (["@{upstream}"] if not onto else [])
    elif sub == "pull":
        revs.append("@{upstream}")            # what was fetched last: the run fetches anew
    else:
        revs += [_revision(a) for a in args] or ["@{upstream}"]
    return [[f"HEAD...{rev}"] for rev in revs]


def _stash_reverts(args: list[str | None], flags: set[str]) -> bool:
    """``git stash``, ``push`` or ``save`` without paths: every local change is reverted."""
    if args and args[0] not in ("push", "save"):
        return False
    return not (args[1:] or "--" in flags or "--staged" in flags or "-S" in flags)


def _paths_given(args: list[str | None], flags: set[str]) -> bool:
    return "--" in flags or len(args) > 1


def _revision(arg: str | None) -> str:
    if arg is None:
        raise Unknown("a revision known only at run time")
    if arg.startswith("-") or "\0" in arg:
        raise Unknown(f"the revision {arg!r}")
    return arg


def stash_paths(folder: str, ref: str) -> list[str] | None:
    """The files a stash holds, by ``git stash show --name-only`` (untracked ones too); [] when
    there is no such stash or no repository; None when git cannot tell."""
    if ref.startswith("-"):
        return None
    base = [*_GIT, "stash", "show", "--name-only", "--no-ext-diff", "--no-textconv"]
    for extra in (["--include-untracked"], []):
        done = run_git(folder, [*base, *extra, ref])
        if done is None:
            return None
        if done[0] == 0:
            names = done[1].decode("utf-8", "surrogateescape").splitlines()
            return [n.strip('"') for n in names if n] if len(names) <= MAX_NAMES else None
    known = run_git(folder, ["git", "rev-parse", "--quiet", "--verify", ref + "^{commit}"])
    return None if known is None else [] if known[0] != 0 else None


def run_git(folder: str, command: list[str]) -> tuple[int, bytes] | None:
    """Run git in ``folder``: its exit status and output, or None when it cannot run in time."""
    import subprocess

    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"}
    try:
        done = subprocess.run(command, cwd=folder, capture_output=True, timeout=3, env=env,
                              check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.returncode, done.stdout


def _diff(folder: str, comparison: list[str]) -> list[str] | None:
    """The files ``git diff --name-only COMPARISON`` names; None when a revision is not a commit
    git knows (the command then replaces nothing: git refuses it, or it names a path)."""
    done = run_git(folder, [*_GIT, *_DIFF, *comparison, "--"])
    if done is None:
        raise Unknown("git could not say in time which files differ")
    if done[0] != 0:
        return None
    names = [n for n in done[1].decode("utf-8", "surrogateescape").split("\0") if n]
    if len(names) > MAX_NAMES:
        raise Unknown(f"{len(names)} files differ")
    return names


def is_revision(folder: str, name: str) -> bool | None:
    """Whether git in ``folder`` reads ``name`` as a commit or tree (``git checkout NAME``
    switches to it), not a path; None when git cannot say in time."""
    if name.startswith("-") or "\0" in name:
        return False
    done = run_git(folder, ["git", "rev-parse", "--quiet", "--verify", name + "^{tree}"])
    return None if done is None else done[0] == 0


def pathspec_files(folder: str, revision: str | None, specs: list[str]) -> list[str]:
    """The files a checkout or restore of ``specs`` (git pathspecs: ``*.json`` crosses folders,
    ``:(glob)**/x``, ``:/x`` from the top) changes: those that differ between ``revision`` (the
    index when None) and the working tree, or that only the revision has (none when git refuses
    the revision or the pathspec); raises ``Unknown`` when git cannot say in time."""
    comparison = [revision] if revision else []
    done = run_git(folder, [*_GIT, *_DIFF, *comparison, "--", *specs])
    if done is None:
        raise Unknown("git could not say in time which files the paths name")
    if done[0] != 0:
        return []          # a revision or pathspec git refuses: the checkout fails, writes nothing
    names = [n for n in done[1].decode("utf-8", "surrogateescape").split("\0") if n]
    if len(names) > MAX_NAMES:
        raise Unknown(f"{len(names)} files")
    return names
