"""The ledger's files: the live ``ledger.jsonl``, the sealed segments ``ledger.000001.jsonl``, ...,
and the last complete record of one of them. Shared by the writer (``chain``) and the comparison
with the anchor (``divergence``). Hot path: ``os`` and our ``jsoncodec``.
"""

from __future__ import annotations

from governance import jsoncodec, system

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

LEDGER = "ledger.jsonl"
_TAIL_WINDOW = 1 << 20  # how far back recovery looks for the last complete record


def _loads(data: bytes) -> Any:
    return jsoncodec.loads(data.decode("utf-8"))


def segment_name(number: int) -> str:
    return f"ledger.{number:06d}.jsonl"


def segments(gov_dir: str) -> list[str]:
    """Names of the sealed segments, oldest first (the live ``ledger.jsonl`` not included)."""
    try:
        names = system.listdir(gov_dir)
    except OSError:
        return []
    found = [n for n in names if len(n) == 19 and n.startswith("ledger.") and n.endswith(".jsonl")
             and n[7:13].isdigit()]
    return sorted(found)


def last_record(fd: int, size: int) -> tuple[dict[str, Any] | None, int]:
    """The last complete, parseable record before ``size`` and the offset just after its line."""
    start = max(0, size - _TAIL_WINDOW)
    tail = system.pread(fd, size - start, start)
    end = tail.rfind(b"\n")
    while end >= 0:
        begin = tail.rfind(b"\n", 0, end) + 1
        try:
            rec = _loads(tail[begin:end])
        except ValueError:
            rec = None
        if isinstance(rec, dict) and isinstance(rec.get("hash"), str):
            return rec, start + end + 1
        if begin == 0:
            break
        end = begin - 1
    return None, start + (tail.rfind(b"\n") + 1)
