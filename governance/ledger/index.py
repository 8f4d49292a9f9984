"""The id index of a sealed segment: ``ledger.000001.idx`` beside ``ledger.000001.jsonl``, so that
``governance explain ID`` reads only the lines of the call and not the whole segment.

A sealed segment is never written again, so its index is built once, lazily, by the first reader
that needs it (never by the hook's append). Format: a 48-byte header (``MAGIC``, then the
segment's identity as it was indexed: size, modification and change times in ns, inode; then the
number of entries), then one 16-byte entry per ``"tool_use_id":"..."`` in the segment, sorted:
the first 8 bytes of the sha256 of the id's JSON text, and the offset of the line that holds it
(little-endian). A lookup is a binary search with a few ``pread`` calls.

Never a wrong answer: an index whose identity is not the segment's (a write to the segment
changes its change time, which no one can set back) is built again; an entry that does not point
at the start of a line holding a ``tool_use_id`` makes the reader scan the segment instead. A hash
collision only costs a line read (the caller checks the id itself). Not on the hot path.
"""

from __future__ import annotations

import os
import struct
import sys
from array import array
from collections.abc import Iterator
from hashlib import sha256

from governance.project import replace_file

MAGIC = b"GLIDX\x00\x00\x01"
_HEADER = struct.Struct("<8sQQQQQ")
_ENTRY = 16
FIELD = b'"tool_use_id":'
_FIELD_QUOTE = FIELD + b'"'
_BLOCK = 1 << 20
_OFFSET_BITS = 40        # segments up to 1 TiB


def path_for(segment: str) -> str:
    """``ledger.000001.jsonl`` -> ``ledger.000001.idx``, in the segment's folder."""
    return segment[: -len(".jsonl")] + ".idx" if segment.endswith(".jsonl") else segment + ".idx"


def identity(path: str) -> tuple[int, int, int, int]:
    """What changes whenever the file's content may have: size, mtime, ctime (ns), inode."""
    info = os.stat(path)
    return info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino


def key(value: bytes) -> int:
    """The index key of an id, from its JSON text (with its quotes, as the ledger holds it)."""
    return int.from_bytes(sha256(value).digest()[:8], "little")


def _value_end(data: bytes, start: int) -> int:
    """The offset just past the JSON string that starts at ``data[start]`` (a quote); -1 when
    it does not end within ``data``."""
    at = start + 1
    while True:
        at = data.find(b'"', at)
        if at < 0:
            return -1
        slashes = 0
        while data[at - 1 - slashes] == 0x5C:   # backslash
            slashes += 1
        if slashes % 2 == 0:
            return at + 1
        at += 1


def _found(data: bytes, base: int) -> Iterator[int]:
    """``key << 40 | line offset`` for each id in ``data`` (whole lines from file offset ``base``)."""
    at = data.find(_FIELD_QUOTE)
    while at >= 0:
        start = at + len(FIELD)
        end = _value_end(data, start)
        if end < 0:
            return
        line = data.rfind(b"\n", 0, at) + 1
        yield key(data[start:end]) << _OFFSET_BITS | (base + line)
        at = data.find(_FIELD_QUOTE, end)


def entries(segment: str) -> list[int]:
    """Every id of the segment as ``key << 40 | offset``, sorted (memory: the segment's ids, never
    the ledger's; the file is read in 1 MiB blocks)."""
    found: list[int] = []
    with open(segment, "rb") as fh:
        base, carry = 0, b""
        while True:
            block = fh.read(_BLOCK)
            data = carry + block
            cut = data.rfind(b"\n") + 1 if block else len(data)
            found.extend(_found(data[:cut], base))
            base, carry = base + cut, data[cut:]
            if not block:
                break
    found.sort()
    return found


def build(segment: str) -> bool:
    """Write the index of ``segment`` (temp file + rename, mode 0600); False when the folder
    cannot be written (readers then scan the segment)."""
    before = identity(segment)
    found = entries(segment)
    if identity(segment) != before:     # written to while read: no index for such a file
        return False
    table = array("Q")
    mask = (1 << _OFFSET_BITS) - 1
    for item in found:
        table.append(item >> _OFFSET_BITS)
        table.append(item & mask)
    if sys.byteorder != "little":       # pragma: no cover
        table.byteswap()
    try:
        replace_file(path_for(segment), _HEADER.pack(MAGIC, *before, len(found)) + table.tobytes())
    except OSError:
        return False
    return True


def rekey(segment: str, was: tuple[int, int, int, int]) -> None:
    """After ``segment`` was moved (which changes its change time, not its bytes): give its index
    the new identity, if the index was the one of the file as it was (``was``)."""
    target = path_for(segment)
    try:
        with open(target, "r+b") as fh:
            head = _HEADER.unpack(fh.read(_HEADER.size))
            if head[0] != MAGIC or tuple(head[1:5]) != was:
                return
            fh.seek(0)
            fh.write(_HEADER.pack(MAGIC, *identity(segment), head[5]))
    except (OSError, struct.error):
        return


def current(segment: str) -> bool:
    """Whether ``segment`` has an index that is its own."""
    return offsets(segment, b'""') is not None


def offsets(segment: str, value: bytes) -> list[int] | None:
    """The offsets of the lines that may hold the id whose JSON text is ``value``, in file order;
    None when the segment has no index that is its own (missing, unreadable, stale)."""
    try:
        fd = os.open(path_for(segment), os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        head = os.pread(fd, _HEADER.size, 0)
        if len(head) != _HEADER.size:
            return None
        magic, *held, count = _HEADER.unpack(head)
        try:
            now = identity(segment)
        except OSError:
            return None
        if magic != MAGIC or tuple(held) != now or \
                os.fstat(fd).st_size != _HEADER.size + count * _ENTRY:
            return None
        wanted = key(value)
        low, high = 0, count
        while low < high:                   # the first entry whose key is not below ``wanted``
            middle = (low + high) // 2
            if _key_at(fd, middle) < wanted:
                low = middle + 1
            else:
                high = middle
        found: list[int] = []
        while low < count:
            data = os.pread(fd, _ENTRY * 16, _HEADER.size + low * _ENTRY)
            for at in range(0, len(data) - _ENTRY + 1, _ENTRY):
                entry_key, offset = struct.unpack_from("<QQ", data, at)
                if entry_key != wanted:
                    return found
                found.append(offset)
            low += len(data) // _ENTRY
            if not data:
                break
        return found
    finally:
        os.close(fd)


def _key_at(fd: int, number: int) -> int:
    data = os.pread(fd, 8, _HEADER.size + number * _ENTRY)
    return int.from_bytes(data, "little")


def line_at(fd: int, offset: int) -> bytes | None:
    """The whole line that starts at ``offset`` (with its newline); None when ``offset`` is not the
    start of a complete line."""
    start = max(0, offset - 1)
    data = os.pread(fd, 8192, start)
    if offset and data[:1] != b"\n":
        return None
    data = data[offset - start:]
    read = start + 8192
    while b"\n" not in data:
        more = os.pread(fd, 1 << 16, read)
        if not more:
            return None
        data += more
        read += len(more)
    return data[: data.index(b"\n") + 1]


def scan(path: str, needle: bytes) -> list[bytes]:
    """The lines of ``path`` that hold ``needle``, in file order, found by searching 1 MiB blocks
    (the bytes are searched, not each line: a 50 MiB file takes milliseconds)."""
    found: list[bytes] = []
    with open(path, "rb") as fh:
        carry = b""
        while True:
            block = fh.read(_BLOCK)
            data = carry + block
            cut = data.rfind(b"\n") + 1 if block else len(data)
            at = data.find(needle, 0, cut)
            while at >= 0:
                start = data.rfind(b"\n", 0, at) + 1
                end = data.find(b"\n", at)
                end = cut if end < 0 else end + 1
                found.append(data[start:end])
                at = data.find(needle, end, cut)
            carry = data[cut:]
            if not block:
                return found


def lines_with(segment: str, value: bytes) -> list[bytes]:
    """The lines of a sealed segment that hold ``"tool_use_id":VALUE``, in file order: read at the
    offsets its index gives (the index is built first when missing or stale), or, where the index
    does not fit the file, found by a scan."""
    needle = FIELD + value
    found = offsets(segment, value)
    if found is None and build(segment):
        found = offsets(segment, value)
    if found is not None:
        lines = _lines_at(segment, found, needle)
        if lines is not None:
            return lines
    return scan(segment, needle)


def _lines_at(segment: str, found: list[int], needle: bytes) -> list[bytes] | None:
    """The lines at ``found`` that hold ``needle``; None when an offset is not the start of a line
    with an id (the index does not describe this file)."""
    lines: list[bytes] = []
    fd = os.open(segment, os.O_RDONLY | os.O_CLOEXEC)
    try:
        for offset in found:
            line = line_at(fd, offset)
            if line is None or FIELD not in line:
                return None
            if needle in line:
                lines.append(line)
    finally:
        os.close(fd)
    return lines
