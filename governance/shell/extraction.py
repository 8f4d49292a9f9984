"""The files an archive, a patch or git plumbing writes, listed from what they read.

``tar -x``, ``unzip``, ``7z x``, ``cpio -i``, ``rsync``, ``patch``, ``git apply``, ``git am``,
``git stash apply|pop``, ``git checkout-index``, ``git read-tree -u`` and ``git update-index`` write
files that their command line does not name; so do ``git checkout BRANCH``, ``merge``, ``reset
--hard`` and the other commands that bring another commit's files (``shell.worktree`` asks git
which). A pattern with ``extracts: KIND`` sends its command
here (``shell.resolver``), and the files are listed from what the command reads, when that is on
disk and small enough (``MAX_BYTES``, ``MAX_MEMBERS``): the archive's members (``tarfile``,
``zipfile``), a patch's ``diff --git`` / ``+++`` / ``rename to`` lines, a source folder, a stash
(``git stash show --name-only``, a git that runs no command of the repository's configuration).
Each listed file that is protected becomes a target of the act (``governance-admin``, as any
target), and so does one that is an ``exec_config_paths`` file (the layer adds ``exec-config``).
What cannot be listed (an archive on standard input, a format the standard library does not read,
``git am --continue``, ``read-tree -u``) is ``governance-admin`` when its destination holds a
protected place (the project root holds ``.claude/``); extracted elsewhere it stays the pattern's
``file-write``.

Loaded only for such a command, never on an ordinary call's path; ``tarfile``, ``zipfile`` and
``subprocess`` only when there is an archive or a stash to read. The analysis's path check is the
layer's ``PathGuard`` (``base``, ``holds``, ``exec_config``); a plain callable (the analysis
alone, as in its corpus tests) has none of them: then nothing is read from disk and nothing that
cannot be listed is escalated.
"""

from __future__ import annotations

import os

from governance import system
from governance.shell import worktree
from governance.shell.rules import has_flag

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from governance.shell.parser import Simple
    from governance.shell.rules import Argv
    from governance.shell.walk import Walk

MAX_BYTES = 32 * 1024 * 1024      # an archive or patch read to list what it writes
MAX_MEMBERS = 20000               # members of an archive, files below a copied folder
MAX_TARGETS = 16                  # listed files recorded on the act
_LINK_BYTES = 4096


class _Job:
    """One extracting command: where it writes and how its files are checked."""

    __slots__ = ("an", "count", "guard", "raw", "seg")

    def __init__(self, an: Walk, raw: str, seg: str) -> None:
        self.an = an
        self.guard = getattr(an, "check", None)
        self.raw = raw
        self.seg = seg
        self.count = 0

    def folder(self) -> str | None:
        """The call's folder after the command's own ``cd``s, absolute; None when unknown."""
        base = getattr(self.guard, "base", None)
        cwd = getattr(self.an, "cwd", "")
        if base is None or cwd is None:
            return None
        return os.path.normpath(os.path.join(base, os.path.expanduser(cwd)))

    def path(self, value: str | None) -> str | None:
        """A file named on the command line, as a path this process can open."""
        folder = self.folder()
        if value is None or folder is None:
            return None
        return os.path.normpath(os.path.join(folder, os.path.expanduser(value)))

    def relative(self, path: str) -> str:
        """``path`` (relative to the command's folder) as the analysis names targets."""
        cwd = getattr(self.an, "cwd", "")
        if cwd and not os.path.isabs(path):
            return os.path.normpath(os.path.join(cwd, path))
        return path

    def written(self, dest: str, member: str, why: str) -> None:
        """A file the command writes at ``dest``/``member``: a target of the act when it is
        protected or an ``exec_config_paths`` file."""
        path = os.path.normpath(os.path.join(dest, member))
        protected = self.an.protected(path, path)
        exec_config = getattr(self.guard, "exec_config", None)
        if protected or (self.count < MAX_TARGETS and exec_config is not None
                         and exec_config(self.relative(path))):
            self.count += 1
            self.an.target(path, path, self.seg, "file-write", why)

    def unknown(self, dest: str, what: str) -> None:
        """The files cannot be listed: governance-admin when ``dest`` holds a protected place."""
        cwd = getattr(self.an, "cwd", "")
        holds = getattr(self.guard, "holds", None)
        if holds is None:
            return                           # the analysis alone: no files, no folders to ask
        if cwd is None or holds(self.relative(dest)):   # (None: after a cd known at run time)
            self.an.add("governance-admin", self.seg,
                        f"{what} cannot be listed, and it writes into {dest}, which holds "
                        "governance-protected files: ask the user to run it from a terminal")


def extract(an: Walk, kind: str, fields: list[str | None], raws: list[str], argv: Argv,
            cmd: Simple | None, seg: str) -> None:
    """List what the command writes (``kind`` from its pattern's ``extracts``) and check it."""
    job = _Job(an, raws[0] if raws else "", seg)
    try:
        _KINDS[kind](job, argv, cmd)
    except (OSError, ValueError, EOFError, RuntimeError, LookupError) as exc:
        job.unknown(".", f"{fields[0]} ({type(exc).__name__} while listing its files)")


def _last(argv: Argv, *options: str) -> str | None:
    for option in options:
        values = argv.values.get(option)
        if values:
            return values[-1][0]
    return None


def _positionals(argv: Argv, start: int = 0) -> list[str | None]:
    return [value for value, _ in argv.positionals[start:]]


def _stdin_file(cmd: Simple | None, job: _Job) -> tuple[str, str | None]:
    """What the command reads on standard input: ("text", TEXT), ("file", PATH) or ("", None)."""
    if cmd is None:
        return "", None
    kind, value = job.an.stdin_text(cmd)
    if kind == "literal":
        return "text", value
    if kind == "file":
        return "file", value
    return "", None


# --- archives ------------------------------------------------------------------------------------
_TAR_VALUE_LETTERS = "fbCTXgKLNV"   # old-style bundle letters that take the next argument


def _tar(job: _Job, argv: Argv, cmd: Simple | None) -> None:
    positionals = _positionals(argv)
    bundle = positionals[0] if positionals and positionals[0] and \
        positionals[0].isalpha() else None
    extracting = any(has_flag(argv.flags, f) for f in ("-x", "--extract", "--get")) or \
        (bundle is not None and "x" in bundle)
    if not extracting:
        return
    archive = _last(argv, "-f", "--file")
    dest = _last(argv, "-C", "--directory")
    if bundle is not None:
        values = iter(positionals[1:])
        for letter in bundle:
            if letter in _TAR_VALUE_LETTERS:
                value = next(values, None)
                if letter == "f":
                    archive = value
                elif letter == "C":
                    dest = value
    dest = dest or "."
    named = positionals if bundle is None else positionals[1 + sum(
        1 for letter in bundle if letter in _TAR_VALUE_LETTERS):]
    if archive in (None, "-"):
        kind, value = _stdin_file(cmd, job)
        archive = value if kind == "file" else None
    if _absent(job, archive):
        return
    strip = _strip(argv)
    absolute = any(has_flag(argv.flags, f) for f in ("-P", "--absolute-names"))
    members = _archive_members(job, archive, "tar")
    if members is None:
        job.unknown(dest, f"the archive {archive or '(standard input)'}")
        return
    _check_members(job, dest, _selected(members, named), strip, absolute, "tar extracts")


def _strip(argv: Argv) -> int | None:
    """``--strip-components=N``; None when it is given but its value is not known."""
    value = _last(argv, "--strip-components", "--strip")
    if value is not None:
        return int(value) if value.isdigit() else None
    if any(has_flag(argv.flags, f) for f in ("--strip-components", "--strip")):
        return None
    return 0


def _check_members(job: _Job, dest: str, members: list[tuple[str, str, str]],
                   strip: int | None, absolute: bool, verb: str) -> None:
    """Each member (name, link kind "" / "hard" / "sym", link target) written at ``dest``."""
    for name, link, target in members:
        for candidate in _stripped(name, strip, absolute):
            job.written(dest, candidate, f"{verb} {candidate}")
            if link == "hard":          # a hard link to a file already there
                for other in _stripped(target, strip, absolute):
                    job.written(dest, other, f"{verb} a hard link to {other}")
            elif link == "sym":         # later members may be written through it
                folder = os.path.dirname(candidate)
                job.written(dest, os.path.join(folder, target),
                            f"{verb} a symbolic link to {target}")


def _stripped(name: str, strip: int | None, absolute: bool) -> list[str]:
    if not absolute:
        name = name.lstrip("/")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if strip is None:                   # every possible number of leading folders
        return ["/".join(parts[k:]) for k in range(len(parts))] or [name]
    if strip >= len(parts):
        return []
    text = "/".join(parts[strip:])
    return ["/" + text if absolute and name.startswith("/") and not strip else text]


def _absent(job: _Job, archive: str | None) -> bool:
    """The archive is named, not on disk and not written earlier in the command: the command
    fails and extracts nothing."""
    if archive is None or archive == "-" or job.an.wrote(archive):
        return False
    path = job.path(archive)
    return path is not None and not os.path.lexists(path)


def _archive_members(job: _Job, archive: str | None,
                     prefer: str) -> list[tuple[str, str, str]] | None:
    """The members of an archive on disk (tar or zip, whichever it is), or None."""
    if archive is None or archive.startswith(("/dev/", "/proc/")) or "://" in archive:
        return None
    path = job.path(archive)
    if path is None or not os.path.isfile(path) or os.path.getsize(path) > MAX_BYTES:
        return None
    readers = (_tar_members, _zip_members) if prefer == "tar" else (_zip_members, _tar_members)
    for reader in readers:
        members = reader(path)
        if members is not None:
            return members
    return None


def _tar_members(path: str) -> list[tuple[str, str, str]] | None:
    import tarfile

    try:
        with tarfile.open(path, "r:*") as archive:
            out: list[tuple[str, str, str]] = []
            for member in archive:
                if len(out) >= MAX_MEMBERS:
                    return None
                link = "hard" if member.islnk() else "sym" if member.issym() else ""
                out.append((member.name, link, member.linkname))
            return out
    except (tarfile.TarError, OSError, EOFError, ValueError):
        return None


def _zip_members(path: str) -> list[tuple[str, str, str]] | None:
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
            if len(infos) > MAX_MEMBERS:
                return None
            out: list[tuple[str, str, str]] = []
            for info in infos:
                if (info.external_attr >> 16) & 0o170000 == 0o120000 and \
                        info.file_size <= _LINK_BYTES:
                    target = archive.read(info).decode("utf-8", "replace")
                    out.append((info.filename, "sym", target))
                else:
                    out.append((info.filename, "", ""))
            return out
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, RuntimeError):
        return None


def _unzip(job: _Job, argv: Argv, cmd: Simple | None) -> None:
    positionals = _positionals(argv)
    dest = _last(argv, "-d") or "."
    archive = positionals[0] if positionals else None
    if archive is not None and job.path(archive) is not None and \
            not os.path.exists(str(job.path(archive))) and \
            os.path.exists(str(job.path(archive + ".zip"))):
        archive += ".zip"
    if _absent(job, archive):
        return
    members = _archive_members(job, archive, "zip")
    if members is None:
        job.unknown(dest, f"the archive {archive or '(unnamed)'}")
        return
    _check_members(job, dest, _selected(members, positionals[1:]), 0, False, "unzip extracts")


def _selected(members: list[tuple[str, str, str]], named: list[str | None]
              ) -> list[tuple[str, str, str]]:
    """The members a command line names (a name, or a folder holding the member); all of them
    when it names none, or names one known only at run time or as a pattern."""
    if not named or any(n is None or any(c in n for c in "*?[") for n in named):
        return members
    wanted = [str(n).removeprefix("./").rstrip("/") for n in named]
    return [m for m in members if any(
        (name := m[0].removeprefix("./").rstrip("/")) == w or name.startswith(w + "/")
        for w in wanted)]


def _seven(job: _Job, argv: Argv, cmd: Simple | None) -> None:
    positionals = _positionals(argv)
    if not positionals or positionals[0] not in ("x", "e"):
        return
    archive = positionals[1] if len(positionals) > 1 else None
    dest = _last(argv, "-o") or "."
    if _absent(job, archive):
        return
    members = _archive_members(job, archive, "zip")
    if members is None:
        job.unknown(dest, f"the archive {archive or '(unnamed)'}")
        return
    if positionals[0] == "e":           # e extracts every member into one folder
        members = [(name.rsplit("/", 1)[-1], link, target) for name, link, target in members]
    _check_members(job, dest, members, 0, False, "7z extracts")


def _cpio(job: _Job, argv: Argv, cmd: Simple | None) -> None:
    if any(has_flag(argv.flags, f) for f in ("-i", "--extract")):
        job.unknown(_last(argv, "-D", "--directory") or ".", "the cpio archive")


def _tree(job: _Job, argv: Argv, cmd: Simple | None) -> None:
    """``rsync SRC... DEST``: the files below each local source folder, as written at DEST."""
    positionals = [p for p in _positionals(argv)]
    if len(positionals) < 2 or positionals[-1] is None:
        return
    dest = str(positionals[-1])
    if ":" in dest.split("/", 1)[0]:
        return                          # a remote destination
    for source in positionals[:-1]:
        if source is None:
            job.unknown(dest, "a source known only at run time")
            continue
        if ":" in source.split("/", 1)[0]:   # host:/x lands in DEST/x, host:/x/ in DEST
            job.unknown(_landing(argv, dest, source.split(":", 1)[1]),
                        f"the remote source {source}")
            continue
        path = job.path(source)
        if path is None:
            job.unknown(dest, f"the source {source}")
            continue
        if not os.path.isdir(path):
            continue                    # a file: the pattern's own target covers it
        into = dest if source.endswith("/") else os.path.join(dest, os.path.basename(path))
        names = _walk(path)
        if names is None:
            job.unknown(dest, f"the folder {source}")
            continue
        _check_members(job, into, [(n, "", "") for n in names], 0, False, "rsync copies")


def _landing(argv: Argv, dest: str, remote: str) -> str:
    """Where rsync writes a remote source's files: ``DEST/NAME`` for a folder or file named
    by its last part, ``DEST`` itself for its contents (``x/``, ``x/.``, a glob, the home
    folder) or with ``--relative`` (the whole path is recreated below ``DEST``)."""
    name = remote.rsplit("/", 1)[-1]
    if remote.endswith("/") or name in ("", ".", "..", "~") or any(c in name for c in "*?[{") \
            or any(has_flag(argv.flags, f) for f in ("-R", "--relative")):
        return dest
    return os.path.join(dest, name)


def _walk(top: str) -> list[str] | None:
    out: list[str] = []
    for folder, dirs, files in os.walk(top):
        rel = os.path.relpath(folder, top)
        for name in [*dirs, *files]:
            out.append(name if rel == "." else os.path.join(rel, name))
            if len(out) > MAX_MEMBERS:
                return None
    return out


# --- patches -------------------------------------------------------------------------------------
def patch_paths(text: str) -> list[str]:
    """The files a unified or git diff names (``diff --git``, ``---``/``+++``, ``rename to``,
    ``copy to``), as written in it (with their ``a/``/``b/`` prefixes)."""
    out: list[str] = []
    for line in text.splitlines():
        if line.startswith("diff --git "):
            for word in line[11:].split(" "):
                if word:
                    out.append(word.strip('"'))
        elif line.startswith(("+++ ", "--- ")):
            name = line[4:].split("\t", 1)[0].strip().strip('"')
            if name and name != "/dev/null":
                out.append(name)
        elif line.startswith(("rename to ", "copy to ", "rename from ", "copy from ")):
            out.append(line.split(" ", 2)[2].strip().strip('"'))
    seen: list[str] = []
    for name in out:
        if name not in seen:
            seen.append(name)
    return seen


def _patch_text(job: _Job, value: str | None) -> str | None:
    """The text of a patch file named on the command line, or None when it cannot be read."""
    if value is None:
        return None
    known = job.an.file_text(value)
    if known is not None:
        return known
    if job.an.wrote(value):
        return None
    path = job.path(value)
    if path is None or not os.path.isfile(path) or os.path.getsize(path) > MAX_BYTES:
        return None
    with open(path, encoding="utf-8", errors="replace") as handle:
        return handle.read()


def _patches(job: _Job, files: list[str | None], cmd: Simple | None) -> list[str] | None:
    """The texts of the patches a command applies (its files, else standard input)."""
    if not files:
        kind, value = _stdin_file(cmd, job)
        files = [value] if kind == "file" else []
        if kind == "text":
            return [str(value)]
        if not files:
            return None
    texts = []
    for name in files:
        text = _patch_text(job, name)
        if text is None:
            return None
        texts.append(text)
    return texts


def _check_patch(job: _Job, dest: str, texts: list[str], strip: int | None, verb: str) -> None:
    for text in texts:
        for name in patch_paths(text):
            for candidate in _stripped(name, strip, False) or [name]:
                job.written(dest, candidate, f"{verb} {candidate}")


def _patch(job: _Job, argv: Argv, cmd: Simple | None) -> None:
    """``patch [-p N] [-d DIR] [-i FILE] [FILE [PATCH]]``."""
    positionals = _positionals(argv)
    dest = _last(argv, "-d", "--directory") or "."
    source = _last(argv, "-i", "--input") or (positionals[1] if len(positionals) > 1 else None)
    texts = _patches(job, [source] if source is not None else [], cmd)
    if texts is None:
        job.unknown(dest, "the patch")
        return
    _check_patch(job, dest, texts, _strip_option(argv), "patch edits")


def _strip_option(argv: Argv) -> int | None:
    """``-p N``; None (every number of leading folders) when it is not known."""
    value = _last(argv, "-p", "--strip")
    return int(value) if value is not None and value.isdigit() else None


_APPLY_READS = ("--check", "--stat", "--numstat", "--summary")


def _git_apply(job: _Job, argv: Argv, cmd: Simple | None) -> None:
    if any(has_flag(argv.flags, f) for f in _APPLY_READS) and \
            not has_flag(argv.flags, "--apply"):
        return
    dest = _git_dest(argv)
    texts = _patches(job, _positionals(argv, 1), cmd)
    if texts is None:
        job.unknown(dest, "the patch")
        return
    root = _last(argv, "--directory")
    strip = _strip_option(argv)
    _check_patch(job, os.path.join(dest, root) if root else dest, texts,
                 1 if strip is None else strip, "git apply writes")


def _git_am(job: _Job, argv: Argv, cmd: Simple | None) -> None:
    if any(has_flag(argv.flags, f) for f in ("--quit", "--show-current-patch")):
        return
    dest = _git_dest(argv)
    if any(has_flag(argv.flags, f) for f in ("--continue", "--skip", "--abort", "--resolved",
                                             "-r", "--retry")):
        job.unknown(dest, "the patches of an interrupted git am")
        return
    texts = _patches(job, _positionals(argv, 1), cmd)
    if texts is None:
        job.unknown(dest, "the mailbox")
        return
    _check_patch(job, dest, texts, 1, "git am writes")


def _git_dest(argv: Argv) -> str:
    """Where a git command writes the working tree, relative to the analysis's folder: that
    folder itself, which ``git -C DIR`` and ``--work-tree=DIR`` have already entered
    (``shell.resolver``)."""
    return "."


# --- git's index and stashes ---------------------------------------------------------------------
def _git_stash(job: _Job, argv: Argv, cmd: Simple | None) -> None:
    positionals = _positionals(argv, 1)
    action = positionals[0] if positionals else None
    if action not in ("apply", "pop", "branch"):
        return
    rest = positionals[2:] if action == "branch" else positionals[1:]
    ref = rest[0] if rest else "stash@{0}"
    dest = _git_dest(argv)
    folder = job.path(dest)
    names = worktree.stash_paths(folder, ref) if ref is not None and folder is not None else None
    if names is None:
        job.unknown(dest, f"the stash {ref or '(unknown)'}")
        return
    top = system.work_tree(os.path.abspath(str(folder)))
    into = top if top is not None else dest     # git names the files from the top folder
    _check_members(job, into, [(n, "", "") for n in names], 0, False, "git stash writes")


def _git_tree(job: _Job, argv: Argv, cmd: Simple | None) -> None:
    """``git checkout BRANCH``, ``merge``, ``reset --hard`` ...: the files git says differ."""
    positionals = _positionals(argv)
    sub = str(positionals[0]) if positionals else "checkout"
    dest = _git_dest(argv)
    folder = job.path(dest)
    if folder is None:               # after a cd known only at run time: the project's own tree
        base = getattr(job.guard, "base", None)
        if base is None:             # no tree to ask git about: a folder may hold governance's
            if sub in ("checkout", "restore"):
                for value, raw in argv.positionals[1:]:
                    if job.an.holds_protected(value):
                        job.an.add("governance-admin", job.seg,
                                   f"git {sub} may write {raw}, which holds governance files")
            return
        folder = os.path.normpath(os.path.join(str(base), os.path.expanduser(dest)))
    if worktree.REFS_MOVED in job.an.vars and sub != "stash":
        job.unknown(dest, f"the files git {sub} replaces, after this command moved a branch, "
                          "HEAD or a tag,")
        return
    if sub in ("checkout", "restore") and cmd is not None and _pathspecs(job, argv, cmd, sub,
                                                                       folder, dest):
        return
    try:
        names = worktree.replaced(folder, sub, argv)
    except worktree.Unknown as exc:
        job.unknown(dest, f"the files git {sub} replaces ({exc.what})")
        return
    top = system.work_tree(os.path.abspath(folder))
    _check_members(job, top if top is not None else dest, [(n, "", "") for n in names], 0, False,
                   f"git {sub} replaces")


def _pathspecs(job: _Job, argv: Argv, cmd: Simple, sub: str, folder: str, dest: str) -> bool:
    """``git checkout [REV] [--] PATHSPEC``, ``git restore [-s REV] PATHSPEC``: the files git
    says it changes (those that differ from the index or REV: ``.`` is every changed file, and
    ``*.json`` crosses folders), checked; whether paths were given. A path known only at run
    time may be any file."""
    words = [job.an.expand_one(w.parts) for w in cmd.words]
    at = next((k for k, w in enumerate(words) if w == sub), None)
    if at is None:
        return False
    rest = words[at + 1:]
    if sub == "checkout":
        if "--" in rest:
            cut = rest.index("--")
            before = [w for w in rest[:cut] if w is not None and not w.startswith("-")]
            revision, specs = (before[0] if before else None), rest[cut + 1:]
        else:
            given = [w for w in rest if w is None or not w.startswith("-")]
            if not given or given[0] is None or any(has_flag(argv.flags, f) for f in (
                    "-b", "-B", "--orphan", "--detach", "-d", "-t", "--track")):
                return False
            known = worktree.is_revision(folder, given[0])
            if known is None:
                job.unknown(dest, f"whether git {sub} {given[0]} names a branch or a path")
                return True
            revision, specs = (given[0], given[1:]) if known else (None, given)
            if not specs:
                return False                  # git checkout BRANCH: the files it replaces
    else:
        if (has_flag(argv.flags, "--staged") or has_flag(argv.flags, "-S")) and not (
                has_flag(argv.flags, "--worktree") or has_flag(argv.flags, "-W")):
            return False                      # the index only: no file of the tree changes
        revision = _last(argv, "--source") or _last(argv, "-s")
        specs = [w for w in rest if w is None or not w.startswith("-")]
        if revision is not None and revision in specs:
            specs.remove(revision)
    if not specs:
        return False
    if None in specs:
        specs = [":/"]                        # a run-time path: any file that would change
    try:
        names = worktree.pathspec_files(folder, revision, [str(w) for w in specs])
    except worktree.Unknown as exc:
        job.unknown(dest, f"the files git {sub} writes ({exc.what})")
        return True
    top = system.work_tree(os.path.abspath(folder))
    _check_members(job, top if top is not None else dest, [(n, "", "") for n in names], 0,
                   False, f"git {sub} writes")
    return True


def _git_checkout_index(job: _Job, argv: Argv, cmd: Simple | None) -> None:
    dest = _git_dest(argv)
    if any(has_flag(argv.flags, f) for f in ("-a", "--all", "--stdin")):
        job.unknown(dest, "every file of the index")
        return
    prefix = _last(argv, "--prefix") or ""
    for name in _positionals(argv, 1):
        if name is None:
            job.unknown(dest, "a path known only at run time")
        else:
            job.written(dest, prefix + name, f"git checkout-index writes {prefix + name}")


def _git_read_tree(job: _Job, argv: Argv, cmd: Simple | None) -> None:
    if has_flag(argv.flags, "-u"):
        job.unknown(_git_dest(argv), "the tree git read-tree -u checks out")


def _git_update_index(job: _Job, argv: Argv, cmd: Simple | None) -> None:
    """Staging a file from which a later checkout writes it: the paths it names."""
    dest = _git_dest(argv)
    names: list[str | None] = list(_positionals(argv, 1))
    for value, _raw in argv.values.get("--cacheinfo", ()):
        names.append(value)
    if any(has_flag(argv.flags, f) for f in ("--index-info", "--stdin")):
        kind, text = _stdin_file(cmd, job)
        if kind != "text" or text is None:
            job.unknown(dest, "the paths git update-index reads")
            return
        names.extend(line.rsplit("\t", 1)[-1] for line in text.splitlines() if line)
    for name in names:
        if name is None:
            job.unknown(dest, "a path known only at run time")
            continue
        path = name.rsplit(",", 2)[-1] if name.count(",") >= 2 else name
        job.written(dest, path, f"git update-index stages {path}, which a checkout writes")


_CONFIG_WRITES = ("--add", "--unset", "--unset-all", "--replace-all", "--rename-section",
                  "--remove-section", "-e", "--edit")
_CONFIG_READS = ("--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color",
                 "--get-colorbool", "-l", "--list")


def _git_config(job: _Job, argv: Argv, cmd: Simple | None) -> None:
    """``git config`` that sets, adds, unsets or edits a key (not one that reads) is
    ``exec-config``: aliases, hooks, ``core.sshCommand``, credential helpers, filters and
    ``include.path`` all decide what later git commands run."""
    words = _positionals(argv, 1)
    if any(has_flag(argv.flags, f) for f in _CONFIG_WRITES) or \
            (words and words[0] in ("set", "unset", "edit", "rename-section", "remove-section")):
        writes = True
    elif any(has_flag(argv.flags, f) for f in _CONFIG_READS) or \
            (words and words[0] in ("get", "list")):
        writes = False
    else:
        writes = len(words) >= 2            # git config KEY VALUE
    if writes:
        job.an.add("exec-config", job.seg, "git config sets a key, which changes what later "
                                           "git commands run (aliases, hooks, sshCommand, "
                                           "credential helpers)")
        named = [*argv.values.get("--file", ()), *argv.values.get("-f", ())]
        if not named and cmd is not None and has_flag(argv.flags, "-f"):   # git: -f a flag
            for k, word in enumerate(cmd.words[:-1]):
                if job.an.expand_one(word.parts) == "-f":
                    after = cmd.words[k + 1]
                    named.append((job.an.expand_one(after.parts), str(after.text or "")[
                        after.start:after.end]))
        for value, raw in named:
            job.an.target(value, raw, job.seg, "file-write",         # git config -f FILE K V
                          "git config --file writes the file it names")


_KINDS: dict[str, Any] = {
    "git-config": _git_config,
    "tar": _tar, "zip": _unzip, "7z": _seven, "cpio": _cpio, "tree": _tree, "patch": _patch,
    "git-apply": _git_apply, "git-am": _git_am, "git-stash": _git_stash,
    "git-checkout-index": _git_checkout_index, "git-read-tree": _git_read_tree,
    "git-update-index": _git_update_index, "git-tree": _git_tree,
}
