"""The trace: every successful file change, as an Agent Trace record, in
``<project>/.orchestration/agent_trace.jsonl``.

One record per change, in the open Agent Trace format (https://agent-trace.dev, schema
``trace-record.json``): ``version``, ``id`` (UUID), ``timestamp`` (RFC 3339), ``vcs`` (git and
the HEAD revision), ``tool``, ``files[]`` with ``path`` and ``conversations[]`` (``contributor``
and ``ranges[]`` of ``start_line``, ``end_line``, ``content_hash``). Our fields are under
``metadata.governance``: the intent id, the session, the tool call, the ledger record that allowed
it, and the chain (``prev``, ``hash``: sha256 of the record's canonical JSON without ``hash``).

Ranges: Write's whole file; Edit's (and MultiEdit's) new text located in the file after the
change; NotebookEdit's cell. ``content_hash`` is ``sha256:`` of the range's lines, so a later
reader can tell whether they are still the ones the agent wrote.

Appending is one ``write()`` per record under a ``flock``; a torn last line (a crash mid-write) is
set aside to ``agent_trace.torn`` before the next record, so nothing complete is ever lost. Past
``SEGMENT_BYTES`` the trace is renamed to the next sealed segment (``agent_trace.000001.jsonl``,
...) and the chain goes on in a new file, as the ledger rotates; readers go through the segments,
oldest first (``files``).
Hot path (PostToolUse): ``os``, ``time``, ``fcntl`` and our modules.
"""

from __future__ import annotations

import fcntl
import time

from governance import jsoncodec, system
from governance.ledger.chain import (
    canonical,
    digest,
    sha256,  # the cheap hash the ledger uses
)
from governance.project import INTENTS_FOLDER

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "agent_trace.jsonl"
TORN = "agent_trace.torn"
VERSION = "0.1"
GENESIS = "0" * 64
TAIL = 1 << 16
WRITE_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")
SEGMENT_BYTES = 50 * 1024 * 1024


def path(project: str) -> str:
    return system.join(project, INTENTS_FOLDER, NAME)


def segment_name(number: int) -> str:
    return f"agent_trace.{number:06d}.jsonl"


def files(project: str) -> list[str]:
    """The trace's files in chain order: its sealed segments, then the live file."""
    folder = system.dirname(path(project))
    try:
        names = system.listdir(folder)
    except OSError:
        return []
    sealed = sorted(n for n in names if n.startswith("agent_trace.") and n.endswith(".jsonl")
                    and n[12:-6].isdigit() and len(n) == len(segment_name(0)))
    live = [NAME] if NAME in names else []
    return [system.join(folder, n) for n in [*sealed, *live]]


def _rotate(project: str) -> None:
    """Rename the live trace to the next sealed segment (under the trace's lock)."""
    folder = system.dirname(path(project))
    sealed = [p for p in files(project) if not p.endswith("/" + NAME)]
    number = int(system.basename(sealed[-1])[12:-6]) + 1 if sealed else 1
    system.rename(path(project), system.join(folder, segment_name(number)))


def line_hash(lines: list[str]) -> str:
    return "sha256:" + sha256("\n".join(lines).encode()).hexdigest()


def _lines_of(text: str) -> list[str]:
    return text.split("\n")


def ranges(tool: str, tool_input: dict[str, Any], text: str | None
           ) -> list[dict[str, Any]] | None:
    """The changed line ranges (1-indexed) with their hashes, from the tool input and the file as
    it is after the change (``text``); None when the change cannot be located."""
    if text is None:
        return None
    lines = _lines_of(text)
    if tool == "Write":
        content = tool_input.get("content")
        body = content if isinstance(content, str) else text
        count = len(_lines_of(body.rstrip("\n"))) if body else 0
        return [_range(lines, 1, count)] if count else []
    if tool in ("Edit", "MultiEdit"):
        edits = tool_input.get("edits") if tool == "MultiEdit" else [tool_input]
        found: list[dict[str, Any]] = []
        for edit in edits if isinstance(edits, list) else []:
            new = edit.get("new_string") if isinstance(edit, dict) else None
            if not isinstance(new, str):
                continue
            if not new:
                continue     # a deletion: no lines to attribute
            starts = _occurrences(text, new, bool(edit.get("replace_all")))
            if not starts:
                return None  # changed again since: the ranges cannot be located
            for offset in starts:
                first = text.count("\n", 0, offset) + 1
                last = first + new.rstrip("\n").count("\n")
                found.append(_range(lines, first, last))
        return found
    return None


def _occurrences(text: str, new: str, every: bool) -> list[int]:
    found = []
    start = text.find(new)
    while start >= 0:
        found.append(start)
        if not every:
            break
        start = text.find(new, start + max(1, len(new)))
    return found


def _range(lines: list[str], first: int, last: int) -> dict[str, Any]:
    return {"start_line": first, "end_line": last, "content_hash": line_hash(lines[first - 1:last])}


def notebook_ranges(tool_input: dict[str, Any]) -> list[dict[str, Any]]:
    """A notebook cell: its new source as lines 1..n of the cell (the cell id is kept aside)."""
    source = tool_input.get("new_source")
    if not isinstance(source, str) or not source:
        return []
    lines = _lines_of(source.rstrip("\n"))
    return [_range(lines, 1, len(lines))]


def allowed_by(gov_dir: str, tool_use_id: str) -> str:
    """The hash of the PreToolUse ledger record of this tool call (searched in the ledger's
    last 256 KB), or ""."""
    if not tool_use_id:
        return ""
    try:
        fd = system.open(system.join(gov_dir, "ledger.jsonl"), system.O_RDONLY)
    except OSError:
        return ""
    try:
        size = system.fstat(fd).st_size
        start = max(0, size - (1 << 18))
        data = system.pread(fd, size - start, start)
    finally:
        system.close(fd)
    needle = b'"tool_use_id":' + canonical(tool_use_id)
    for line in reversed(data.split(b"\n")):
        if needle in line and b'"event":"PreToolUse"' in line:
            try:
                return str(jsoncodec.loads(line.decode())["hash"])
            except (ValueError, KeyError, UnicodeDecodeError):
                return ""
    return ""


def revision(project: str) -> str | None:
    """The git HEAD commit, read from ``.git`` without running git."""
    git = system.join(project, ".git")
    try:
        with open(system.join(git, "HEAD"), encoding="utf-8") as fh:
            head = fh.read().strip()
        if not head.startswith("ref: "):
            return head or None
        ref = head[5:]
        try:
            with open(system.join(git, ref), encoding="utf-8") as fh:
                return fh.read().strip() or None
        except FileNotFoundError:
            with open(system.join(git, "packed-refs"), encoding="utf-8") as fh:
                for line in fh:
                    if line.endswith(" " + ref + "\n") or line.endswith(" " + ref):
                        return line.split(" ", 1)[0]
    except OSError:
        return None
    return None


def record(project: str, relative_path: str, found: list[dict[str, Any]], *, intent: str,
           session: str, tool: str, tool_use_id: str, ledger_hash: str,
           cell_id: str = "") -> dict[str, Any]:
    """A trace record for one changed file (not yet chained)."""
    rev = revision(project)
    governance: dict[str, Any] = {"intent_id": intent or None, "session_id": session,
                                  "tool": tool, "tool_use_id": tool_use_id,
                                  "ledger_record": ledger_hash or None}
    if cell_id:
        governance["cell_id"] = cell_id
    entry: dict[str, Any] = {
        "version": VERSION, "id": _uuid4(),
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "tool": {"name": "claude-code", "version": "unknown"},
        "files": [{"path": relative_path, "conversations": [{
            "contributor": {"type": "ai"}, "ranges": found}]}],
        "metadata": {"governance": governance}}
    if rev:
        entry["vcs"] = {"type": "git", "revision": rev}
    return entry


def _uuid4() -> str:
    raw = bytearray(system.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    h = raw.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def chained_hash(entry: dict[str, Any]) -> str:
    body = jsoncodec.loads(canonical(entry).decode())
    body["metadata"]["governance"].pop("hash", None)
    return digest(body)


def append(project: str, entry: dict[str, Any], max_bytes: int = SEGMENT_BYTES
           ) -> dict[str, Any]:
    """Chain and append one record (under the lock, torn tails set aside; past ``max_bytes`` in
    a new file after the trace is sealed as a segment); raises OSError."""
    target = path(project)
    system.makedirs(system.dirname(target), exist_ok=True)
    lock = system.open(target + ".lock", system.O_RDWR | system.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        fd = system.open(target, system.O_RDWR | system.O_APPEND | system.O_CREAT, 0o644)
        try:
            size = system.fstat(fd).st_size
            prev, good = _tail(fd, size)
            if good < size:
                _set_aside(project, system.pread(fd, size - good, good), good)
                system.ftruncate(fd, good)
                size = good
            entry["metadata"]["governance"]["prev"] = prev
            entry["metadata"]["governance"]["hash"] = chained_hash(entry)
            line = canonical(entry) + b"\n"
            if size and size + len(line) > max_bytes:
                system.close(fd)
                fd = -1
                _rotate(project)
                fd = system.open(target, system.O_RDWR | system.O_APPEND | system.O_CREAT, 0o644)
                size = 0
            written = system.write(fd, line)
            if written != len(line):
                system.ftruncate(fd, size)
                raise OSError(f"short write to {target}")
        finally:
            if fd >= 0:
                system.close(fd)
    finally:
        fcntl.flock(lock, fcntl.LOCK_UN)
        system.close(lock)
    return entry


def _tail(fd: int, size: int) -> tuple[str, int]:
    """The hash of the last complete record and where the complete records end."""
    if size == 0:
        return GENESIS, 0
    start = max(0, size - TAIL)
    data = system.pread(fd, size - start, start)
    end = data.rfind(b"\n")
    good = start + end + 1 if end >= 0 else start
    while end >= 0:
        begin = data.rfind(b"\n", 0, end) + 1
        try:
            rec = jsoncodec.loads(data[begin:end].decode())
            return str(rec["metadata"]["governance"]["hash"]), good
        except (ValueError, KeyError, TypeError, UnicodeDecodeError):
            if begin == 0:
                break
            end = begin - 1
    return GENESIS, good


def _set_aside(project: str, data: bytes, offset: int) -> None:
    entry = {"ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "offset": offset,
             "bytes": data.decode("utf-8", "replace")}
    fd = system.open(system.join(system.dirname(path(project)), TORN),
                 system.O_WRONLY | system.O_APPEND | system.O_CREAT, 0o600)
    try:
        system.write(fd, canonical(entry) + b"\n")
    finally:
        system.close(fd)
