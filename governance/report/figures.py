"""The report's figures in one pass: the ledger read once, oldest first, each record handed to
every section's counter as it is parsed (nothing is kept but the counts), then the trace, the
decision store and the chain's verification.

``records`` is the reading: line by line, with a byte test on ``ts`` before a line is parsed when
a time window is given, and a progress bar over the bytes read; ``parse_line`` reads a line
from elsewhere the same way (a server's central copy: ``governance.report.team``, which feeds the
same :class:`Sections`). ``ledger_stats`` and
``knowledge_stats`` are what ``governance stats`` and ``governance knowledge stats`` print.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from governance.errors import LedgerError
from governance.report.activity import Activity
from governance.report.asks import Asks
from governance.report.denials import Denials
from governance.report.intents import Intents, trace_entries
from governance.report.knowledge import Knowledge
from governance.report.progress import Progress
from governance.report.selection import Selection
from governance.report.tamper import Evidence

Keep = Callable[[dict[str, Any]], bool]
_TS = '"ts":"'


def _older(line: str, since: str) -> bool:
    """Whether a canonical ledger line's ``ts`` is before ``since``, read from the text: the
    top-level ``ts`` is the last one in a line with sorted keys (a quote inside a string is
    escaped, so the pattern is always a key). A line without one is not older: it is parsed."""
    at = line.rfind(_TS)
    if at < 0:
        return False
    start = at + len(_TS)
    return line[start:start + len(since)] < since


def records(gov_dir: str, progress: Progress | None = None, since: str = ""
            ) -> Iterator[dict[str, Any]]:
    """Every parseable record, oldest first, across the archived and sealed segments present and
    the live ledger (``ledger.reader.chain_files``); with ``since``, records older than it may
    be left out unparsed. The progress bar advances every few thousand lines. Raises
    LedgerError at a record in a later ledger format."""
    from governance.ledger.chain import UPGRADE, unknown_format
    from governance.ledger.reader import chain_files

    decode = json.JSONDecoder().raw_decode   # json.loads without its checks of the ends
    for path in chain_files(gov_dir):
        done = 0
        with open(path, "rb") as handle:
            for number, raw in enumerate(handle, 1):
                if progress is not None:
                    done += len(raw)
                    if not number & 0xFFF:
                        progress.advance(done)
                        done = 0
                try:
                    line = raw.decode()
                    if since and _older(line, since):
                        continue
                    rec, end = decode(line)
                except ValueError:        # not UTF-8, not JSON, or space before it
                    try:
                        rec, end, line = json.loads(raw), 0, ""
                    except ValueError:
                        continue
                if type(rec) is not dict or (end < len(line) - 1 and line[end:].strip()):
                    continue              # not an object, or more after it
                if rec.get("v", 1) != 1:
                    newer = unknown_format(rec)
                    if newer is not None:
                        raise LedgerError(f"line {number}: {newer}", file=path, fix=UPGRADE)
                yield rec
        if progress is not None:
            progress.advance(done)


_DECODE = json.JSONDecoder().raw_decode


def parse_line(line: str, since: str = "", where: str = "") -> dict[str, Any] | None:
    """One ledger line as :func:`records` reads it, for lines read from elsewhere than the
    project's files (a server's central copy): None when it is older than ``since`` or is not one
    JSON object. Raises LedgerError (naming ``where``) at a record in a later ledger format."""
    if since and _older(line, since):
        return None
    try:
        rec, end = _DECODE(line)
    except ValueError:
        try:
            rec, end, line = json.loads(line), 0, ""
        except ValueError:
            return None
    if type(rec) is not dict or (end < len(line) - 1 and line[end:].strip()):
        return None
    if rec.get("v", 1) != 1:
        from governance.ledger.chain import UPGRADE, unknown_format

        newer = unknown_format(rec)
        if newer is not None:
            raise LedgerError(f"{where}: {newer}" if where else newer, fix=UPGRADE)
    return rec


def ledger_size(gov_dir: str) -> int:
    from governance.ledger.reader import chain_files

    total = 0
    for path in chain_files(gov_dir):
        try:
            total += os.path.getsize(path)
        except OSError:
            continue
    return total


class Sections:
    """Every section's counters, fed one record at a time."""

    def __init__(self) -> None:
        self.activity = Activity()
        self.denials = Denials()
        self.asks = Asks()
        self.knowledge = Knowledge()
        self.intents = Intents()
        self.evidence = Evidence()

    def add(self, rec: dict[str, Any]) -> None:
        self.activity.add(rec)
        event = rec.get("event")
        if event == "PreToolUse":
            self.denials.add(rec)
            self.asks.decision(rec)
            self.intents.add(rec)
        elif event == "PostToolUse" or event == "PostToolUseFailure":
            self.asks.result(rec)
        if "knowledge" in rec or event == "KnowledgeIgnored" or event == "KnowledgeBypass":
            self.knowledge.add(rec)
        if "unaccepted" in rec or "tampered" in rec or "org_refused" in rec:
            self.evidence.add(rec)

    def feed(self, stream: Iterable[dict[str, Any]], keep: Keep | None = None) -> None:
        add = self.add
        if keep is None:
            for rec in stream:
                add(rec)
        else:
            for rec in stream:
                if keep(rec):
                    add(rec)


def ledger_stats(gov_dir: str, keep: Keep | None = None, since: str = "",
                 show_progress: bool | None = None) -> dict[str, Any]:
    """What ``governance stats`` prints: counts per event, primitive, action and state, denials
    per session, hook durations (``since``: the filter's lower bound, to skip older lines)."""
    activity = Activity()
    add = activity.add
    progress = Progress("reading the ledger", ledger_size(gov_dir), shown=show_progress)
    try:
        for rec in records(gov_dir, progress, since):
            if keep is None or keep(rec):
                add(rec)
    finally:
        progress.done()
    return activity.stats()


def knowledge_stats(gov_dir: str, since: str = "", show_progress: bool | None = None
                    ) -> dict[str, Any]:
    """What ``governance knowledge stats`` prints."""
    knowledge = Knowledge()
    add = knowledge.add
    progress = Progress("reading the ledger", ledger_size(gov_dir), shown=show_progress)
    try:
        for rec in records(gov_dir, progress, since):
            if since and str(rec.get("ts", "")) < since:
                continue
            if "knowledge" in rec or rec.get("event") in ("KnowledgeIgnored", "KnowledgeBypass"):
                add(rec)
    finally:
        progress.done()
    return knowledge.stats()


def _verify_into(gov_dir: str, pipe: Any) -> None:
    """In a child process: the verification, sent back (None when it failed: the parent then
    verifies itself, and says why)."""
    from governance.report.tamper import verification

    try:
        pipe.send(verification(gov_dir))
    except Exception:
        pipe.send(None)
    finally:
        pipe.close()


class Verification:
    """``governance ledger verify`` for the report: in this process, or, for a large ledger, in a
    child process forked before the ledger is read, so the two passes use two cores (the first
    verification of a ledger hashes every sealed segment: about as long as the report's own pass).
    Only a process without threads may fork: the CLI, never the server."""

    def __init__(self, gov_dir: str, apart: bool) -> None:
        self.gov_dir = gov_dir
        self.child: Any = None
        if apart:
            import multiprocessing

            context = multiprocessing.get_context("fork")
            self.pipe, writer = context.Pipe(duplex=False)
            self.child = context.Process(target=_verify_into, args=(gov_dir, writer),
                                         daemon=True)
            self.child.start()
            writer.close()

    def abandon(self) -> None:
        """Stop the child (the report failed before it wanted the result)."""
        if self.child is not None:
            self.child.terminate()
            self.child.join()
            self.pipe.close()
            self.child = None

    def result(self) -> dict[str, Any]:
        from governance.report.tamper import verification

        found: dict[str, Any] | None = None
        if self.child is not None:
            try:
                found = self.pipe.recv()
            except (EOFError, OSError):
                found = None
            self.pipe.close()
            self.child.join()
        return found if found is not None else verification(self.gov_dir)


APART_BYTES = 64 * 1024 * 1024   # a ledger this large is verified beside the reading (CLI)


def build(project: str, selection: Selection, verify: bool = True, show_progress: bool | None = None,
          now: float | None = None, fork: bool = False) -> dict[str, Any]:
    """The figures of every section of the report for ``project``. ``fork``: the caller has no
    threads, so a large ledger may be verified in a child process (see :class:`Verification`)."""
    from governance.project import governance_dir
    from governance.report import memory

    started = time.perf_counter()
    gov_dir = governance_dir(project)
    size = ledger_size(gov_dir)
    checking = Verification(gov_dir, fork and size >= APART_BYTES and (os.cpu_count() or 1) > 1) \
        if verify else None
    sections = Sections()
    progress = Progress("reading the ledger", size, shown=show_progress)
    try:
        sections.feed(records(gov_dir, progress, selection.since),
                      selection if selection.active else None)
        for entry in trace_entries(project, selection.in_window):
            sections.intents.add_trace(entry)
    except BaseException:
        if checking is not None:
            checking.abandon()
        raise
    finally:
        progress.done()
    read_s = time.perf_counter() - started
    chain: dict[str, Any] | None = None
    if checking is not None:
        progress.say("verifying the chain")
        chain = checking.result()
        progress.done()
    generated = time.time() if now is None else now
    return {
        "project": project, "name": os.path.basename(project.rstrip("/")) or project,
        "generated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(generated)),
        "selection": selection.active,
        "activity": sections.activity.figures(),
        "denials": sections.denials.figures(),
        "asks": sections.asks.figures(),
        "knowledge": sections.knowledge.figures(),
        "intents": sections.intents.figures(),
        "memory": memory.figures(project, selection),
        "tamper": {"chain": chain, "evidence": sections.evidence.figures()},
        "timing": {"read_s": round(read_s, 3),
                   "total_s": round(time.perf_counter() - started, 3)},
    }
