"""The ledger's records after a position: what the exporter has not sent yet, oldest first.

A position is the last record sent: its ``seq`` and ``hash`` (what identifies it in the chain)
and, as a hint, the file, inode and offset just after its line. The hint spares a long ledger a
read from its start on every poll; it is trusted only while that inode is still one of the
chain's files, is at least that long, and the next record there continues the chain
(``prev`` is the position's hash). Otherwise the files are searched by ``seq``, skipping every
sealed segment that ends at or before it. The live ledger renamed to a sealed segment keeps its
inode, so a rotation between two polls costs nothing.

Only complete lines are read: the last line of the live ledger while it is being written waits
for the next poll. A record whose ``seq`` is the position's but whose hash is not, or a ledger
that ends before the position, means the ledger was replaced: that is an error, never a silent
export of a different history.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from governance.errors import LedgerError, TelemetryError
from governance.ledger import files
from governance.ledger.chain import UPGRADE, unknown_format
from governance.ledger.reader import chain_files


@dataclass
class Position:
    """The last record sent (``seq`` 0: none yet) and where its line ends."""

    seq: int = 0
    hash: str = ""
    file: str = ""
    inode: int = 0
    offset: int = 0


@dataclass
class Entry:
    """One record not sent yet, and where its line ends."""

    record: dict[str, Any]
    position: Position


@dataclass
class Batch:
    """The next records to send; ``skipped``: records between the position and the first of
    them that are on no file of this machine (archived elsewhere, removed)."""

    entries: list[Entry]
    skipped: int = 0


def _replaced(gov_dir: str, position: Position, what: str) -> TelemetryError:
    return TelemetryError(
        f"{what}: the ledger is not the one the exporter last sent (seq {position.seq}, hash "
        f"{position.hash[:12]}…); it was replaced or rewritten", file=gov_dir,
        fix="run `governance ledger verify`; to send this ledger from its start, remove "
            "telemetry/otlp.cursor in that folder (records sent before would be sent again)")


def _last(path: str) -> tuple[int, str]:
    """(seq, hash) of a file's last complete record; (0, "") for none."""
    with open(path, "rb") as fh:
        record, _end = files.last_record(fh.fileno(), os.fstat(fh.fileno()).st_size)
    seq = (record or {}).get("seq")
    return (seq, str((record or {}).get("hash", ""))) if isinstance(seq, int) else (0, "")


def _hinted(paths: list[str], position: Position) -> tuple[int, int] | None:
    """(file index, offset) where the hint says reading resumes, if the hint still holds."""
    if not position.inode:
        return None
    for index, path in enumerate(paths):
        try:
            info = os.stat(path)
        except OSError:
            continue
        if info.st_ino == position.inode and info.st_size >= position.offset:
            return index, position.offset
    return None


def _searched(gov_dir: str, paths: list[str], position: Position) -> int:
    """The index of the first file that may hold a record after ``position``."""
    if position.seq == 0:
        return 0
    newest = 0
    for index, path in enumerate(paths):
        last, digest = _last(path)
        if last > position.seq:
            return index
        if last == position.seq and digest != position.hash:
            raise _replaced(gov_dir, position, f"seq {last} in {path} differs")
        newest = max(newest, last)
    if newest < position.seq:
        raise _replaced(gov_dir, position, f"the ledger ends at seq {newest}")
    return len(paths)


def _parse(raw: bytes, path: str) -> dict[str, Any] | None:
    try:
        record = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(record, dict) or not isinstance(record.get("seq"), int):
        return None
    newer = unknown_format(record)
    if newer is not None:
        raise LedgerError(newer, file=path, fix=UPGRADE)
    return record


def _read(gov_dir: str, paths: list[str], start: tuple[int, int], position: Position,
          limit: int, hinted: bool) -> Batch | None:
    """Up to ``limit`` records after ``position``, reading from ``start``; None when a hint
    turns out not to hold."""
    batch = Batch(entries=[])
    index, offset = start
    last = position.seq
    for path in paths[index:]:
        try:
            fh = open(path, "rb")  # noqa: SIM115 (closed by the with below)
        except FileNotFoundError:
            return batch   # renamed since it was listed (a rotation): the next read lists again
        with fh:
            inode = os.fstat(fh.fileno()).st_ino
            fh.seek(offset)
            for raw in fh:
                if not raw.endswith(b"\n"):
                    if path == paths[-1]:
                        return batch   # being written: the next poll reads it
                    continue
                end = fh.tell()
                record = _parse(raw, path)
                if record is None:
                    continue
                seq = record["seq"]
                if seq <= last:
                    if batch.entries:
                        continue   # not after the record before it: `ledger verify` judges it
                    if hinted:
                        return None
                    if seq == position.seq and record.get("hash") != position.hash:
                        raise _replaced(gov_dir, position, f"seq {seq} in {path} differs")
                    continue
                if not batch.entries:
                    continues = seq == position.seq + 1 and (
                        position.seq == 0 or record.get("prev") == position.hash)
                    if hinted and not continues:
                        return None
                    if seq == position.seq + 1 and not continues:
                        raise _replaced(gov_dir, position, f"seq {seq} in {path} does not "
                                                           "follow it")
                    batch.skipped = seq - position.seq - 1
                elif seq != last + 1:
                    return batch   # a gap: the next read starts before it, listing files again
                last = seq
                batch.entries.append(Entry(record, Position(seq, str(record.get("hash", "")),
                                                            os.path.basename(path), inode, end)))
                if len(batch.entries) >= limit:
                    return batch
        offset = 0
    return batch


def _unsent(gov_dir: str, position: Position, limit: int) -> Batch:
    paths = chain_files(gov_dir)
    hint = _hinted(paths, position)
    if hint is not None:
        found = _read(gov_dir, paths, hint, position, limit, hinted=True)
        if found is not None:
            return found
    found = _read(gov_dir, paths, (_searched(gov_dir, paths, position), 0), position, limit,
                  hinted=False)
    assert found is not None   # only a read from a hint gives up
    return found


def unsent(gov_dir: str, position: Position, limit: int, attempts: int = 3) -> Batch:
    """Up to ``limit`` records after ``position``, oldest first. Raises TelemetryError when the
    ledger is not the one ``position`` was taken from.

    A gap after ``position`` may be a rotation between listing the files and reading them (the
    live ledger renamed to a segment not listed yet): the files are listed again, and only a gap
    that stays is reported as ``skipped``."""
    found = _unsent(gov_dir, position, limit)
    for _attempt in range(1, attempts):
        if not found.skipped:
            break
        found = _unsent(gov_dir, position, limit)
    return found
