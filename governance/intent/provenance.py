"""Reading the trace back: ``governance trace verify|show|intent``.

- ``verify``: every line is a complete record of the Agent Trace shape, and the chain holds
  (each record's ``prev`` is the previous one's ``hash``, and each ``hash`` is right).
- ``show FILE[:LINE]``: which intent, session and tool call wrote the lines, and whether they are
  still the lines it wrote (their hash against the file now).
- ``intent ID``: every file and range an intent touched.

Cold path.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

from governance import jsoncodec
from governance.intent import trace

UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
STAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


def _parsed(lines: Iterator[bytes]) -> Iterator[dict[str, Any]]:
    for line in lines:
        try:
            rec = jsoncodec.loads(line.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            continue
        if isinstance(rec, dict):
            yield rec


def records(project: str) -> Iterator[dict[str, Any]]:
    """The trace's records, oldest first, read line by line across its segments."""
    for name in trace.files(project):
        with open(name, "rb") as fh:
            yield from _parsed(iter(fh))


def newest(project: str) -> Iterator[dict[str, Any]]:
    """The trace's records, newest first, read from the end of each file."""
    from governance.ledger.reader import backward

    for name in reversed(trace.files(project)):
        yield from _parsed(backward(name))


def verify(project: str) -> tuple[int, list[str]]:
    """(records that verify, problems as ``line N: ...``, with the file's name for a sealed
    segment), read line by line across the segments."""
    problems: list[str] = []
    prev = trace.GENESIS
    good = 0
    names = trace.files(project)
    for name in names:
        where = "" if name.endswith("/" + trace.NAME) else os.path.basename(name) + " "
        with open(name, "rb") as fh:
            for number, line in enumerate(fh, 1):
                if not line.endswith(b"\n"):
                    problems.append(f"{where}line {number}: incomplete (no newline): a torn write")
                    break
                try:
                    rec = jsoncodec.loads(line.decode("utf-8"))
                except (ValueError, UnicodeDecodeError):
                    problems.append(f"{where}line {number}: not JSON")
                    continue
                said = _shape(rec)
                if said:
                    problems.append(f"{where}line {number}: {said}")
                    continue
                meta = rec["metadata"]["governance"]
                if meta.get("prev") != prev:
                    problems.append(f"{where}line {number}: does not chain to the record before "
                                    "it (a record removed or reordered)")
                if meta.get("hash") != trace.chained_hash(rec):
                    problems.append(f"{where}line {number}: its hash does not match its content "
                                    "(edited)")
                else:
                    good += 1
                prev = str(meta.get("hash"))
    return good, problems


def _shape(rec: Any) -> str:
    if not isinstance(rec, dict):
        return "not a record"
    if not isinstance(rec.get("version"), str) or not re.match(r"^\d+\.\d+$", rec["version"]):
        return "version is not N.N"
    if not isinstance(rec.get("id"), str) or not UUID.match(rec["id"]):
        return "id is not a UUID"
    if not isinstance(rec.get("timestamp"), str) or not STAMP.match(rec["timestamp"]):
        return "timestamp is not RFC 3339 UTC"
    files = rec.get("files")
    if not isinstance(files, list) or not files:
        return "files is not a list of files"
    for entry in files:
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
            return "a file has no path"
        for conversation in entry.get("conversations") or []:
            for r in conversation.get("ranges") or []:
                if not (isinstance(r.get("start_line"), int) and isinstance(r.get("end_line"), int)
                        and 1 <= r["start_line"] <= r["end_line"]):
                    return "a range has no valid start_line/end_line"
    meta = rec.get("metadata", {}).get("governance") if isinstance(rec.get("metadata"), dict) \
        else None
    if not isinstance(meta, dict):
        return "metadata.governance is missing"
    return ""


def _relative(project: str, name: str) -> str:
    path = os.path.realpath(os.path.join(project, name))
    root = os.path.realpath(project).rstrip("/") + "/"
    return path[len(root):] if path.startswith(root) else path


def show(project: str, name: str, line: int | None = None) -> list[dict[str, Any]]:
    """Every traced range of the file (containing ``line`` when given), newest first, each with
    ``unchanged``: whether those lines hash the same now."""
    wanted = _relative(project, name)
    try:
        with open(os.path.join(project, wanted), encoding="utf-8", errors="replace") as fh:
            lines = fh.read().split("\n")
    except OSError:
        lines = None
    found = []
    for rec in newest(project):
        meta = rec["metadata"]["governance"]
        for entry in rec["files"]:
            if entry["path"] != wanted:
                continue
            for conversation in entry.get("conversations") or []:
                for r in conversation.get("ranges") or []:
                    if line is not None and not r["start_line"] <= line <= r["end_line"]:
                        continue
                    now = None if lines is None else trace.line_hash(
                        lines[r["start_line"] - 1:r["end_line"]])
                    found.append({"path": wanted, "start_line": r["start_line"],
                                  "end_line": r["end_line"], "intent": meta.get("intent_id"),
                                  "session": meta.get("session_id"), "tool": meta.get("tool"),
                                  "tool_use_id": meta.get("tool_use_id"),
                                  "ledger_record": meta.get("ledger_record"),
                                  "timestamp": rec["timestamp"],
                                  "unchanged": now == r.get("content_hash")})
    return found


def by_intent(project: str, intent_id: str) -> list[dict[str, Any]]:
    """Every file and range an intent touched, oldest first."""
    found = []
    for rec in records(project):
        meta = rec["metadata"]["governance"]
        if meta.get("intent_id") != intent_id:
            continue
        for entry in rec["files"]:
            for conversation in entry.get("conversations") or []:
                for r in conversation.get("ranges") or []:
                    found.append({"path": entry["path"], "start_line": r["start_line"],
                                  "end_line": r["end_line"], "session": meta.get("session_id"),
                                  "tool": meta.get("tool"), "timestamp": rec["timestamp"]})
    return found
