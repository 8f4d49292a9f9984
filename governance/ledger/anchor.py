"""The ledger's head, anchored outside the project: a checkpoint under the user's home
(``~/.claude/governance/anchors/<id>.json``; ``GOVERNANCE_ANCHOR_DIR`` names another folder), which
the sandbox's settings deny writing.

A script that rewrites the project's ledger and its head sidecar together (re-chained, truncated,
deleted, or split into segments no rotation made) leaves a chain that verifies on its own. The
anchor remembers where the chain stood: the last record's ``seq`` and ``hash`` and the bytes it
occupies (``at``), the live file's identity (device, inode), the current segment, and where every
sealed segment ends (``sealed``: ``[number, seq, hash, size]``).

Every append moves it forward, under the ledger's lock, but only over a ledger that still holds
the record it names: where the ledger no longer does, the anchor stays where it was, so the
difference remains for ``governance ledger verify``, ``doctor`` and ``status`` to report
(``governance.ledger.divergence`` says what it is); so does an anchor that no longer parses.
``governance ledger anchor`` (the user's decision) anchors the ledger as it is. Trust on first use:
a ledger without an anchor is anchored as it is.

Hot path: ``os`` and our ``jsoncodec``; the comparison is imported only when the anchor is behind.
"""

from __future__ import annotations

from governance import jsoncodec, system

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hashlib import sha256 as sha256
    from typing import Any
else:
    try:
        from _sha256 import sha256
    except ImportError:  # pragma: no cover
        from hashlib import sha256

ENV = "GOVERNANCE_ANCHOR_DIR"
VERSION = 1
PAD = 512  # rewritten in place; padded so that it rarely needs to grow


def folder() -> str:
    """Where the anchors live: ``$GOVERNANCE_ANCHOR_DIR``, else ``~/.claude/governance/anchors``."""
    declared = system.environ_get(ENV)
    if declared:
        return declared
    home = system.environ_get("HOME") or system.expanduser("~")
    return system.join(home, ".claude", "governance", "anchors")


def path_for(gov_dir: str) -> str:
    """The anchor of the ledger in ``gov_dir`` (a project's ``.claude/governance``)."""
    return system.join(folder(), sha256(gov_dir.encode("utf-8")).hexdigest()[:32] + ".json")


def parse(data: bytes) -> dict[str, Any] | None:
    """An anchor from its bytes; None when they are not one (empty, torn or edited by hand)."""
    try:
        found = jsoncodec.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None
    if (isinstance(found, dict) and found.get("v") == VERSION
            and type(found.get("seq")) is int and isinstance(found.get("hash"), str)
            and type(found.get("segment")) is int and isinstance(found.get("at"), list)
            and isinstance(found.get("sealed"), list)):
        return found
    return None


def read(gov_dir: str) -> tuple[str, dict[str, Any] | None]:
    """``(path, anchor)``: the anchor is None where there is none; raises ``ValueError`` where the
    file is there but is not an anchor."""
    path = path_for(gov_dir)
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return path, None
    found = parse(data)
    if found is None:
        raise ValueError(f"{path} is not a ledger anchor this version wrote")
    return path, found


def build(gov_dir: str, record: dict[str, Any], at: list[int], segment: int,
          identity: list[int], sealed: list[list[Any]]) -> dict[str, Any]:
    return {"v": VERSION, "ledger": gov_dir, "seq": record["seq"], "hash": record["hash"],
            "ts": record.get("ts"), "at": at, "segment": segment, "file": identity,
            "sealed": sealed}


def encode(anchor: dict[str, Any], old_length: int = 0) -> bytes:
    data = jsoncodec.dumps(anchor, sort_keys=True, separators=(",", ":")).encode("utf-8")
    width = max(old_length, -(-(len(data) + 1) // PAD) * PAD)
    return data + b" " * (width - len(data) - 1) + b"\n"


def _open(path: str) -> int:
    try:
        return system.open(path, system.O_RDWR | system.O_CREAT | system.O_CLOEXEC, 0o600)
    except FileNotFoundError:
        # the declared folder is made as needed; under the home, only when the home exists (never
        # a home that does not, as HOME=/nonexistent under some services)
        if not system.environ_get(ENV) and not system.isdir(
                system.environ_get("HOME") or system.expanduser("~")):
            raise
        system.makedirs(system.dirname(path), mode=0o700, exist_ok=True)
        return system.open(path, system.O_RDWR | system.O_CREAT | system.O_CLOEXEC, 0o600)


def advance(gov_dir: str, before: dict[str, Any], record: dict[str, Any], at: list[int],
            segment: int, identity: list[int], rotated: list[Any] | None) -> str:
    """After an append (under the ledger's lock): move the anchor to ``record``, which occupies
    ``at`` (start, end) in the live file ``identity`` (device, inode) of ``segment``. ``before`` is
    the head the append continued from; ``rotated`` is the end of the segment this append sealed,
    if any. Returns what happened: ``advanced``, ``anchored`` (there was none), ``kept`` (the
    ledger no longer holds the anchored record: the anchor stays) or ``failed`` (not writable)."""
    path = path_for(gov_dir)
    try:
        fd = _open(path)
    except OSError:
        return "failed"
    try:
        data = system.pread(fd, max(system.fstat(fd).st_size, PAD), 0)
        old = parse(data) if data.strip() else None
        if old is None and data.strip():
            return "kept"   # torn or edited: stays for verify to report, until re-anchored
        if old is None:
            outcome = "anchored"
            sealed = _sealed_ends(gov_dir, segment)
        elif old["seq"] == before["seq"] and old["hash"] == before["hash"]:
            outcome = "advanced"
            sealed = old["sealed"] + ([rotated] if rotated else [])
        else:   # behind: a crash between two writes, or a ledger changed behind our back
            from governance.ledger.divergence import compare

            if compare(gov_dir, old)[0] is not None:
                return "kept"
            outcome = "advanced"
            known = {entry[0] for entry in old["sealed"]}
            sealed = old["sealed"] + [end for end in _sealed_ends(gov_dir, segment)
                                      if end[0] not in known]
        system.pwrite(fd, encode(build(gov_dir, record, at, segment, identity, sealed), len(data)), 0)
        return outcome
    except OSError:
        return "failed"
    finally:
        system.close(fd)


def _sealed_ends(gov_dir: str, segment: int) -> list[list[Any]]:
    """``[number, seq, hash, size]`` of each sealed segment up to ``segment`` (read from the files:
    only when anchoring anew or catching up)."""
    if not segment:
        return []
    from governance.ledger.divergence import segment_end

    ends = [segment_end(gov_dir, number) for number in range(1, segment + 1)]
    return [end for end in ends if end is not None]
