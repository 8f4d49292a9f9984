"""How the ledger differs from its anchor: ``deleted``, ``truncated``, ``rotated`` (a segment
that no rotation made, or one that changed or went) or ``re-chained`` (the anchored record's hash
is not the one the anchor recorded: the records up to it were rewritten and hashed again).

The comparison reads only the few records the anchor names (its own, and the end of each sealed
segment) and the ledger's last record: O(1) in the ledger's size, so ``doctor`` and ``status`` run
it every time. It judges the ledger's *extent* against the anchor; ``governance ledger verify``
judges the chain itself first. Imported by the append only when the anchor is behind.
"""

from __future__ import annotations

from governance import jsoncodec, system
from governance.ledger.files import LEDGER, last_record, segment_name, segments

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Finding:
    """What is wrong, in one word (``kind``) and one sentence (``detail``)."""

    __slots__ = ("detail", "kind")

    def __init__(self, kind: str, detail: str) -> None:
        self.kind = kind
        self.detail = detail

    def render(self) -> str:
        return f"{self.kind}: {self.detail}"


def _read_at(path: str, start: int, end: int) -> tuple[dict[str, Any] | None, list[int] | None]:
    """The record stored exactly in bytes ``start..end`` of ``path`` (with its newline) and the
    file's identity; ``(None, None)`` when the file is gone."""
    try:
        fd = system.open(path, system.O_RDONLY | system.O_CLOEXEC)
    except OSError:
        return None, None
    try:
        info = system.fstat(fd)
        raw = system.pread(fd, max(0, end - start), start)
    finally:
        system.close(fd)
    identity = [info.st_dev, info.st_ino]
    if end <= start or len(raw) != end - start or not raw.endswith(b"\n"):
        return None, identity
    if start and _byte_before(path, start) != b"\n":
        return None, identity
    try:
        found = jsoncodec.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None, identity
    return (found if isinstance(found, dict) else None), identity


def _byte_before(path: str, start: int) -> bytes:
    with open(path, "rb") as handle:
        handle.seek(start - 1)
        return handle.read(1)


def last_line(path: str) -> tuple[dict[str, Any] | None, int, int, int]:
    """The last complete record of ``path``, where its line starts and ends, and the file's size."""
    try:
        fd = system.open(path, system.O_RDONLY | system.O_CLOEXEC)
    except OSError:
        return None, 0, 0, -1
    try:
        size = system.fstat(fd).st_size
        found, end = last_record(fd, size)
        if found is None:
            return None, 0, 0, size
        start = max(0, end - 1 - 65536)
        before = system.pread(fd, end - 1 - start, start)
        cut = before.rfind(b"\n")
        line_start = start + cut + 1 if cut >= 0 else start
        if cut < 0 and start > 0:   # a line longer than the window: find its start the slow way
            line_start = _line_start(fd, end - 1)
        return found, line_start, end, size
    finally:
        system.close(fd)


def _line_start(fd: int, before: int) -> int:
    while before > 0:
        start = max(0, before - 65536)
        chunk = system.pread(fd, before - start, start)
        cut = chunk.rfind(b"\n")
        if cut >= 0:
            return start + cut + 1
        before = start
    return 0


def segment_end(gov_dir: str, number: int) -> list[Any] | None:
    """``[number, seq, hash, size]`` of a sealed segment's last record; None when it is gone."""
    found, _, _, size = last_line(system.join(gov_dir, segment_name(number)))
    if found is None:
        return None
    return [number, found.get("seq"), found.get("hash"), size]


def segment_numbers(gov_dir: str) -> list[int]:
    return [int(name[7:13]) for name in segments(gov_dir)]


def last_seq(gov_dir: str) -> int:
    """The seq of the ledger's last complete record (0 when it has none)."""
    for name in [LEDGER] + [segment_name(n) for n in reversed(segment_numbers(gov_dir))]:
        found = last_line(system.join(gov_dir, name))[0]
        if found is not None and isinstance(found.get("seq"), int):
            return int(found["seq"])
    return 0


def compare(gov_dir: str, anchor: dict[str, Any]) -> tuple[Finding | None, list[str]]:
    """The ledger in ``gov_dir`` against ``anchor``: a Finding where the ledger lost or rewrote
    what the anchor recorded (else None), and notes (a file replaced by an identical copy)."""
    notes: list[str] = []
    seq, digest, when = anchor["seq"], str(anchor["hash"]), anchor.get("ts") or "?"
    if seq == 0:
        return None, notes
    named = f"seq {seq} (hash {digest[:12]}..., {when})"
    numbers = segment_numbers(gov_dir)
    live = system.join(gov_dir, LEDGER)
    if not numbers and not system.exists(live):
        return Finding("deleted", f"the ledger is gone (no {LEDGER}, no segment), but its anchor "
                                  f"recorded {seq} record(s), the last {named}"), notes
    for number, end_seq, end_hash, size in anchor["sealed"]:
        name = segment_name(number)
        now = segment_end(gov_dir, number)
        if now is None:
            from governance.ledger.archive import recorded_end  # only for a segment not here

            if recorded_end(gov_dir, name) == [end_seq, end_hash, size]:
                continue        # archived by `governance ledger archive`, ending as it was sealed
            return Finding("rotated", f"{name}, sealed at seq {end_seq}, is gone (sealed segments "
                                      "are never removed by governance, only archived by "
                                      "`governance ledger archive`, which records them)"), notes
        if now[1:] != [end_seq, end_hash, size]:
            return Finding("rotated", f"{name} no longer ends at seq {end_seq} as it did when it "
                                      "was sealed (a sealed segment never changes)"), notes
    top = max(numbers, default=0)
    if top < anchor["segment"]:
        return Finding("rotated", f"the anchor knows {anchor['segment']} sealed segment(s); the "
                                  f"ledger has {top}"), notes
    where = LEDGER if top == anchor["segment"] else segment_name(anchor["segment"] + 1)
    start, end = anchor["at"]
    found, identity = _read_at(system.join(gov_dir, where), start, end)
    if found is not None and found.get("seq") == seq and found.get("hash") == digest:
        if identity is not None and anchor.get("file") and identity != anchor["file"]:
            notes.append(f"{where} is not the file the anchor saw (it was copied or restored); "
                         f"it still holds {named}")
        return None, notes
    ends = last_seq(gov_dir)
    if where != LEDGER:
        return Finding("rotated", f"{where} should be the ledger that was live at the anchor, "
                                  f"holding {named}, and it is not: no rotation made it (a "
                                  f"rotation renames the live file and never rewrites it); the "
                                  f"ledger now ends at seq {ends}"), notes
    if ends < seq:
        return Finding("truncated", f"the ledger ends at seq {ends}, but its anchor recorded "
                                    f"{named}: {seq - ends} record(s) were removed from the "
                                    "end"), notes
    return Finding("re-chained", f"{named} is no longer in the ledger as the anchor recorded it: "
                                 "the records up to it were rewritten and hashed again (or "
                                 "removed and the chain grown anew)"), notes
