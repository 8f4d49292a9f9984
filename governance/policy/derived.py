"""Derived files: what governance builds from the project's sources and then decides from, bound
to the seal so that a rewritten one is never taken for governance's own.

The compiled matrix and shell patterns, the knowledge index, the guardrails cache and the memos
that say what the sources held (``.claude/governance/.cache/*``) are files any script can write.
Their names say which sources they were built from, not what they hold, so a script that wrote
other bytes under the same name (with our own package, say) would be read as if compiled from the
accepted sources. Therefore each is written only here (:func:`store`), file and sha256 record (the
seal's ``derived`` part) replaced together under the seal's lock, and read only when it matches
its record (``governance.policy.seal``, on the hot path):

- a small file (a memo: a few hundred bytes, read whole anyway) is hashed whenever it is read;
- a large one (read in part, or too large to hash on every call) also has its stat recorded (size,
  mtime, ctime, inode), taken once its ctime has settled (``SETTLE_NS``), and is hashed again only
  when its stat moved. Any write sets the ctime to the current time, which no process can set
  back, and a replacement changes the inode.

A file with no record was not written here (an older claude-governance's, or someone else's): it is
ignored and built again, without a word. A file whose bytes differ from its record was changed
outside governance: it is not used, governance builds it again from the accepted sources, and the
change is noted (``seal.changed``) for the hook to tell the user (:func:`message`) and record in
the ledger. A mismatch is read again under the seal's lock before it counts, since a builder
replaces a file and then its record under that lock. A script that rewrites the seal too is not
caught here: see docs/tamper-evidence.md.

Cold path: loaded by whatever builds a derived file (the compiler, the indexer, a changed memo)
and by ``governance doctor``; writing takes the seal's lock (filelock) and ``json``.
"""

from __future__ import annotations

import marshal
import time

from governance import system
from governance.policy import seal
from governance.project import cache_file, read_bytes, replace_file

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection, Iterable
    from typing import Any

SETTLE_NS = 25_000_000   # 25 ms: more than a coarse file-time tick (1 to 10 ms on Linux)


def message(project: str, names: Iterable[str]) -> str:
    """What the user reads about derived files found changed."""
    paths = ", ".join(cache_file(project, name) for name in names)
    return (f"Files governance builds from its accepted sources were changed outside governance "
            f"({paths}): governance did not use them and built them again from the accepted "
            "sources. Something other than governance is writing its files; `governance doctor` "
            "checks them all.")


def remember(project: str, name: str, seen: object, value: object) -> None:
    """``project.remember`` for a memo bound to the seal (``seal.recall_derived`` reads it)."""
    if seen is not None:
        store(project, {name: marshal.dumps({"signature": seen, "value": value})})


def store(project: str, files: dict[str, bytes], settle: Collection[str] = (),
          remove: Collection[str] = ()) -> bool:
    """Write derived files (each atomically) and record them in the seal, under the seal's lock;
    unlink the files in ``remove`` and drop their records. Files named in ``settle`` (large ones)
    also get their stat recorded, once their ctime is older than ``SETTLE_NS``. A project where
    nothing can be written keeps nothing (its files are built again when needed): False."""
    folder = system.dirname(cache_file(project, "x"))
    try:
        system.makedirs(folder, mode=0o700, exist_ok=True)
        with seal.lock(project):
            changes: dict[str, Any] = {}
            for name in remove:
                try:
                    system.unlink(system.join(folder, name))
                except FileNotFoundError:
                    pass
                changes[name] = None
            for name, data in files.items():
                replace_file(system.join(folder, name), data)
                changes[name] = {"sha256": seal.digest(data), "stat": None}
            for name in settle:
                if name in files:
                    changes[name]["stat"] = _settled(system.join(folder, name),
                                                     changes[name]["sha256"])
            record = seal.read(project) or {"version": seal.VERSION}
            entries = dict(seal.derived_entries(record))
            for name, entry in changes.items():
                if entry is None:
                    entries.pop(name, None)
                else:
                    entries[name] = entry
            record[seal.DERIVED] = entries
            seal.write(project, record)
        return True
    except Exception:  # OSError, a lock timeout: nothing recorded, so nothing trusted
        return False


def _settled(path: str, sha: str) -> list[int] | None:
    """The file's stat once its ctime is at least ``SETTLE_NS`` old, when its bytes are still
    ``sha`` and its stat did not move while they were read; else None (hashed on every read).
    Any later write gets a later ctime, so a recorded stat can only match the bytes hashed."""
    first = system.stat(path)
    wait = first.st_ctime_ns + SETTLE_NS - time.time_ns()
    if wait > 0:
        time.sleep(wait / 1e9)
    if first.st_ctime_ns % 1_000_000_000 == 0:
        return None         # a file system with whole-second times: too coarse to rely on
    before = system.stat(path)
    data = read_bytes(path)
    after = system.stat(path)
    if seal.stat_list(before) != seal.stat_list(after) or seal.digest(data) != sha:
        return None
    return seal.stat_list(after)


def audit(project: str) -> list[str]:
    """Every recorded derived file that exists and no longer holds what was recorded (for
    ``governance doctor``), one sentence each."""
    found = []
    for name, entry in sorted(seal.derived_entries(seal.read(project)).items()):
        if not isinstance(entry, dict):
            continue
        try:
            data = read_bytes(cache_file(project, name))
        except OSError:
            continue
        if seal.digest(data) != entry.get("sha256"):
            found.append(f"{cache_file(project, name)} was changed outside governance (it is not "
                         "what governance built from its sources): the next hook call builds it "
                         "again and says so; find what is writing governance's files")
    return found
