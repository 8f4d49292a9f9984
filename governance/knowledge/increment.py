"""Keeping the knowledge index current as memories are added: a delta beside the index, and a
full rebuild (compaction) when the delta cannot say the change, or has grown too large.

``.claude/governance/.cache/knowledge.delta`` has the index's layout (``knowledge.indexer``) with
memories only: those added to the store since the index was built, and the reviewed decisions'
memories that are new or changed. Its header names the index it was built on (the index's sha256
in the seal), the sources' signature it stands for, the index's memories it replaces (``dead``), the
terms that became too common (``dropped``) and where each of its memories falls among the index's
(``slots``). ``knowledge.lookup`` reads both as one index built from the sources as they are: the
same memories, in the same order. The delta is stored as the index is (``policy.derived``), without
a stat record (it is small, so it is hashed whenever it is read).

The delta is computed anew from the index and the sources each time; what a previous delta on the
same index found (where a memory falls, its terms, a term's count in the index) is reused, so a
change costs its new memories and the rewrite of the (bounded) delta, not the store's size. A full
rebuild instead when:
- the settings or the SOPs changed, or there is no index to build on;
- a memory was removed from the store, or changed (the store counts both);
- a removed or changed reviewed pattern holds a term whose posting list the index cut short;
- fewer memories than the index held (the share that makes a term common would move down);
- a term the index left out as too common no longer is;
- the delta would hold more than ``DELTA_SHARE`` of the index's memories (at least ``DELTA_MIN``,
  at most ``DELTA_MAX``) or ``DELTA_BYTES``.

Cold path: ``governance memory`` after a change, and the hook's background process
(``python -m governance.knowledge.increment PROJECT``) after a change of a large store.
"""

from __future__ import annotations

import marshal
import sys
import time
from collections.abc import Sequence
from typing import Any

from governance import system
from governance.knowledge import indexer
from governance.knowledge import lookup as index_module
from governance.knowledge.lookup import DELTA_NAME, NAME, Index, open_delta, terms
from governance.policy import derived, seal
from governance.project import KNOWLEDGE_MEMO, knowledge_sources, signature

DELTA_MIN = 64         # a delta may always hold this many memories ...
DELTA_SHARE = 0.02     # ... or this share of the index's ...
DELTA_MAX = 1000       # ... but never more than this many
DELTA_BYTES = 256 * 1024   # hashed on each read: about 1.3 ms at this size


class Compact(Exception):
    """The change is one a delta cannot say: rebuild (the message says why)."""


def refresh(project_dir: str) -> tuple[Index, dict[str, Any]]:
    """Bring the index up to date: a delta when the change allows it, else a full rebuild. The
    summary says which (``delta``: its memories, or ``rebuilt``: why)."""
    with indexer.lock(project_dir):
        started = time.perf_counter()
        try:
            index, summary = update(project_dir)
        except Compact as why:
            data, summary = indexer.build_and_store(project_dir)
            index, summary["rebuilt"] = Index.of_bytes(data), str(why)
        summary["seconds"] = round(time.perf_counter() - started, 4)
    try:
        system.unlink(index_module.path(project_dir) + ".building")
    except OSError:
        pass
    return index, summary


def update(project_dir: str) -> tuple[Index, dict[str, Any]]:
    """Write the delta for the sources as they are (the caller holds ``indexer.lock``); raises
    :class:`Compact` when only a full rebuild can say the change. The index is returned with the
    delta attached."""
    from governance.knowledge.memory import MemoryStore, decision_memories

    now = signature(knowledge_sources(project_dir))   # before reading, as a rebuild takes it
    record = seal.read(project_dir)
    main = Index.open(project_dir, record)
    if main is None or now is None:
        raise Compact("no index to add to")
    try:
        header = main.header
        seen = header["signature"]
        if now[:4] != seen["all"][:4] or (
                header["watched"] and signature(header["watched"]) != seen["watched"]):
            raise Compact("the settings or the SOPs changed")
        base = seal.derived_entries(record)[NAME]["sha256"]
        if now == seen["all"]:
            return main, _summary(main, "current")
        before = main.delta = open_delta(project_dir, record, base)   # closed with main
        if before is not None and before.header["signature"] == now:
            return main, _summary(main, "current")
        extra = main.extra()
        known: dict[str, Any] = before.extra() if before is not None else {}
        if before is not None:     # the previous delta's memories, by id
            known["records"] = {r["id"]: r for r in map(before.memory,
                                                        range(before.header["memories"]))}
        records: list[dict[str, Any]] = []
        read: dict[str, Any] = {"seq": 0, "last": "", "removed": 0}   # the store's, as read
        if MemoryStore.exists(project_dir):
            with MemoryStore.for_project(project_dir) as store:
                found = store.since(extra["mark"], known.get("seen"))
            if found is None:
                raise Compact("a memory was removed or changed")
            fresh, again, read = found
            if again:    # the previous delta's memories of the store are all still there
                records.extend(r for i, r in known["records"].items() if i.startswith("mem-"))
            records.extend(indexer.memory_record(m) for m in fresh)
        elif extra["mark"]["seq"]:
            raise Compact("the memory store was removed")
        dead = _reviewed(extra["decisions"], decision_memories(project_dir), records)
        data = _delta(main, extra, known, records, dead, now, base, read)
        if before is not None:
            before.close()
        main.delta = Index.of_bytes(data)
        quiet = header["settings"]["level"] == "disabled" or (
            main.empty() and not header["problems"])
        files = {DELTA_NAME: data}
        if quiet:   # else the memo of older sources is left: it no longer matches, so unused
            files[KNOWLEDGE_MEMO] = marshal.dumps({"signature": now, "value": {"quiet": True}})
        stored = derived.store(project_dir, files)
        summary = _summary(main, "delta")
        if not stored:
            summary["not_stored"] = f"{DELTA_NAME}: the folder or the seal cannot be written"
        return main, summary
    except BaseException:
        main.close()
        raise


def _reviewed(indexed: dict[str, list[Any]], now: list[Any], records: list[dict[str, Any]]
              ) -> list[int]:
    """The index's reviewed-decision memories that are gone or changed (their numbers); the new
    and changed ones are appended to ``records``."""
    current = {m.id: indexer.memory_record(m) for m in now}
    dead = [number for memory_id, (number, record) in indexed.items()
            if current.get(memory_id) != record]
    records.extend(r for i, r in current.items() if i not in indexed or indexed[i][1] != r)
    return sorted(dead)


def _key(record: dict[str, Any]) -> tuple[float, float, str]:
    return (-record["confidence"], -record["created_at"], record["id"])


def _delta(main: Index, extra: dict[str, Any], known: dict[str, Any],
           records: list[dict[str, Any]], dead: list[int], now: object, base: str,
           read: dict[str, Any]) -> bytes:
    header = main.header
    total = header["memories"] - len(dead) + len(records)
    allowed = min(DELTA_MAX, max(DELTA_MIN, int(DELTA_SHARE * header["memories"])))
    if len(records) > allowed:
        raise Compact(f"the delta would hold {len(records)} memories (at most {allowed})")
    if total < header["memories"]:
        raise Compact("fewer memories than the index holds")
    records.sort(key=_key)
    cached, previous = known.get("memories", {}), known.get("records", {})
    slots: list[int] = []
    documents: dict[str, list[int]] = {}
    entries = {}
    for number, record in enumerate(records):
        entry = cached.get(record["id"])
        if entry is None or previous.get(record["id"]) != record:   # found once per memory
            entry = [_slot(main, _key(record)), sorted(terms(record["text"]))]
        entries[record["id"]] = entry
        slots.append(entry[0])
        for term in entry[1]:
            documents.setdefault(term, []).append(number)
    gone: dict[str, int] = {}
    for number in dead:
        for term in terms(main.memory(number)["text"]):
            gone[term] = gone.get(term, 0) + 1
    counts = _counts(main, extra, known.get("counts", {}), set(documents) | set(gone))
    common = extra["common"]
    for term in gone:
        if term not in common and counts[term] > indexer.POSTINGS_MAX:
            raise Compact(f"a changed reviewed pattern holds {term!r}, whose list the index cut")
    dropped = []
    for term in set(common) | set(documents):
        now_count = counts[term] + len(documents.get(term, ())) - gone.get(term, 0)
        frequent = now_count > indexer.COMMON_MIN and now_count > indexer.COMMON_SHARE * total
        if term in common and not frequent:
            raise Compact(f"the term {term!r} is no longer too common to find anything by")
        if term not in common and frequent:
            dropped.append("m:" + term)
    keys = {"m:" + t: numbers for t, numbers in documents.items()
            if t not in common and "m:" + t not in dropped}
    risk = header["settings"]["risk"]
    delta_header: dict[str, Any] = {
        "format": index_module.FORMAT, "base": base, "signature": now,
        "memories": len(records), "dead": dead, "dropped": sorted(dropped), "slots": slots,
        "limits": {name: sum(1 for r in records if r["confidence"] >= risk[name]["threshold"])
                   for name in risk},
        "empty": not header["sops"] and not total, "globs": {}, "sops": 0}
    cache = {"seen": read, "memories": entries, "counts": {t: counts[t] for t in documents}}
    data = indexer._layout(delta_header, {}, keys, [], [marshal.dumps(r) for r in records],
                           marshal.dumps(cache))
    if len(data) > DELTA_BYTES:
        raise Compact(f"the delta would be {len(data)} bytes (at most {DELTA_BYTES})")
    return data


def _slot(main: Index, key: tuple[float, float, str]) -> int:
    """How many of the index's memories come before one with this order key (binary search)."""
    low, high = 0, main.header["memories"]
    while low < high:
        middle = (low + high) // 2
        record = main.memory(middle)
        if (-record["confidence"], -record["created_at"], record["id"]) < key:
            low = middle + 1
        else:
            high = middle
    return low


def _counts(main: Index, extra: dict[str, Any], known: dict[str, int], wanted: set[str]
            ) -> dict[str, int]:
    """How many of the index's memories hold each term (common and cut terms from ``extra``,
    the others by their posting lists; what a previous delta found is reused)."""
    counts = {t: extra["common"].get(t) or extra["cut"].get(t) or known.get(t, -1)
              for t in wanted | set(extra["common"])}
    missing = {"m:" + t for t, c in counts.items() if c < 0}
    lists = main.postings(missing) if missing else {}
    for key in missing:
        counts[key[2:]] = len(lists.get(key, ()))
    return counts


def _summary(main: Index, how: str) -> dict[str, Any]:
    delta: dict[str, Any] = main.delta.header if main.delta else {"memories": 0, "dead": []}
    return {"sops": main.header["sops"], "how": how,
            "memories": main.header["memories"] - len(delta["dead"]) + delta["memories"],
            "delta": delta["memories"], "replaced": len(delta["dead"])}


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m governance.knowledge.increment PROJECT``: refresh in the background."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1:
        print("usage: python -m governance.knowledge.increment PROJECT", file=sys.stderr)
        return 2
    try:
        refresh(args[0])[0].close()
    except Exception as exc:  # a background refresh reports to the project's errors.log
        from governance.ledger.chain import log_error
        from governance.project import governance_dir

        log_error(governance_dir(args[0]), f"knowledge index: {exc}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
