"""Reading the ledger back: its files in chain order, its records, and the queries behind
``governance log`` and ``governance explain`` (the counts of ``governance stats`` and the report
are ``governance.report``'s).

Not on the hot path (only the CLI imports it).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from typing import Any

from governance.errors import LedgerError
from governance.ledger import archive, index
from governance.ledger.chain import LEDGER, UPGRADE, segments, unknown_format


def ledger_files(gov_dir: str) -> list[str]:
    """Paths of every ledger file in chain order: sealed segments, then the live ledger."""
    names = segments(gov_dir)
    if os.path.exists(os.path.join(gov_dir, LEDGER)):
        names.append(LEDGER)
    return [os.path.join(gov_dir, name) for name in names]


def chain_files(gov_dir: str) -> list[str]:
    """Paths of every ledger file on this machine in chain order: the archived segments that are
    present (``governance ledger archive``), the sealed segments, the live ledger."""
    try:
        return archive.paths(gov_dir)
    except ValueError as exc:
        raise LedgerError(str(exc), file=os.path.join(gov_dir, archive.MANIFEST),
                          fix="run `governance ledger verify`, which names what is wrong; "
                              "restore the manifest from a backup") from None


def lines(gov_dir: str) -> Iterator[tuple[str, int, bytes]]:
    """``(file name, line number from 1, raw line with its newline)`` across all files."""
    for path in chain_files(gov_dir):
        name = os.path.basename(path)
        with open(path, "rb") as fh:
            for number, raw in enumerate(fh, 1):
                yield name, number, raw


_BLOCK = 1 << 16
_SETTLED = 1000   # records older than --since in a row after which no newer one is expected


def backward(path: str) -> Iterator[bytes]:
    """The lines of one file, newest first, each with its newline, reading blocks from the end:
    the memory held is a block and the line being read, whatever the file's size."""
    with open(path, "rb") as fh:
        end = fh.seek(0, os.SEEK_END)
        tail = b""
        while end > 0:
            start = max(0, end - _BLOCK)
            fh.seek(start)
            block = fh.read(end - start) + tail
            end = start
            stop = len(block)
            cut = block.rfind(b"\n", 0, stop - 1)
            while cut >= 0:
                yield block[cut + 1:stop]
                stop = cut + 1
                cut = block.rfind(b"\n", 0, stop - 1)
            tail = block[:stop]
        if tail:
            yield tail


def _parsed(raw: bytes, path: str, where: str = "") -> dict[str, Any] | None:
    """A line's record (None when it is no JSON object); raises LedgerError at a record in a
    later ledger format than this code reads."""
    try:
        rec = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(rec, dict):
        return None
    newer = unknown_format(rec)
    if newer is not None:
        raise LedgerError(f"{where}{newer}", file=path, fix=UPGRADE)
    return rec


def _newest(gov_dir: str, needle: bytes | None = None
            ) -> Iterator[tuple[str, dict[str, Any]]]:
    """(file, record) for every parseable record, newest first; with ``needle``, only records
    whose line holds those bytes (found before any line is parsed)."""
    for path in reversed(chain_files(gov_dir)):
        for raw in backward(path):
            if needle is not None and needle not in raw:
                continue
            rec = _parsed(raw, path)
            if rec is not None:
                yield path, rec


def newest(gov_dir: str, needle: bytes | None = None) -> Iterator[dict[str, Any]]:
    """Every parseable record, newest first, across the live ledger and its sealed segments;
    with ``needle``, only records whose line holds those bytes. Raises LedgerError at a record
    in a later ledger format than this code reads."""
    for _path, rec in _newest(gov_dir, needle):
        yield rec


def records(gov_dir: str) -> Iterator[dict[str, Any]]:
    """Every parseable record, oldest first (``governance ledger verify`` judges the rest).
    Raises LedgerError at a record in a later ledger format than this code reads."""
    for name, number, raw in lines(gov_dir):
        rec = _parsed(raw, os.path.join(gov_dir, name), f"line {number}: ")
        if rec is not None:
            yield rec


_RELATIVE = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhdw])$")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_time(text: str, now: float | None = None) -> str:
    """An ISO-8601 UTC prefix comparable with ``ts``, from ISO text or an age (``2h``, ``30m``)."""
    text = text.strip()
    match = _RELATIVE.match(text)
    if match:
        moment = (time.time() if now is None else now) - float(match[1]) * _UNIT[match[2]]
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(moment))
    if re.match(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}(:\d{2}(:\d{2}(\.\d+)?)?)?)?Z?$", text):
        return text.replace(" ", "T").rstrip("Z")
    raise ValueError(f"not a time: {text!r} (use ISO 8601 like 2026-05-01T12:00 or an age like "
                     "30m, 2h, 1d)")


class Filter:
    """The record filters of ``governance log``; every given field must match."""

    def __init__(self, session: str | None = None, state: str | None = None,
                 action: str | None = None, tool: str | None = None, since: str | None = None,
                 until: str | None = None, event: str | None = None) -> None:
        self.session = session
        self.state = state
        self.action = action
        self.tool = tool
        self.since = since
        self.until = until
        self.event = event

    def __call__(self, rec: dict[str, Any]) -> bool:
        ts = str(rec.get("ts", ""))
        if self.since and ts < self.since:
            return False
        if self.until and ts[:len(self.until)] > self.until:
            return False
        if self.session and not str(rec.get("session", "")).startswith(self.session):
            return False
        if self.state and rec.get("state") != self.state:
            return False
        if self.action and self.action not in (rec.get("action"), rec.get("outcome")):
            return False
        if self.tool and str(rec.get("tool", "")).lower() != self.tool.lower():
            return False
        return not (self.event and rec.get("event") != self.event)


def query(gov_dir: str, keep: Filter, limit: int | None = None) -> list[dict[str, Any]]:
    """The last ``limit`` records that pass ``keep``, oldest first. With a limit the ledger is
    read from its end and reading stops once ``limit`` records are found (or, with ``since``,
    at the first record older than it): the cost follows what is shown, not the ledger's size."""
    if not limit:
        return [rec for rec in records(gov_dir) if keep(rec)]
    found: list[dict[str, Any]] = []
    older = 0
    for rec in newest(gov_dir):
        if keep.since and rec.get("ts") and str(rec["ts"]) < keep.since:
            older += 1                    # records are appended in time order (near enough:
            if older >= _SETTLED:         # hooks take the time before the ledger's lock)
                break
            continue
        older = 0
        if keep(rec):
            found.append(rec)
            if len(found) >= limit:
                break
    found.reverse()
    return found


def explain(gov_dir: str, tool_use_id: str) -> dict[str, Any]:
    """Everything the ledger holds about one tool call: its decision and its result. Newest file
    first: the live ledger's bytes are searched for the id, each sealed segment is looked up in its
    id index (``governance.ledger.index``, built on first use); reading stops after the file that
    holds the call's decision (a call's records are written together)."""
    pre: list[dict[str, Any]] = []
    post: list[dict[str, Any]] = []
    value = json.dumps(tool_use_id, ensure_ascii=False).encode("utf-8")
    for path in reversed(chain_files(gov_dir)):
        if os.path.basename(path) == LEDGER:
            found = index.scan(path, index.FIELD + value)
        else:
            found = index.lines_with(path, value)
        for raw in reversed(found):
            rec = _parsed(raw, path)
            if rec is not None and rec.get("tool_use_id") == tool_use_id:
                (pre if rec.get("event") == "PreToolUse" else post).append(rec)
        if pre:
            break
    pre.reverse()
    post.reverse()
    return {"tool_use_id": tool_use_id, "decisions": pre, "results": post}


def percentile(values: list[float], pct: float) -> float:
    """Nearest-rank percentile (0 for no values)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, int(-(-pct * len(ordered) // 100)))
    return float(ordered[min(rank, len(ordered)) - 1])
