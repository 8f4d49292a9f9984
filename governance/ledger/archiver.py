"""``governance ledger archive``: move old sealed segments, with their id indexes, into an archive
folder (default ``<project>/.claude/governance/archive``).

Only a ledger that verifies is archived (its chain and its anchor), so the ends the manifest keeps
are ends the chain vouched for. Each segment's ends go into the manifest before the file moves
(``governance.ledger.archive``); a move across file systems copies, syncs, then removes, so an
interrupted archive leaves every record in one place or both and is finished by running it again.
The newest sealed segment always stays. Not on the hot path: the user's command.
"""

from __future__ import annotations

import errno
import filecmp
import os
import shutil
from dataclasses import dataclass, field
from typing import Any

from governance.errors import LedgerError
from governance.ledger import archive, checkpoint, index
from governance.ledger.chain import LOCK, _Lock, now_iso
from governance.ledger.files import last_record, segments

_ENDS = ("first_seq", "first_prev", "last_seq", "last_hash", "last_prev", "lines")
FIX = ("`governance ledger archive --before 2026-01-01` (or an age: `--before 90d`) archives the "
       "sealed segments whose records are all older; `--keep 5` keeps the newest five")


@dataclass
class Archived:
    """What one run moved (``names`` empty: nothing to archive, ``why`` says so)."""

    folder: str
    names: list[str] = field(default_factory=list)
    first_seq: int = 0
    last_seq: int = 0
    why: str = ""


def _last_ts(path: str) -> str:
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        found = last_record(fd, os.fstat(fd).st_size)[0]
    finally:
        os.close(fd)
    return str(found.get("ts", "")) if found else ""


def choose(gov_dir: str, before: str | None, keep: int | None,
           manifest: dict[str, dict[str, Any]]) -> tuple[list[str], str]:
    """The sealed segments to archive, oldest first, and why there are none when there are none.
    Segments the manifest already lists but that are still here (an interrupted run) come too."""
    from governance.ledger.reader import parse_time

    if (before is None) == (keep is None):
        raise LedgerError("say which segments to archive: --before DATE or --keep N", fix=FIX)
    local = segments(gov_dir)
    sealed = local[:-1]                 # the newest sealed segment stays
    chosen: list[str] = []
    if keep is not None:
        if keep < 1:
            raise LedgerError(f"--keep {keep}: at least the newest sealed segment stays (it holds "
                              "where the live ledger's chain starts)", fix=FIX)
        chosen = local[:max(0, len(local) - keep)]
        why = f"the ledger has {len(local)} sealed segment(s) and --keep {keep} keeps them all"
    else:
        assert before is not None
        try:
            cutoff = parse_time(before)
        except ValueError as exc:
            raise LedgerError(f"--before: {exc}", fix=FIX) from None
        for name in sealed:
            if not _last_ts(os.path.join(gov_dir, name)) < cutoff:
                break
            chosen.append(name)
        why = (f"no sealed segment but the newest ends before {cutoff} (the newest sealed "
               f"segment always stays; {len(local)} sealed segment(s) here)")
    pending = [name for name in local if name in manifest]
    return sorted(set(chosen) | set(pending)), why


def _target(gov_dir: str, to: str | None) -> tuple[str, str]:
    """The archive folder's path and how the manifest names it (relative when inside the
    governance folder, so the project can move)."""
    path = os.path.abspath(to) if to else os.path.join(gov_dir, archive.DEFAULT_DIR)
    if os.path.realpath(path) == os.path.realpath(gov_dir):
        raise LedgerError(f"--to {to}: that is the governance folder itself, where the ledger "
                          "lives", fix="name another folder")
    inside = os.path.relpath(path, gov_dir)
    return path, inside if not inside.startswith("..") else path


def _move(source: str, target: str) -> None:
    """Rename ``source`` to ``target``; across file systems copy, sync, then remove. A target
    that holds the same bytes (left by an interrupted run) is kept."""
    if os.path.exists(target):
        if filecmp.cmp(source, target, shallow=False):
            os.unlink(source)
            return
        raise LedgerError(f"{target} already exists and is not {os.path.basename(source)}",
                          file=target, fix="move it away, or archive to another folder (--to)")
    try:
        os.rename(source, target)
        return
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
    partial = f"{target}.{os.getpid()}.part"
    shutil.copyfile(source, partial)
    os.chmod(partial, 0o600)
    fd = os.open(partial, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(partial, target)
    os.unlink(source)


def run(gov_dir: str, before: str | None = None, keep: int | None = None,
        to: str | None = None) -> Archived:
    """Archive the sealed segments ``before`` a time (ISO or an age) or all but the newest
    ``keep``, into ``to`` (default ``archive/`` in the governance folder). Raises LedgerError on
    bad input and on a ledger that does not verify."""
    from governance.ledger.verifier import verify

    try:
        manifest = archive.read(gov_dir)
    except ValueError as exc:
        raise LedgerError(str(exc), file=os.path.join(gov_dir, archive.MANIFEST),
                          fix="restore it from a backup; archiving adds to it") from None
    path, named = _target(gov_dir, to)
    chosen, why = choose(gov_dir, before, keep, manifest)
    result = Archived(path)
    if not chosen:
        result.why = why
        return result
    was = {name: index.identity(os.path.join(gov_dir, name)) for name in chosen}
    report = verify(gov_dir)
    if not report.ok:
        problem = report.problem.render() if report.problem else next(
            found.line() for found in report.anchors if found.failed)
        raise LedgerError(f"the ledger does not verify ({problem}); only a ledger that verifies "
                          "is archived", fix="run `governance ledger verify` and deal with what "
                                             "it names first")
    for name in chosen:
        segment = os.path.join(gov_dir, name)
        if not index.current(segment):
            index.build(segment)
    known = checkpoint.read(gov_dir)
    with _Lock(os.path.join(gov_dir, LOCK)):
        for name in chosen:
            segment = os.path.join(gov_dir, name)
            if index.identity(segment) != was[name]:
                raise LedgerError(f"{name} changed while it was being archived", file=segment,
                                  fix="run `governance ledger verify`, then archive again")
            entry = manifest.get(name)
            if entry is None:
                ends = report.ends[name]
                entry = manifest[name] = {
                    **{key: ends[key] for key in _ENDS}, "size": was[name][0],
                    "last_ts": _last_ts(segment), "dir": named, "archived": now_iso()}
                archive.write(gov_dir, manifest)
            folder = archive.folder(gov_dir, entry)
            os.makedirs(folder, mode=0o700, exist_ok=True)
            moved = os.path.join(folder, name)
            _move(segment, moved)
            if os.path.exists(index.path_for(segment)):
                if os.path.exists(index.path_for(moved)):
                    os.unlink(index.path_for(moved))      # one left by an interrupted run
                _move(index.path_for(segment), index.path_for(moved))
                index.rekey(moved, was[name])
            known[name] = {**{key: entry[key] for key in _ENDS},
                           "identity": checkpoint.identity(moved)}
            result.names.append(name)
        checkpoint.write(gov_dir, known)
    result.first_seq = int(manifest[chosen[0]]["first_seq"])
    result.last_seq = int(manifest[chosen[-1]]["last_seq"])
    return result
