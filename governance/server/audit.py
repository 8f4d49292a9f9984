"""The central copy of ledgers: ``POST /ledger/ship`` takes a project's ledger records as their
exact JSONL lines and stores those that continue the project's chain; ``GET
/ledger/head?project=ID`` says where the copy ends (``governance ledger ship`` starts there).

Every record is checked before any is stored: its seq is the one after the copy's head (else
"gap at seq N"), its ``prev`` is the hash of the record before it (else "fork at seq N"), and
its hash is its content's (``governance.ledger.chain.record_hash``; else "record N was
rewritten"). A record the copy holds already, byte for byte the same hash, is skipped: shipping
again is harmless. A batch is stored in one transaction, all of it or none, so a server killed
mid-ship leaves the copy at a batch boundary and the next ship goes on from there.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from governance.errors import ChainError, GovernanceError
from governance.ledger.chain import GENESIS, record_hash
from governance.project import governance_dir
from governance.storage.central import CentralCopy, Row, open_copy
from governance.storage.database import PROJECT_ID, database_url

MAX_BODY = 32 * 1024 * 1024     # a batch of ledger lines; the client keeps under a quarter of it
_COPIES: dict[str, CentralCopy] = {}
_LOCK = threading.Lock()        # one ingest at a time: a check and its insert are one step


def copy_for(project: str) -> CentralCopy:
    """The served project's central copy, opened once per process."""
    with _LOCK:
        found = _COPIES.get(project)
        if found is None:
            found = _COPIES[project] = open_copy(governance_dir(project), database_url())
        return found


def _row(line: str, expected: int, prev: str) -> Row:
    try:
        rec = json.loads(line)
    except ValueError:
        raise ChainError(f"record {expected} is not JSON", seq=expected) from None
    if not isinstance(rec, dict) or type(rec.get("seq")) is not int \
            or not isinstance(rec.get("hash"), str) or not isinstance(rec.get("prev"), str):
        raise ChainError(f"record {expected} has no integer seq, prev and hash", seq=expected)
    seq = rec["seq"]
    if seq != expected:
        raise ChainError(f"gap at seq {expected}: the next record sent is seq {seq}",
                         seq=expected, fix="ship the records in order, from the central head on")
    if rec["hash"] != record_hash(rec):
        raise ChainError(f"record {seq} was rewritten: its hash does not match its content",
                         seq=seq, fix="run `governance ledger verify` on the shipping side")
    if rec["prev"] != prev:
        raise ChainError(f"fork at seq {seq}: its prev {rec['prev'][:16]}... is not the hash "
                         f"of seq {seq - 1} ({prev[:16]}...)", seq=seq,
                         fix="the local ledger differs from what was shipped before; "
                             "`governance ledger verify --server URL` shows where")
    return Row(seq, rec["hash"], rec["prev"], line)


def ingest(copy: CentralCopy, project: str, lines: list[str]) -> dict[str, Any]:
    """Check ``lines`` against the copy and store the new ones in one transaction; what was
    stored and skipped and where the copy now ends. Raises :class:`ChainError` naming the seq."""
    with _LOCK:
        head, head_hash = copy.head(project)
        first = _first_seq(lines)
        skipped = 0
        if first is not None and first <= head:        # sent before: the same records, or a fork
            overlap = lines[:head - first + 1]
            stored = copy.hashes(project, first, first + len(overlap) - 1)
            for offset, line in enumerate(overlap):
                seq = first + offset
                sent = _sent_hash(line, seq)
                if stored.get(seq) != sent:
                    raise ChainError(f"record {seq} was rewritten (fork at seq {seq}): the "
                                     f"central copy holds hash {str(stored.get(seq))[:16]}..., "
                                     f"this one {sent[:16]}...", seq=seq,
                                     fix="the local ledger was changed after it was shipped; "
                                         "`governance ledger verify --server URL` shows where")
            skipped = len(overlap)
            lines = lines[skipped:]
        rows: list[Row] = []
        prev = head_hash or GENESIS
        for offset, line in enumerate(lines):
            row = _row(line, head + 1 + offset, prev)
            rows.append(row)
            prev = row.hash
        if rows:
            copy.add(project, rows)
            head, head_hash = rows[-1].seq, rows[-1].hash
        return {"project": project, "stored": len(rows), "skipped": skipped,
                "head": {"seq": head, "hash": head_hash}}


def _first_seq(lines: list[str]) -> int | None:
    if not lines:
        return None
    try:
        seq = json.loads(lines[0]).get("seq")
    except (ValueError, AttributeError):
        raise ChainError("record 1 of the batch is not a JSON object", seq=0) from None
    if type(seq) is not int or seq < 1:
        raise ChainError("the batch's first record has no seq", seq=0)
    return int(seq)


def _sent_hash(line: str, seq: int) -> str:
    """The hash a re-sent record claims (it must be the one the copy holds for ``seq``)."""
    try:
        rec = json.loads(line)
    except ValueError:
        raise ChainError(f"record {seq} is not JSON", seq=seq) from None
    if not isinstance(rec, dict) or rec.get("seq") != seq:
        raise ChainError(f"gap at seq {seq}: the record sent there is not seq {seq}", seq=seq)
    return str(rec.get("hash"))


def _project(value: Any, scoped: str | None) -> str:
    if not isinstance(value, str) or not PROJECT_ID.fullmatch(value):
        raise _Bad(f"project {value!r} is not a project id (letters, digits, '.', '_', '-')")
    if scoped is not None and value != scoped:
        raise _Forbidden(f"this token acts in project {scoped}, not {value}")
    return value


class _Bad(GovernanceError):
    """A request the server cannot read (400)."""


class _Forbidden(GovernanceError):
    """A project the caller's token does not act in (403)."""


def answer(served: str, method: str, path: str, query: bytes, body: bytes,
           scoped: str | None = None) -> tuple[int, bytes, list[tuple[bytes, bytes]]]:
    """The HTTP answer to ``/ledger/head`` or ``/ledger/ship`` of the server of ``served``; a
    token scoped to project ``scoped`` reads and ships into that project only."""
    try:
        if path == "/ledger/head":
            if method != "GET":
                return _json(405, {"error": "use GET"}, [(b"allow", b"GET")])
            from urllib.parse import parse_qs

            asked: list[str | None] = [*parse_qs(query.decode("latin-1")).get("project", []), None]
            project = _project(asked[0], scoped)
            seq, digest = copy_for(served).head(project)
            return _json(200, {"project": project, "seq": seq, "hash": digest})
        if method != "POST":
            return _json(405, {"error": "use POST"}, [(b"allow", b"POST")])
        try:
            sent = json.loads(body)
        except ValueError:
            raise _Bad("the body is not JSON: send {\"project\": ID, \"records\": [lines]}") \
                from None
        if not isinstance(sent, dict) or not isinstance(sent.get("records"), list) \
                or not all(isinstance(line, str) for line in sent["records"]):
            raise _Bad("send {\"project\": ID, \"records\": [the ledger's lines as strings]}")
        project = _project(sent.get("project"), scoped)
        return _json(200, ingest(copy_for(served), project, sent["records"]))
    except ChainError as exc:
        return _json(409, {"error": exc.message, "seq": exc.seq, "fix": exc.fix})
    except _Bad as exc:
        return _json(400, {"error": exc.message})
    except _Forbidden as exc:
        return _json(403, {"error": exc.message})


def _json(status: int, value: Any, headers: list[tuple[bytes, bytes]] | None = None
          ) -> tuple[int, bytes, list[tuple[bytes, bytes]]]:
    return status, json.dumps(value).encode(), headers or []
