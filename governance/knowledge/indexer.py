"""Build the knowledge index (read by ``governance.knowledge.lookup``) from the sources: the
settings, the SOP files and the memories (the memory store and reviewed decisions).

Cold path: the hook calls :func:`rebuild` only when the sources' signature no longer matches the
index, and ``governance knowledge reindex`` builds it on demand. Memories added since the index
was built go into a delta beside it (``knowledge.increment``: ``governance memory`` after a change,
and a background process for a large store, while the hook keeps reading what it has), which a
rebuild folds in; a change of the settings or the SOPs is rebuilt at once. The file is replaced
atomically, under a lock, so concurrent hooks read either the old index or the new one.

Layout of ``.claude/governance/.cache/knowledge.index``::

    b"GKI1" | u32 header length | header (marshal) | globs by kind | key filter | bucket table
    | buckets | SOP table | SOP records | memory table | memory records | postings | extra

- The header holds the signature of the sources (configs, SOP folders and files, memory stores),
  the compiled settings and detectors, and where each part starts. The SOP match globs follow it,
  by kind (host, tool, path), each read only when the call has something of that kind.
- Keys are strings: ``k:<kind>:<name>`` (an SOP's ``match:`` names), ``any:<name>`` (an SOP without
  ``match:``, by its whole file name), ``t:<tool>``, ``c:<word>`` (a whole command word),
  ``h:<host>``, ``m:<term>`` (a memory's words). A key's bucket is its FNV-1a hash modulo the
  bucket count; the table gives each bucket's start (u32, little-endian), and a bucket is a marshalled dict
  key -> (offset, count) of its posting list, an array of native u32 in the postings region at the
  end of the file. Only the buckets of the call's keys are read, and only the postings of the keys
  that are there. Before that, a key filter (a bitmap of the keys' hashes, 16 bits per key, one
  byte read per key) rules most absent keys out without reading their bucket.
- Memories are numbered by confidence, highest first, so a posting list is already in the order
  they are shown, and "confidence >= threshold" is "number < the threshold's limit" (the header
  holds a limit per risk class). A term in more than 5% of the memories (and more than 500) is
  too common to find anything by and is left out; a posting list keeps its first 2,000 entries.
- A record (SOP or memory) is found by its number through a table of u32 offsets.
- ``extra`` (marshal, never read by a lookup) is what ``knowledge.increment`` needs to add
  memories in a delta: the memory store's mark, the reviewed decisions' memories by id, the
  common terms' counts and the true counts of cut posting lists.

``knowledge.delta`` (``knowledge.increment``) has the same layout, with memories only.
"""

from __future__ import annotations

import fcntl
import marshal
import sys
import time
from array import array
from collections.abc import Sequence
from typing import Any

from governance import system
from governance.knowledge import lookup as index_module
from governance.knowledge import settings as settings_module
from governance.knowledge.lookup import Index, bucket_of, fnv, terms
from governance.policy import derived
from governance.project import (
    KNOWLEDGE_MEMO,
    ensure_dir,
    knowledge_sources,
    require_config_libraries,
    signature,
)

COMMON_SHARE = 0.05   # a term in more than 5% of the memories ...
COMMON_MIN = 500      # ... and in more than 500 of them finds nothing in particular
POSTINGS_MAX = index_module.POSTINGS_MAX   # entries kept per term (the most confident)
WATCH_MAX = 200       # up to this many SOP files are stat'ed on every call; beyond, their folders
SYNC_MEMORIES = 5000  # a store this small is rebuilt at once; a larger one in the background
KEYS_PER_BUCKET = 8
FILTER_BITS_PER_KEY = 16  # a key filter (one bit per key's hash): about 6% of absent keys pass
GLOB_CHARS = "*?["


def build(project_dir: str) -> tuple[bytes, dict[str, Any]]:
    """The index file's bytes and a summary (counts, problems, time taken); writes nothing
    (``rebuild`` stores the index)."""
    require_config_libraries("the knowledge configuration and SOPs")
    from governance.knowledge.memory import MemoryStore, decision_memories
    from governance.knowledge.sop import SECTIONS, load_all

    started = time.perf_counter()
    everything = signature(knowledge_sources(project_dir))
    listed = _sop_files(project_dir)
    # taken before reading: a write meanwhile leaves a signature that no longer matches
    stamps = dict(zip(listed, signature(listed) or (), strict=False))   # {} if one cannot be stat'ed
    compiled = settings_module.load(project_dir)
    sops, problems = load_all(project_dir)
    broken = sorted({p.file for p in problems if p.file in stamps})
    # a malformed SOP is watched even among many, so that its fix (or a new break) is seen at once
    watched = listed if len(listed) <= WATCH_MAX else broken
    seen = {"all": everything,
            "watched": tuple(stamps[f] for f in watched) if len(stamps) == len(listed) else None}
    memories: list[Any] = []
    mark: dict[str, Any] = {"seq": 0, "last": "", "removed": 0}
    if MemoryStore.exists(project_dir):
        with MemoryStore.for_project(project_dir) as store:
            memories, mark = store.snapshot()
    reviewed = decision_memories(project_dir)
    memories.extend(reviewed)
    memories.sort(key=order)

    keys: dict[str, list[int]] = {}
    globs: dict[str, list[tuple[str, int]]] = {}
    sop_records = []
    for number, sop in enumerate(sorted(sops, key=lambda s: s.name)):
        categories = sorted({SECTIONS[s] for s in sop.sections})
        try:
            st = system.stat(sop.path)
            stamp: tuple[int, int] | None = (st.st_size, st.st_mtime_ns)
        except OSError:
            stamp = None
        record = {"name": sop.name, "path": sop.path, "title": sop.title,
                  "sections": sop.sections, "categories": categories, "stamp": stamp,
                  "commands": [], "match": sop.match}
        for key, glob in _sop_keys(sop, record):
            if glob:
                globs.setdefault(key, []).append((glob, number))
            else:
                keys.setdefault(key, []).append(number)
        sop_records.append(marshal.dumps(record))

    documents: dict[str, list[int]] = {}
    memory_records = []
    for number, memory in enumerate(memories):
        for term in terms(memory.text):
            documents.setdefault(term, []).append(number)
        memory_records.append(marshal.dumps(memory_record(memory)))
    common = {}
    cut = {}
    for term, numbers in documents.items():
        if len(numbers) > COMMON_MIN and len(numbers) > COMMON_SHARE * len(memories):
            common[term] = len(numbers)
            continue
        if len(numbers) > POSTINGS_MAX:
            cut[term] = len(numbers)
        keys["m:" + term] = numbers[:POSTINGS_MAX]
    numbered = {m.id: n for n, m in enumerate(memories) if m.id.startswith("dec-")}
    extra = {"mark": mark, "common": common, "cut": cut,
             "decisions": {m.id: [numbered[m.id], memory_record(m)] for m in reviewed}}

    confidences = [m.confidence for m in memories]
    limits = {name: sum(1 for c in confidences if c >= risk["threshold"])
              for name, risk in compiled["risk"].items()}
    header: dict[str, Any] = {
        "format": index_module.FORMAT, "signature": seen, "watched": watched,
        "built_at": time.time(), "settings": compiled, "limits": limits,
        "globs": {k: len(v) for k, v in globs.items()}, "sops": len(sop_records),
        "memories": len(memory_records),
        "empty": not sop_records and not memory_records,
        "problems": [p.render() for p in problems],
        "problem_stamps": tuple(stamps[f] for f in broken), "common": len(common)}
    data = _layout(header, globs, keys, sop_records, memory_records, marshal.dumps(extra))
    # a malformed SOP keeps the hook looking, so that the user is told (knowledge.notice)
    quiet = (header["empty"] and not problems) or compiled["level"] == "disabled"
    summary = {"quiet": quiet, "signature": everything,   # for the memo ``rebuild`` stores
               "sops": len(sop_records), "memories": len(memory_records),
               "keys": len(keys), "common_terms": len(common), "problems": header["problems"],
               "bytes": len(data), "seconds": round(time.perf_counter() - started, 3)}
    return data, summary


def order(memory: Any) -> tuple[float, float, str]:
    """The order memories are numbered in: most confident first, then the newest."""
    return (-memory.confidence, -memory.created_at, memory.id)


def memory_record(memory: Any) -> dict[str, Any]:
    return {"id": memory.id, "text": memory.text, "categories": memory.categories,
            "confidence": memory.confidence, "source": memory.source,
            "created_at": memory.created_at}


def _sop_files(project_dir: str) -> list[str]:
    found: list[str] = []
    for folder in index_module.sop_dirs(project_dir):
        try:
            names = system.listdir(folder)
        except OSError:
            continue
        found.extend(system.join(folder, n) for n in names if n.endswith(index_module.SOP_SUFFIX))
    return sorted(found)


def _sop_keys(sop: Any, record: dict[str, Any]) -> list[tuple[str, str]]:
    """(key, "") for each name the SOP is found by, ("host"|"tool"|"path", glob) for globs."""
    if sop.match is None:      # the whole file name: shop-api.ai.sop is not the project shop
        return [("any:" + sop.name.lower(), "")]
    found: list[tuple[str, str]] = []
    kinds = {"projects": "project", "services": "service", "technologies": "technology"}
    for field, items in sop.match.items():
        for item in items:
            value = item.lower()
            if field in kinds:
                found.append((f"k:{kinds[field]}:{value}", ""))
            elif field == "commands":    # whole words, as the call's command words are taken
                words = sorted(set(index_module.command_words(value))) or [value]
                record["commands"].append(words)
                found.append(("c:" + min(words, key=lambda w: (-len(w), w)), ""))
            elif field in ("hosts", "tools"):
                kind = field[:-1]
                if any(c in value for c in GLOB_CHARS):
                    found.append((kind, value))
                else:
                    found.append((kind[0] + ":" + value, ""))
            elif field == "paths":
                found.append(("path", value))
    return found


def _layout(header: dict[str, Any], globs: dict[str, list[tuple[str, int]]],
            keys: dict[str, list[int]], sops: list[bytes], memories: list[bytes],
            extra: bytes = b"") -> bytes:
    count = max(1, len(keys) // KEYS_PER_BUCKET) if keys else 0
    buckets: list[dict[str, tuple[int, int]]] = [{} for _ in range(count)]
    postings = []
    at = 0
    for key, numbers in keys.items():
        raw = array("I", numbers).tobytes()
        buckets[bucket_of(key, count)][key] = (at, len(numbers))
        postings.append(raw)
        at += len(raw)
    blobs = [marshal.dumps(b) if b else b"" for b in buckets]
    header["item_size"] = array("I").itemsize
    bits = 1024
    while bits < FILTER_BITS_PER_KEY * len(keys):
        bits *= 2
    bitmap = bytearray(bits // 8)
    for key in keys:
        bit = fnv(key) % bits
        bitmap[bit >> 3] |= 1 << (bit & 7)
    header["filter"] = [0, bits]
    header["buckets"] = count
    # the header's size depends on the offsets it holds: lay out until its size settles
    for key in ("bucket_table", "sop_table", "memory_table", "postings"):
        header[key] = 0
    header["extra"] = [0, 0]
    header["filter"] = [0, 0]
    glob_blobs = {kind: marshal.dumps(items) for kind, items in sorted(globs.items())}
    header["glob_spans"] = {kind: [0, 0] for kind in glob_blobs}
    for _ in range(4):
        head = marshal.dumps(header)
        offset = 8 + len(head)
        for kind, blob in glob_blobs.items():
            header["glob_spans"][kind] = [offset, offset + len(blob)]
            offset += len(blob)
        header["filter"] = [offset, bits]
        offset += len(bitmap)
        header["bucket_table"] = offset
        offset += 4 * (count + 1)
        bucket_starts = []
        for blob in blobs:
            bucket_starts.append(offset)
            offset += len(blob)
        bucket_starts.append(offset)
        header["sop_table"] = offset
        offset += 4 * (len(sops) + 1)
        sop_starts = []
        for blob in sops:
            sop_starts.append(offset)
            offset += len(blob)
        sop_starts.append(offset)
        header["memory_table"] = offset
        offset += 4 * (len(memories) + 1)
        memory_starts = []
        for blob in memories:
            memory_starts.append(offset)
            offset += len(blob)
        memory_starts.append(offset)
        header["postings"] = offset
        offset += at
        header["extra"] = [offset, offset + len(extra)]
        offset += len(extra)
        final = marshal.dumps(header)
        if len(final) == len(head):
            head = final
            break
    else:
        raise AssertionError("the knowledge index header did not settle")
    if offset >= 1 << 32:
        from governance.errors import ConfigError

        raise ConfigError("the knowledge index would be larger than 4 GB",
                          file=index_module.NAME, fix="remove memories you no longer need")
    parts = [index_module.MAGIC, len(head).to_bytes(4, "little"), head, *glob_blobs.values(),
             bytes(bitmap),
             _table(bucket_starts), *blobs, _table(sop_starts), *sops,
             _table(memory_starts), *memories, *postings, extra]
    return b"".join(parts)


def _table(starts: list[int]) -> bytes:
    return b"".join(s.to_bytes(4, "little") for s in starts)


def rebuild_index(project_dir: str) -> Index:
    """:func:`rebuild` as ``knowledge.lookup`` takes it (its ``build``)."""
    return rebuild(project_dir)[0]


def current(project_dir: str) -> tuple[Index, str]:
    """The index for the sources as they are (``lookup.current`` with this module building)."""
    return index_module.current(project_dir, rebuild_index)


def rebuild(project_dir: str) -> tuple[Index, dict[str, Any]]:
    """Build and store the index (under the builders' lock); an index that cannot be stored is
    still returned, so a read-only project gets its knowledge."""
    target = index_module.path(project_dir)
    try:
        ensure_dir(system.dirname(target))
    except OSError:
        pass      # built all the same, and not stored
    with lock(project_dir):
        data, summary = build_and_store(project_dir)
    try:
        system.unlink(target + ".building")
    except OSError:
        pass
    return Index.of_bytes(data), summary


def build_and_store(project_dir: str) -> tuple[bytes, dict[str, Any]]:
    """:func:`build`, then store the index and the memo of its sources, bound to the seal
    (``governance.policy.derived``), dropping any delta (it is folded in); the caller holds
    :func:`lock`."""
    data, summary = build(project_dir)
    stored = derived.store(project_dir, {
        index_module.NAME: data,
        KNOWLEDGE_MEMO: marshal.dumps({"signature": summary.pop("signature"),
                                       "value": {"quiet": summary.pop("quiet")}})},
        settle=(index_module.NAME,), remove=(index_module.DELTA_NAME,))
    if not stored:
        summary["not_stored"] = (f"{index_module.path(project_dir)}: the folder or the seal "
                                 "cannot be written")
    return data, summary


def lock(project_dir: str) -> _Lock:
    """The builders' lock: one builder (a rebuild, a delta) at a time per project."""
    return _Lock(index_module.path(project_dir) + ".lock")


class _Lock:
    def __init__(self, path: str) -> None:
        self.path = path
        self.fd = -1

    def __enter__(self) -> _Lock:
        try:
            self.fd = system.open(self.path, system.O_RDWR | system.O_CREAT, 0o600)
        except OSError:
            return self   # a folder we cannot write: nothing is stored, so nothing to guard
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fd >= 0:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            system.close(self.fd)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m governance.knowledge.indexer PROJECT``: rebuild in the background."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m governance.knowledge.indexer PROJECT", file=sys.stderr)
        return 2
    try:
        rebuild(args[0])
    except Exception as exc:  # a background rebuild reports to the project's errors.log
        from governance.ledger.chain import log_error
        from governance.project import governance_dir

        log_error(governance_dir(args[0]), f"knowledge index: {exc}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
