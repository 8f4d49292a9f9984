"""Archived segments: old sealed segments moved out of the governance folder's way, by
``governance ledger archive`` (the user's command; the agent's is ``governance-admin``).

The manifest ``ledger.archive.json`` stays beside the ledger. For each archived segment it keeps
the folder it went to (relative to the governance folder when inside it) and its chain ends (first
and last ``seq``, the ``prev`` of its first record, the hash of its last, its line count and size),
written *before* the file moves, so an interrupted archive is finished by running it again.
``chain_parts`` lists the ledger in chain order: archived segments (their file where it still is,
else their recorded ends only), the sealed segments in the folder, the live ledger. ``verify``
hashes the archived files that are present with the rest and, for those moved off the machine,
checks that the chain joins their recorded ends. The newest sealed segment is never archived: it
holds where the live ledger's chain starts (what a lost head is rebuilt from). Not on the hot path
(``divergence`` reads the manifest only when a segment the anchor knows is gone).
"""

from __future__ import annotations

from governance import jsoncodec, system
from governance.ledger.files import LEDGER, last_record, segments

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MANIFEST = "ledger.archive.json"
FORMAT = 1
DEFAULT_DIR = "archive"


class Part:
    """One file of the chain: ``path`` None for an archived segment that is not on this machine;
    ``recorded``: its ends in the manifest (archived segments only)."""

    __slots__ = ("name", "path", "recorded")

    def __init__(self, name: str, path: str | None, recorded: dict[str, Any] | None) -> None:
        self.name = name
        self.path = path
        self.recorded = recorded


def read(gov_dir: str) -> dict[str, dict[str, Any]]:
    """The archived segments by file name (none when there is no manifest). A manifest that is
    there but cannot be read raises ``ValueError``: the archive must not silently vanish."""
    try:
        with open(system.join(gov_dir, MANIFEST), "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return {}
    try:
        found = jsoncodec.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        found = None
    if not isinstance(found, dict) or found.get("format") != FORMAT or \
            not isinstance(found.get("segments"), dict) or \
            not all(_well_formed(name, entry) for name, entry in found["segments"].items()):
        raise ValueError(f"{system.join(gov_dir, MANIFEST)} is not an archive manifest this "
                         "version wrote")
    archived: dict[str, dict[str, Any]] = found["segments"]
    return archived


_INTS = ("first_seq", "last_seq", "lines", "size")
_TEXTS = ("first_prev", "last_hash", "last_prev", "dir")


def _well_formed(name: str, entry: Any) -> bool:
    return (len(name) == 19 and name.startswith("ledger.") and name[7:13].isdigit()
            and isinstance(entry, dict)
            and all(type(entry.get(key)) is int for key in _INTS)
            and all(isinstance(entry.get(key), str) for key in _TEXTS))


def folder(gov_dir: str, entry: dict[str, Any]) -> str:
    where = str(entry.get("dir") or DEFAULT_DIR)
    return where if where.startswith("/") else system.join(gov_dir, where)


def located(gov_dir: str, name: str, entry: dict[str, Any]) -> str | None:
    """Where an archived segment is now: its archive folder, else still in the governance folder
    (an archive interrupted before the move), else None (moved off the machine)."""
    for path in (system.join(folder(gov_dir, entry), name), system.join(gov_dir, name)):
        if system.exists(path):
            return path
    return None


def chain_parts(gov_dir: str) -> list[Part]:
    """The ledger's files in chain order: archived segments, sealed segments, the live ledger."""
    archived = read(gov_dir)
    names = sorted(set(archived) | set(segments(gov_dir)))
    parts = [Part(name, located(gov_dir, name, archived[name]), archived[name])
             if name in archived else Part(name, system.join(gov_dir, name), None)
             for name in names]
    live = system.join(gov_dir, LEDGER)
    if system.exists(live):
        parts.append(Part(LEDGER, live, None))
    return parts


def paths(gov_dir: str) -> list[str]:
    """Paths of the ledger's files present on this machine, in chain order."""
    return [part.path for part in chain_parts(gov_dir) if part.path is not None]


def recorded_end(gov_dir: str, name: str) -> list[Any] | None:
    """``[seq, hash, size]`` at which the manifest says the archived segment ``name`` ends, and
    the file's own end where it is present: None when it is not archived (or the two differ)."""
    try:
        entry = read(gov_dir).get(name)
    except ValueError:
        return None
    if not isinstance(entry, dict):
        return None
    end = [entry.get("last_seq"), entry.get("last_hash"), entry.get("size")]
    path = located(gov_dir, name, entry)
    if path is not None:
        fd = system.open(path, system.O_RDONLY | system.O_CLOEXEC)
        try:
            size = system.fstat(fd).st_size
            found = last_record(fd, size)[0]
        finally:
            system.close(fd)
        if found is None or [found.get("seq"), found.get("hash"), size] != end:
            return None
    return end


def write(gov_dir: str, archived: dict[str, dict[str, Any]]) -> None:
    """Replace the manifest at once (temp file + rename, mode 0600)."""
    path = system.join(gov_dir, MANIFEST)
    temporary = f"{path}.{system.getpid()}.tmp"
    import json

    data = json.dumps({"format": FORMAT, "segments": archived}, sort_keys=True, indent=1)
    fd = system.open(temporary, system.O_WRONLY | system.O_CREAT | system.O_TRUNC, 0o600)
    try:
        system.write(fd, data.encode("utf-8") + b"\n")
        system.fsync(fd)
    finally:
        system.close(fd)
    system.replace(temporary, path)
