"""Sealed segments already verified: ``ledger.verified`` beside the ledger.

A sealed segment (``ledger.NNNNNN.jsonl``) is never written again. Once ``governance ledger verify``
has checked every line of one, it records the segment's file identity (size, modification and
change times, inode) and where its chain starts and ends; a later verify takes such a segment as
checked while its identity is unchanged and its chain still joins the one before it, and hashes
only what is new. Any write to the segment changes its change time, which no one can set back, so a
segment edited since is read again in full (an archived segment is keyed by its name and checked
where it lies now: ``governance ledger archive`` records its identity after the move). ``--full``
ignores the record. The file lies in governance's folder, which the agent may not change. Not on
the hot path.
"""

from __future__ import annotations

import json
import os
from typing import Any

NAME = "ledger.verified"
FORMAT = 1


def identity(path: str) -> list[int]:
    """What changes whenever the file's content may have: size, mtime, ctime (ns), inode."""
    info = os.stat(path)
    return [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino]


def read(gov_dir: str) -> dict[str, dict[str, Any]]:
    """The verified segments by file name (none when the record is missing or unreadable)."""
    try:
        with open(os.path.join(gov_dir, NAME), encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return {}
    segments = data.get("segments")
    return segments if isinstance(segments, dict) else {}


def holds(path: str, entry: dict[str, Any] | None, prev_hash: str, expected: int) -> bool:
    """Whether the segment at ``path`` was verified as it is now, and its chain joins the records
    before it (its first record links to ``prev_hash`` with seq ``expected``)."""
    if not isinstance(entry, dict):
        return False
    try:
        same = identity(path) == entry.get("identity")
    except OSError:
        return False
    return same and entry.get("first_prev") == prev_hash and entry.get("first_seq") == expected


def write(gov_dir: str, segments: dict[str, dict[str, Any]]) -> None:
    """Record ``segments`` (name -> identity and chain ends), replacing the file at once; a
    folder that cannot be written keeps no record (verify then checks everything each time)."""
    path = os.path.join(gov_dir, NAME)
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump({"format": FORMAT, "segments": segments}, handle, sort_keys=True)
        os.chmod(temporary, 0o600)
        os.replace(temporary, path)
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass
