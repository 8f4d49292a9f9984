"""Verify the ledger: every line's hash and the chain across all segments, and the head.

The first bad line is reported with what is wrong with it: ``torn`` (a cut-off write), ``edited``
(content no longer matches its hash, or was re-hashed so the next record no longer links to it),
``deleted`` (records missing: a gap in ``seq``, or the file ends before its head), ``inserted`` (a
line the chain does not go through), ``reordered`` (records out of sequence) or ``format`` (a
record in a ledger format this version does not read: upgrade to verify it). A chain that holds is
then compared with its anchors outside the project (``governance.ledger.witness``). Archived
segments (``governance.ledger.archive``) are part of the chain: hashed where they are on this
machine, taken as the ends the manifest recorded where they are not. Not on the hot path.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from hashlib import sha256
from typing import Any

from governance.ledger import archive, checkpoint
from governance.ledger.archive import Part
from governance.ledger.chain import GENESIS, LEDGER, TORN, UPGRADE, read_head, unknown_format
from governance.ledger.reader import ledger_files
from governance.ledger.witness import AnchorSource, Check, check


@dataclass
class Problem:
    file: str
    line: int
    kind: str
    detail: str
    seq: int | None = None

    def render(self) -> str:
        return f"{self.file}:{self.line}: {self.kind}: {self.detail}"


@dataclass
class Report:
    ok: bool = True
    records: int = 0
    files: list[str] = field(default_factory=list)
    problem: Problem | None = None
    notes: list[str] = field(default_factory=list)
    head: dict[str, Any] | None = None
    last_hash: str = GENESIS
    anchors: list[Check] = field(default_factory=list)
    ends: dict[str, dict[str, Any]] = field(default_factory=dict)   # each file's chain ends
    paths: dict[str, str] = field(default_factory=dict)             # each file's path

    def as_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "records": self.records, "last_hash": self.last_hash,
                "files": self.files,
                "problem": None if self.problem is None else vars(self.problem),
                "notes": self.notes, "anchors": [found.as_json() for found in self.anchors]}


class _Stream:
    """Parsed ledger lines with one line of look-ahead."""

    def __init__(self, source: Iterator[tuple[str, int, bytes]]) -> None:
        self.source = source
        self.ahead: tuple[str, int, bytes] | None = None

    def __iter__(self) -> _Stream:
        return self

    def __next__(self) -> tuple[str, int, bytes]:
        if self.ahead is not None:
            item, self.ahead = self.ahead, None
            return item
        return next(self.source)

    def peek(self) -> dict[str, Any] | None:
        if self.ahead is None:
            self.ahead = next(self.source, None)
        return None if self.ahead is None else _parse(self.ahead[2])


def _parse(raw: bytes) -> dict[str, Any] | None:
    try:
        rec = json.loads(raw)
    except ValueError:
        return None
    if (isinstance(rec, dict) and isinstance(rec.get("hash"), str)
            and isinstance(rec.get("prev"), str) and isinstance(rec.get("seq"), int)):
        return rec
    return None


def _hash_ok(rec: dict[str, Any], raw: bytes) -> bool:
    """Whether the line's own bytes, less its ``hash`` field, hash to that field.

    Append writes ``canonical(record)`` and hashes ``canonical(record without hash)``, which is
    the same bytes less ``,"hash":"..."``; so any byte changed in the line (even re-spacing)
    shows, and no re-serialisation is needed."""
    claimed = rec["hash"]
    line = raw[:-1] if raw.endswith(b"\n") else raw
    field = b'"hash":"' + claimed.encode() + b'"'
    at = line.find(b"," + field)
    if at >= 0:
        body = line[:at] + line[at + len(field) + 1:]
    elif line.startswith(b"{" + field + b","):
        body = b"{" + line[len(field) + 2:]
    elif line == b"{" + field + b"}":
        body = b"{}"
    else:
        return False
    return bool(sha256(body).hexdigest() == claimed)


def _broken_link(stream: _Stream, rec: dict[str, Any], prev_hash: str, expected: int,
                 last: dict[str, Any] | None, where: tuple[str, int],
                 last_where: tuple[str, int]) -> Problem:
    """Name what happened when ``rec`` (hash intact) does not link to the record before it."""
    nxt = stream.peek()
    seq = rec["seq"]
    if last is not None and rec["hash"] == last["hash"]:
        return Problem(*where, "inserted", f"a copy of the line before it (seq {seq})", seq)
    if nxt is not None and nxt["prev"] == prev_hash:
        if rec["prev"] == nxt["hash"]:
            return Problem(*where, "reordered", f"seq {seq} comes before seq {nxt['seq']}; the "
                           "two records were swapped", seq)
        return Problem(*where, "inserted", f"the chain does not pass through this line (seq {seq});"
                       " the next line links to the record before it", seq)
    if last is not None and rec["prev"] == last["prev"] and seq == last["seq"]:
        return Problem(*last_where, "inserted", f"the chain does not pass through this line (seq "
                       f"{seq}); the next line links to the record before it", seq)
    if last is not None and seq == expected:
        return Problem(*last_where, "edited", f"re-hashed after a change: the next record (seq "
                       f"{seq}) was chained to a different version of it", last["seq"])
    if seq > expected:
        for name, number, raw in stream:
            other = _parse(raw)
            if other is not None and other["seq"] == expected and other["prev"] == prev_hash:
                return Problem(*where, "reordered", f"seq {expected} belongs here but is at "
                               f"{name}:{number}", seq)
        missing = seq - expected
        return Problem(*where, "deleted", f"{missing} record{'s' if missing > 1 else ''} missing "
                       f"before this line (seq jumps from {expected - 1} to {seq})", seq)
    return Problem(*where, "reordered", f"seq {seq} appears after seq {expected - 1}", seq)


class _Chain:
    """Where the chain stands while it is read: what the next record must link to, the last
    record read, and each file's first and last record (the ends ``ledger.verified`` keeps)."""

    def __init__(self) -> None:
        self.prev_hash, self.expected = GENESIS, 1
        self.last: dict[str, Any] | None = None
        self.last_where = ("", 0)
        self.records = 0
        self.ends: dict[str, dict[str, Any]] = {}
        self.skipped: list[str] = []
        self.paths: dict[str, str] = {}
        self.archived: list[str] = []      # archived segments present, read with the chain
        self.absent: list[str] = []        # archived segments not on this machine
        self.gap: Problem | None = None

    def take_whole(self, name: str, entry: dict[str, Any]) -> None:
        """Continue the chain past a segment known by its ends (checked before, or archived)."""
        self.prev_hash, self.expected = entry["last_hash"], entry["last_seq"] + 1
        self.last = {"hash": entry["last_hash"], "prev": entry["last_prev"],
                     "seq": entry["last_seq"]}
        self.last_where = (name, entry["lines"])
        self.records += entry["last_seq"] - entry["first_seq"] + 1
        self.ends[name] = entry
        self.skipped.append(name)


def _files(gov_dir: str, parts: list[Part], chain: _Chain, known: dict[str, dict[str, Any]]
           ) -> Iterator[tuple[str, int, bytes]]:
    """The ledger's lines, oldest first, less the sealed segments ``ledger.verified`` holds as
    checked and joining the chain read so far (taken whole), and less the archived segments that
    are not on this machine (taken as their recorded ends, where they join the chain)."""
    for part in parts:
        name = part.name
        if part.path is None and part.recorded is not None:
            ends = part.recorded
            if ends.get("first_prev") != chain.prev_hash or ends.get("first_seq") != chain.expected:
                chain.gap = Problem(name, 0, "deleted", f"archived and not on this machine; its "
                                    f"recorded chain starts at seq {ends.get('first_seq')}, which "
                                    f"does not continue the records before it (they end at seq "
                                    f"{chain.expected - 1})", ends.get("first_seq"))
                return
            chain.take_whole(name, ends)
            chain.absent.append(name)
            continue
        assert part.path is not None
        chain.paths[name] = part.path
        if part.recorded is not None:
            chain.archived.append(name)
        entry = known.get(name)
        if name != LEDGER and entry is not None and checkpoint.holds(
                part.path, entry, chain.prev_hash, chain.expected):
            chain.take_whole(name, entry)
            continue
        with open(part.path, "rb") as fh:
            for number, raw in enumerate(fh, 1):
                yield name, number, raw


def verify(gov_dir: str, sources: list[AnchorSource] | None = None, full: bool = False
           ) -> Report:
    """Check every record and the chain, stopping at the first bad line; then, where the chain
    holds, compare the ledger with its anchors outside the project (``sources``, default: the
    home checkpoint), which show a ledger re-chained, truncated, deleted or rotated by hand.
    Sealed segments checked before and unchanged since are taken as checked (``ledger.verified``)
    unless ``full``; the segments checked here are added to it."""
    state = _Chain()
    try:
        parts = archive.chain_parts(gov_dir)
    except ValueError as exc:
        report = Report(files=[os.path.basename(p) for p in ledger_files(gov_dir)])
        report.problem = Problem(archive.MANIFEST, 1, "edited", str(exc))
        report.ok = False
        return report
    report = Report(files=[part.name for part in parts])
    stream = _Stream(_files(gov_dir, parts, state, {} if full else checkpoint.read(gov_dir)))
    head = report.head = read_head(gov_dir)
    at_head: tuple[str, tuple[str, int]] | None = None  # the hash recorded at the head's seq
    prev_hash, expected = GENESIS, 1
    last: dict[str, Any] | None = None
    last_where = ("", 0)
    for name, number, raw in stream:
        if state.skipped and last_where[0] != state.last_where[0] and \
                state.last_where[0] in state.skipped:   # segments taken whole just before
            prev_hash, expected = state.prev_hash, state.expected
            last, last_where = state.last, state.last_where
            report.records = state.records
            if head is not None and last is not None and head["seq"] == last["seq"]:
                at_head = (last["hash"], last_where)
        where = (name, number)
        rec = _parse(raw)
        if rec is None:
            if not raw.endswith(b"\n"):
                kind, detail = "torn", ("the last line is incomplete (a write was cut off); the "
                                        "next append moves it to " + TORN)
            else:
                kind, detail = "torn", "not a complete JSON ledger record (cut off or edited)"
            report.problem = Problem(name, number, kind, detail)
            break
        newer = unknown_format(rec)
        if newer is not None:  # its hash may follow rules this code does not know: not judged
            report.problem = Problem(name, number, "format", f"{newer}; {UPGRADE}", rec["seq"])
            break
        if not _hash_ok(rec, raw):
            nxt = stream.peek()
            if nxt is not None and nxt["prev"] == prev_hash and rec["prev"] != prev_hash:
                report.problem = Problem(name, number, "inserted", "not part of the chain: the "
                                         "next line links to the record before it", rec["seq"])
            else:
                report.problem = Problem(name, number, "edited", f"the content of seq "
                                         f"{rec['seq']} no longer matches its hash", rec["seq"])
            break
        if rec["prev"] != prev_hash or rec["seq"] != expected:
            report.problem = _broken_link(stream, rec, prev_hash, expected, last, where,
                                          last_where)
            break
        report.records += 1
        report.last_hash = rec["hash"]
        if head is not None and rec["seq"] == head["seq"]:
            at_head = (rec["hash"], where)
        ends = state.ends.setdefault(name, {"first_seq": rec["seq"], "first_prev": rec["prev"]})
        ends.update(last_seq=rec["seq"], last_hash=rec["hash"], last_prev=rec["prev"],
                    lines=number)
        prev_hash, expected = rec["hash"], rec["seq"] + 1
        last, last_where = rec, where
        state.prev_hash, state.expected, state.last, state.last_where = \
            prev_hash, expected, last, last_where
        state.records = report.records
    if state.skipped and last_where != state.last_where:   # the ledger ends in skipped segments
        prev_hash, expected, last, last_where = (state.prev_hash, state.expected, state.last,
                                                 state.last_where)
        report.records = state.records
        if head is not None and last is not None and head["seq"] == last["seq"]:
            at_head = (last["hash"], last_where)
    if last is not None:
        report.last_hash = last["hash"]
    if report.problem is None and state.gap is not None:
        report.problem = state.gap
    if report.problem is None:
        _check_head(report, last, last_where, at_head)
    report.ends, report.paths = state.ends, state.paths
    if report.problem is None:
        _archive_notes(report, state)
    if report.problem is None:
        _remember(gov_dir, state)
    if report.problem is None:
        report.anchors = check(gov_dir, sources)
        for found in report.anchors:
            report.notes.extend(found.notes)
    _add_notes(gov_dir, report)
    report.ok = report.problem is None and not any(found.failed for found in report.anchors)
    return report


def _archive_notes(report: Report, state: _Chain) -> None:
    def span(names: list[str]) -> str:
        return names[0] if len(names) == 1 else f"{names[0]} to {names[-1]}"

    if state.archived:
        count = len(state.archived)
        report.notes.append(f"{count} archived segment{'s' if count != 1 else ''} verified with "
                            f"the chain ({span(state.archived)})")
    if state.absent:
        count = len(state.absent)
        report.notes.append(f"{count} segment{'s' if count != 1 else ''} archived, verified by "
                            f"their recorded ends ({span(state.absent)} not on this machine; "
                            f"{archive.MANIFEST} records where each starts and ends)")


def _remember(gov_dir: str, state: _Chain) -> None:
    """Record the sealed segments of a chain that holds as checked (``ledger.verified``)."""
    kept: dict[str, dict[str, Any]] = {}
    for name, ends in state.ends.items():
        if name == LEDGER or "last_hash" not in ends or name not in state.paths:
            continue
        try:
            kept[name] = {**ends, "identity": checkpoint.identity(state.paths[name])}
        except OSError:
            continue
    if kept and (set(kept) - set(state.skipped)):
        checkpoint.write(gov_dir, kept)


def _check_head(report: Report, last: dict[str, Any] | None, last_where: tuple[str, int],
                at_head: tuple[str, tuple[str, int]] | None) -> None:
    """Compare the end of the chain with the head sidecar (which knows the last append)."""
    head = report.head
    if head is None:
        if last is not None:
            report.notes.append("the head sidecar ledger.head is missing; the next append "
                                "rebuilds it")
        return
    last_seq = last["seq"] if last else 0
    if head["seq"] > last_seq:
        end = (last_where[0] or "ledger.jsonl", last_where[1] + 1)
        report.problem = Problem(*end, "deleted", f"the ledger ends at seq {last_seq} but its head "
                                 f"records seq {head['seq']}: records were removed from the end",
                                 last_seq + 1)
    elif head["seq"] == 0:
        return
    elif at_head is None or at_head[0] != head["hash"]:
        where = at_head[1] if at_head else last_where
        report.problem = Problem(*where, "edited", f"seq {head['seq']} does not match the hash "
                                 "the head recorded for it", head["seq"])
    elif head["seq"] < last_seq:
        behind = last_seq - head["seq"]
        report.notes.append(f"the head is {'one record' if behind == 1 else f'{behind} records'} "
                            f"behind (written before a crash or while the head could not be "
                            "updated); the next append adopts them")


def _add_notes(gov_dir: str, report: Report) -> None:
    torn = os.path.join(gov_dir, TORN)
    if os.path.exists(torn):
        with open(torn, "rb") as fh:
            count = sum(1 for _ in fh)
        report.notes.append(f"{count} torn fragment{'s' if count != 1 else ''} from interrupted "
                            f"appends set aside in {TORN} (no complete record is lost)")
    for path in ledger_files(gov_dir):
        mode = os.stat(path).st_mode & 0o777
        if mode & 0o077:
            report.notes.append(f"{os.path.basename(path)} has mode {mode:o}; expected 600")
