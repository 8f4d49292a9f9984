"""Git commands that delete the files git ignores: ``git clean -x``/``-X`` and ``git stash
--all``; and those that delete the untracked files it does not ignore (``git clean -f``,
``git stash -u``), governance's own where the project does not commit them. Governance keeps its
state, seal and ledger in ignored files of the project (``.claude/governance/``), so such a
command is a target of every folder it cleans: the pathspecs it names, else the folder it runs in
(``governance-admin`` when one holds a protected path).

Imported by ``shell.resolver`` for ``git clean`` and ``git stash``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from governance.shell.walk import Walk

_GLOBAL_VALUED = ("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path",
                  "--config-env", "--super-prefix", "--list-cmds")
_CLEAN_VALUED = ("-e", "--exclude")
_STASH_VALUED = ("-m", "--message", "--pathspec-from-file")
_READ_ONLY_STASH = ("list", "show", "drop", "clear", "branch", "apply", "pop", "create", "store")


def check(an: Walk, fields: list[str | None], seg: str) -> None:
    """Targets for ``git [OPTIONS] clean -x|-X [PATHS]`` and ``git stash [push] --all [PATHS]``
    (a dry run and an interactive clean excepted)."""
    k = 1                               # git -C DIR has entered DIR (resolver._git_folder)
    while k < len(fields) and fields[k] is not None and str(fields[k]).startswith("-"):
        k += 2 if fields[k] in _GLOBAL_VALUED else 1
    if k >= len(fields) or fields[k] not in ("clean", "stash"):
        return
    sub = str(fields[k])
    args = fields[k + 1:]
    if sub == "stash" and args and args[0] is not None and not str(args[0]).startswith("-"):
        if args[0] in _READ_ONLY_STASH or args[0] not in ("push", "save"):
            return
        args = args[1:]
    valued = _CLEAN_VALUED if sub == "clean" else _STASH_VALUED
    flags: set[str] = set()
    paths: list[str | None] = []
    k, rest = 0, False
    while k < len(args):
        arg = args[k]
        if arg is None or rest or not arg.startswith("-") or arg == "-":
            paths.append(arg)
        elif arg == "--":
            rest = True
        elif arg in valued:
            k += 1
        elif arg.startswith("--"):
            flags.add(arg.split("=", 1)[0])
        else:
            flags.update("-" + letter for letter in arg[1:])
        k += 1
    if sub == "clean":
        dry = bool(flags & {"-n", "--dry-run", "-i", "--interactive"})
        deletes = bool(flags & {"-x", "-X"}) and not dry
        untracked = not deletes and not dry
        reason = "git clean -x deletes the files git ignores, governance's own among them"
    else:
        deletes = bool(flags & {"-a", "--all"})
        untracked = not deletes and bool(flags & {"-u", "--include-untracked"})
        reason = "git stash --all takes away the files git ignores, governance's own among them"
    if untracked:
        _untracked(an, sub, paths, seg)
    if not deletes:
        return
    for path in paths or ["."]:
        if path is None:
            an.add("shell-unknown", seg, f"git {sub} cleans a path known only at run time")
            continue
        an.target(path, path, seg, "destructive", reason, True)


def _untracked(an: Walk, sub: str, paths: list[str | None], seg: str) -> None:
    """``git clean -f``, ``git stash -u``: the untracked files git does not ignore go. Where a
    governance file under the paths is one of them (a project that does not commit its
    ``.claude/settings.json``), git asked which: ``governance-admin``."""
    layer_files = getattr(an.check, "protected_files", None)
    folder = an.folder()
    if layer_files is None or folder is None:
        return
    import os

    from governance.shell.worktree import run_git

    found: list[str] = []
    for path in paths or ["."]:
        if path is None:
            continue
        top = os.path.realpath(os.path.join(folder, os.path.expanduser(path)))
        found += layer_files(top)
    if not found:
        return
    done = run_git(folder, ["git", "ls-files", "--others", "--exclude-standard", "-z", "--",
                         *found])
    if done is None:
        an.add("shell-unknown", seg, f"git {sub} may delete governance files git does not track; "
                                     "git could not say in time")
        return
    if done[0] == 0 and done[1].strip(b"\0"):
        names = [n for n in done[1].decode("utf-8", "surrogateescape").split("\0") if n][:3]
        what = "deletes" if sub == "clean" else "takes away"
        an.add("governance-admin", seg, f"git {sub} {what} governance files git does not track "
                                        f"({', '.join(names)}): ask the user")
