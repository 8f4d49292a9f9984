"""The knowledge index: one file, built when the sources change, read by the hook with a few
``pread`` calls. This module reads it (hot path: ``os`` and ``marshal`` only); the builder is
``governance.knowledge.indexer``.

Layout of ``.claude/governance/.cache/knowledge.index``::

    b"GKI1" | u32 header length | header (marshal) | bucket table | buckets | SOP table | SOP records
    | memory table | memory records

- The header holds the signature of the sources (configs, SOP folders and files, memory stores),
  the compiled settings and detectors, the SOP match globs, and where each part starts.
- Keys are strings: ``k:<kind>:<name>`` (an SOP's ``match:`` names), ``any:<stem>`` (an SOP without
  ``match:``, by the parts of its file name), ``t:<tool>``, ``c:<word>`` (commands), ``h:<host>``,
  ``m:<term>`` (a memory's words). A key's bucket is its FNV-1a hash modulo the bucket count; the
  table gives each bucket's start (u32, little-endian), and a bucket is a marshalled dict
  key -> posting list. Only the buckets of the call's keys are read.
- Memories are numbered by confidence, highest first, so a posting list is already in the order
  they are shown, and "confidence >= threshold" is "number < the threshold's limit" (the header
  holds a limit per risk class). A term in more than 5% of the memories (and more than 500) is
  too common to find anything by and is left out; a posting list keeps its first 2,000 entries.
- A record (SOP or memory) is found by its number through a table of u32 offsets.
"""

from __future__ import annotations

import marshal
import os

from governance.project import cache_file, knowledge_sources

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAGIC = b"GKI1"
FORMAT = 1
NAME = "knowledge.index"
FIRST_READ = 65536
_SEPARATORS = {c: " " for c in range(128) if not chr(c).isalnum() and chr(c) not in "-_."}
STOP = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "do", "does", "for", "from",
    "has", "have", "if", "in", "into", "is", "it", "its", "may", "must", "no", "not", "of", "on",
    "or", "so", "than", "that", "the", "their", "then", "there", "these", "this", "to", "was",
    "we", "were", "when", "where", "which", "while", "will", "with", "you", "your"))


_SUFFIXES = ("ing", "ed", "es", "s", "e")
SETTINGS_NAME = "knowledge.yaml"
SOP_SUFFIX = ".ai.sop"


def path(project_dir: str) -> str:
    return cache_file(project_dir, NAME)


def settings_paths(project_dir: str) -> list[str]:
    """The packaged knowledge configuration and the project's (which may be missing)."""
    return knowledge_sources(project_dir)[:2]


def sop_dirs(project_dir: str) -> list[str]:
    """The project's SOP folder first (it wins on a name clash), then the user's."""
    return knowledge_sources(project_dir)[2:4]


def store_paths(project_dir: str) -> list[str]:
    """The memory stores: ``knowledge.db`` and ``decisions.db`` (reviewed patterns), with their
    write-ahead logs."""
    return knowledge_sources(project_dir)[4:]


def stem(word: str) -> str:
    """A plain suffix stemmer, the same for memories and calls: ``deploying``, ``deployed``,
    ``deploys`` -> ``deploy``; ``truncated``, ``truncate`` -> ``truncat``. Words with digits or
    dots (hosts, versions) stay as they are."""
    if "." in word or not word.isalpha():
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[:-len(suffix)]
    return word


def terms(text: str) -> set[str]:
    """The words of ``text`` that memories are found by, stemmed: lower-case runs of letters,
    digits and ``-_.`` (edges trimmed), each with its parts when it is joined (``shop-api`` ->
    ``shop``, ``api``); stop words and one-letter words left out."""
    found: set[str] = set()
    for word in text.lower().translate(_SEPARATORS).split():
        word = word.strip("-_.")
        if len(word) < 2 or word in STOP:
            continue
        found.add(stem(word))
        if "-" in word or "_" in word or "." in word:
            for part in word.replace("_", "-").replace(".", "-").split("-"):
                if len(part) >= 2 and part not in STOP and not (part.isdigit() and len(part) < 3):
                    found.add(stem(part))
    return found


def bucket_of(key: str, buckets: int) -> int:
    """FNV-1a (32 bit) of the key's UTF-8 bytes, modulo the bucket count."""
    value = 0x811C9DC5
    for byte in key.encode():
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value % buckets


class Index:
    """An open index: the header, and reads of buckets and records on demand."""

    def __init__(self, data: bytes | None, fd: int | None, header: dict[str, Any]) -> None:
        self._data = data
        self._fd = fd
        self.header = header

    @classmethod
    def open(cls, path: str) -> Index | None:
        """The index at ``path``, or None when it is missing or not in this format."""
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            return None
        try:
            head = os.pread(fd, FIRST_READ, 0)
            header = _header(head, lambda n: os.pread(fd, n, 0))
        except (OSError, EOFError, ValueError, TypeError):
            header = None
        if header is None:
            os.close(fd)
            return None
        return cls(None, fd, header)

    @classmethod
    def of_bytes(cls, data: bytes) -> Index:
        header = _header(data, lambda n: data[:n])
        if header is None:
            raise ValueError("not a knowledge index")
        return cls(data, None, header)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def _read(self, offset: int, size: int) -> bytes:
        if self._data is not None:
            return self._data[offset:offset + size]
        assert self._fd is not None
        return os.pread(self._fd, size, offset)

    def _span(self, table: int, number: int) -> tuple[int, int]:
        raw = self._read(table + 4 * number, 8)
        return int.from_bytes(raw[:4], "little"), int.from_bytes(raw[4:], "little")

    def postings(self, keys: set[str]) -> dict[str, list[int]]:
        """The posting lists of those keys that are in the index."""
        header = self.header
        count = header["buckets"]
        if not count:
            return {}
        by_bucket: dict[int, list[str]] = {}
        for key in keys:
            by_bucket.setdefault(bucket_of(key, count), []).append(key)
        found: dict[str, list[int]] = {}
        for number in sorted(by_bucket):
            start, end = self._span(header["bucket_table"], number)
            if end <= start:
                continue
            bucket = marshal.loads(self._read(start, end - start))
            for key in by_bucket[number]:
                if key in bucket:
                    found[key] = bucket[key]
        return found

    def sop(self, number: int) -> dict[str, Any]:
        start, end = self._span(self.header["sop_table"], number)
        record: dict[str, Any] = marshal.loads(self._read(start, end - start))
        return record

    def memory(self, number: int) -> dict[str, Any]:
        start, end = self._span(self.header["memory_table"], number)
        record: dict[str, Any] = marshal.loads(self._read(start, end - start))
        return record


def _header(head: bytes, read: Any) -> dict[str, Any] | None:
    if head[:4] != MAGIC or len(head) < 8:
        return None
    size = int.from_bytes(head[4:8], "little")
    if 8 + size > len(head):
        head = read(8 + size)
    header = marshal.loads(head[8:8 + size])
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        return None
    return header
