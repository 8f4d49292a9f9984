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

``find PATH... -name PATTERN -delete`` (``regenerable: matches``) deletes what its name patterns
match, each file on its own: it is ``file-delete`` when the expression is a plain conjunction (no
``!``, ``-not``, ``-path``/``-regex`` tests or ``-L``; ``-o`` only between the names of one
parenthesised group, ``( -name '*.pyc' -o -name '*.pyo' )``) with at least one ``-name``/
``-iname`` (or a group of them) whose every pattern holds a character that is not a wildcard, every
start path is inside the work tree (or the folder the command runs in), and

- in a git repository: git ignores each pattern below each start path (``check-ignore`` of a
  name it matches), no file git tracks or leaves unignored matches (``git ls-files --cached
  --others --exclude-standard`` with the patterns as glob pathspecs), and no entry of the
  repository's ``.git`` folder below a start path does;
- with no git repository: every pattern is one of ``shell.build_files`` (``*.pyc``) or
  ``shell.build_folders`` (``__pycache__``).

``find . -delete``, ``find . -name '*' -delete``, ``find ~ -name x -delete`` stay destructive.

Cold path: loaded only for a recursive delete. Git runs as a subprocess with the repository's
configuration unable to start a command (no fs monitor, no pager, no optional locks); the answer
is remembered per path in a small memo (``.claude/governance/.cache/ignored.marshal``, when the
project has that folder) keyed by the stat of ``.git/index``, ``.git/info/exclude`` and every
``.gitignore`` from the top of the work tree down to the path.
"""

from __future__ import annotations

import os

from governance import system
from governance.project import recall, remember, signature

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

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
        if path == "?" and value is not None and "{}" not in (raw or ""):
            matches = _matched(an, value)       # rm -rf dist/* *.egg-info: what it matches now
            if matches:
                for match in matches:
                    ok, why = _one(an, os.path.realpath(match), raw)
                    if not ok:
                        return False, why
                    kinds.setdefault(why, []).append(raw)
                continue
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


MAX_MATCHED = 200


def _matched(an: Walk, value: str) -> list[str] | None:
    """The paths a glob target matches now, as bash expands it (``**`` as ``*``, dot files only
    for a pattern that starts with a dot), absolute; None when it is not a plain glob, matches
    nothing or too much, or the folder is not known."""
    import glob

    if not any(c in value for c in "*?[") or "$" in value or "\0" in value:
        return None
    folder = an.folder()
    pattern = os.path.expanduser(value)
    if not os.path.isabs(pattern):
        if folder is None:
            return None
        pattern = os.path.join(folder, pattern)
    found: list[str] = []
    for match in glob.iglob(pattern):
        found.append(match)
        if len(found) > MAX_MATCHED:
            return None
    return found or None


_OPERATORS = ("-o", "-or", "-not", "!", "(", ")", ",", "-L", "-follow", "-path", "-ipath",
              "-wholename", "-iwholename", "-regex", "-iregex", "-prune", "-samefile", "-inum",
              "-links", "-lname", "-ilname")
_WILDCARDS = "*?[]."
_MAX_GIT_ENTRIES = 50_000


def matched(an: Walk, argv: Any, starts: list[tuple[str | None, str]],
            fields: list[str | None] | None = None) -> tuple[bool, str]:
    """(True, why) when ``find STARTS... -name PATTERN -delete`` deletes only output the project
    can build again, else (False, why)."""
    words = [*argv.flags, *(v for v, _r in argv.positionals)]
    if None in words:
        return False, "its expression is not a plain list of tests"
    if any(w in _OPERATORS for w in words):
        found = _alternatives(fields or [])
        if found is None:
            return False, "its expression is not a plain list of tests"
        groups = found
    else:
        names = [(v, False) for v, _r in argv.values.get("-name", ())] + \
                [(v, True) for v, _r in argv.values.get("-iname", ())]
        if any(v is None for v, _i in names):
            return False, "no name pattern limits what it finds"
        groups = [[(str(v), icase)] for v, icase in names]
    if not groups:
        return False, "no name pattern limits what it finds"
    patterns = [pattern for group in groups for pattern in group]
    # a file is deleted when it matches every group, and a group when one of its names matches
    if not any(all(any(c not in _WILDCARDS for c in p) for p, _i in group) for group in groups):
        return False, "its name patterns match every file"
    if an.root is None:
        return False, "the folder the command runs in is not known"
    root = os.path.realpath(an.root)
    paths: list[str] = []
    for value, raw in starts or [(".", ".")]:
        path = an.where(value)
        if path == "?" or value is None:
            return False, f"{raw or '?'} is known only at run time"
        if not os.path.isabs(path):
            path = os.path.join(an.root, path)
        paths.append(os.path.realpath(path))
    top = system.work_tree(os.path.abspath(root))
    if top is None:
        if any(p != root and not p.startswith(root.rstrip("/") + "/") for p in paths):
            return False, "it searches outside the folder the command runs in"
        generated = [*an.shell.get("build_files", ()), *an.shell.get("build_folders", ())]
        if all(p in generated for p, _i in patterns):
            return True, "its names are build output (no git repository here)"
        return False, "its names are not build output (shell.build_files)"
    if any(p != top and not p.startswith(top.rstrip("/") + "/") for p in paths):
        return False, "it searches outside the repository"
    rels = [os.path.relpath(p, top) for p in paths]
    if any(".git" in r.split(os.sep) for r in rels):
        return False, "it searches the repository's own .git folder"
    if any(r == "." for r in rels) and _in_git_folder(os.path.join(top, ".git"), patterns):
        return False, "its names match files in the repository's .git folder"
    unignored = _unignored(top, rels, patterns)
    if unignored:
        return False, unignored
    answer = _kept(top, rels, patterns)
    if answer:
        return False, answer
    return True, "every file its names match is ignored by git: output the project can build again"


_PLAIN = frozenset(("-delete", "-print", "-print0", "-xdev", "-mount", "-depth", "-a", "-and"))
_PLAIN_VALUED = frozenset(("-type", "-xtype", "-maxdepth", "-mindepth"))


def _alternatives(fields: list[str | None]) -> list[list[tuple[str, bool]]] | None:
    """The name tests of ``find STARTS... ( -name A -o -name B ) [-type f] -delete`` as
    groups (a file is deleted when it matches one name of every group), or None when the
    expression is anything else: ``-o`` outside a group of names, a group holding another test,
    nesting, ``!``, or a test this reading does not know."""
    groups: list[list[tuple[str, bool]]] = []
    group: list[tuple[str, bool]] | None = None
    joined = False                       # the last word of the group was -o
    i = 1
    while i < len(fields) and fields[i] is not None and str(fields[i])[:1] not in "-(!)":
        i += 1                           # the start paths
    while i < len(fields):
        word = fields[i]
        if word is None:
            return None
        if word == "(" and group is None:
            group, joined, i = [], True, i + 1
        elif word == ")" and group and not joined:
            groups.append(group)
            group, i = None, i + 1
        elif word in ("-o", "-or") and group and not joined:
            joined, i = True, i + 1
        elif word in ("-name", "-iname") and i + 1 < len(fields) and fields[i + 1] is not None:
            name = (str(fields[i + 1]), word == "-iname")
            if group is None:
                groups.append([name])
            elif joined:
                group.append(name)
                joined = False
            else:
                return None              # ( -name A -type f ): another test inside the group
            i += 2
        elif group is None and word in _PLAIN:
            i += 1
        elif group is None and word in _PLAIN_VALUED and i + 1 < len(fields):
            i += 2
        else:
            return None
    return groups if group is None else None


def _in_git_folder(git: str, patterns: list[tuple[str, bool]]) -> bool:
    """Whether an entry below ``.git`` matches a pattern (True when there are too many to look)."""
    from fnmatch import fnmatchcase

    if not os.path.isdir(git):
        return False
    seen = 0
    for _folder, dirs, files in os.walk(git):
        for name in [*dirs, *files]:
            seen += 1
            if seen > _MAX_GIT_ENTRIES:
                return True
            if any(fnmatchcase(name.lower() if icase else name, p.lower() if icase else p)
                   for p, icase in patterns):
                return True
    return False


def _probe(pattern: str) -> str:
    """A name ``pattern`` matches (``*.pyc`` -> ``x.pyc``, ``[ab]c`` -> ``ac``)."""
    out: list[str] = []
    k = 0
    while k < len(pattern):
        ch = pattern[k]
        if ch in "*?":
            out.append("x")
        elif ch == "[" and "]" in pattern[k + 2:]:
            end = pattern.index("]", k + 2)
            first = pattern[k + 1:end].lstrip("!^")[:1]
            out.append(first or "x")
            k = end
        else:
            out.append(ch)
        k += 1
    return "".join(out)


def _unignored(top: str, rels: list[str], patterns: list[tuple[str, bool]]) -> str:
    """The first name pattern git would not ignore below a start path ("" when git ignores
    every one), as ``rm -r`` asks of its folders: deleting only what git ignores."""
    for rel in rels:
        for pattern, _icase in patterns:
            name = _probe(pattern)
            path = name if rel == "." else os.path.join(rel, name)
            if _ask_git(top, path) != "ignored":
                return f"git does not ignore {pattern} in {rel}"
    return ""


def _kept(top: str, rels: list[str], patterns: list[tuple[str, bool]]) -> str:
    """The first file git tracks or does not ignore that a pattern matches below ``rels``
    ("" when none), or why git could not say."""
    import subprocess

    specs = [f":(glob{',icase' if icase else ''}){'' if rel == '.' else rel + '/'}**/{p}"
             for rel in rels for p, icase in patterns]
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0"}
    try:
        listed = subprocess.run(["git", "--no-pager", "-c", "core.fsmonitor=false", "-c",
                                 "core.untrackedCache=false", "ls-files", "-z", "--cached",
                                 "--others", "--exclude-standard", "--", *specs], cwd=top,
                                capture_output=True, timeout=5, env=env, check=False)
    except (OSError, subprocess.SubprocessError):
        return "git could not say which files its names match"
    if listed.returncode != 0:
        return "git could not say which files its names match"
    first = listed.stdout.split(b"\0", 1)[0].decode("utf-8", "replace")
    return f"its names match {first}, which git tracks or does not ignore" if first else ""


def _names(raws: list[str]) -> str:
    return raws[0] if len(raws) == 1 else ", ".join(raws[:-1]) + " and " + raws[-1]


def _scratch(an: Walk, path: str) -> bool:
    """A folder this command made with ``mktemp`` in a temporary folder, outside the home, that
    neither holds nor is inside the folder the command runs in: scratch space (``rm -rf "$d"``
    after ``d=$(mktemp -d)``). A temporary folder's other paths stay as they were."""
    made = getattr(an, "made_temporary", None)
    if not made or not any(path == m or path.startswith(m.rstrip("/") + "/") for m in made):
        return False
    root = os.path.realpath(an.root or "/")
    home = os.path.realpath(os.path.expanduser("~"))
    in_tree = system.work_tree(os.path.abspath(path)) is not None
    return system.temporary(os.path.dirname(path)) and not in_tree and not (
        path == root or root.startswith(path.rstrip("/") + "/") or
        path.startswith(root.rstrip("/") + "/")) and not (
        home != "/" and (path == home or path.startswith(home + "/") or
                         home.startswith(path.rstrip("/") + "/")))


def _one(an: Walk, path: str, raw: str) -> tuple[bool, str]:
    if _scratch(an, path):
        return True, "in a temporary folder: scratch space"
    top = system.work_tree(os.path.realpath(an.root or path))
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
