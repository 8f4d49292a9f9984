"""Shipping a project's ledger to the central copy a server keeps (``governance ledger ship``)
and comparing the two (``governance ledger verify --server``).

The server's head is the cursor: a ship asks where the central copy of the project ends, reads
the local records after it (archived and sealed segments included) and sends them in batches,
each stored whole or not at all; so a ship killed at any point, on either side, is finished by
running it again, and nothing needs remembering here. Not on the hot path: only the CLI imports
it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from governance.errors import ChainError, LedgerError
from governance.ledger import client
from governance.ledger.client import TOKEN_ENV
from governance.ledger.reader import backward, chain_files

BATCH = 1000
MAX_BATCH_BYTES = 8 * 1024 * 1024
AGAIN = "nothing is lost: run it again"


@dataclass
class Shipped:
    sent: int = 0
    stored: int = 0
    batches: int = 0
    first: int = 0        # the central head before
    head: int = 0         # and after


class Central:
    """The server keeping the central copy, over one kept-alive connection (:mod:`.client`)."""

    def __init__(self, url: str, token: str | None) -> None:
        parts = client.address(url, LedgerError)
        self.token = client.token(token, LedgerError)
        self.server = client.Client(parts, self.token, LedgerError, consequence=AGAIN)
        self.url = self.server.url

    def call(self, method: str, path: str, body: Any = None) -> dict[str, Any]:
        data = None if body is None else json.dumps(body).encode()
        answer = self.server.send(method, path, data)
        found = answer.document()
        if answer.status == 401:
            raise LedgerError(f"the server {self.url} refused the token (401)",
                              fix=f"pass the server's token with --token or {TOKEN_ENV}")
        if answer.status == 409:
            raise ChainError(f"the server refused the ledger: {found.get('error')}",
                             seq=int(found.get("seq") or 0), fix=found.get("fix"))
        if answer.status != 200 or not isinstance(found, dict):
            raise LedgerError(f"the server {self.url} answered {answer.status} to {path}: "
                              f"{found.get('error') if isinstance(found, dict) else found}; "
                              f"{AGAIN}")
        return found

    def head(self, project: str) -> tuple[int, str | None]:
        found = self.call("GET", "/ledger/head?" + urlencode({"project": project}))
        return int(found["seq"]), found.get("hash")

    def close(self) -> None:
        self.server.close()


def after(gov_dir: str, seq: int) -> Iterator[tuple[int, str]]:
    """``(seq, line without its newline)`` of every local record after ``seq``, in order; a file
    whose last record is at or before ``seq`` is skipped unread."""
    for path in chain_files(gov_dir):
        if _seq(next(backward(path), b""), seq) <= seq:
            continue
        with open(path, "rb") as fh:
            for raw in fh:
                line = raw.rstrip(b"\n")
                if not line.strip():
                    continue
                found = _seq(line, seq)
                if found > seq:
                    yield found, line.decode("utf-8")


def _seq(line: bytes, near: int) -> int:
    if not line.strip():
        return 0
    try:
        found = json.loads(line).get("seq")
    except (ValueError, AttributeError):
        found = None
    if type(found) is not int:
        raise LedgerError(f"a ledger line near seq {near} has no seq",
                          fix="run `governance ledger verify`, which names it")
    return int(found)


def batches(gov_dir: str, seq: int, batch: int = BATCH, until: int | None = None
            ) -> Iterator[list[str]]:
    """The local records after ``seq`` (up to ``until``, when given), in order, as lists of at
    most ``batch`` lines and about :data:`MAX_BATCH_BYTES`: what one request (or one
    transaction of the central copy) takes."""
    pending: list[str] = []
    size = 0
    for found, line in after(gov_dir, seq):
        pending.append(line)
        size += len(line) + 4
        if len(pending) >= batch or size >= MAX_BATCH_BYTES:
            yield pending
            pending, size = [], 0
        if until is not None and found >= until:
            break
    if pending:
        yield pending


def ship(central: Central, gov_dir: str, project: str, batch: int = BATCH) -> Shipped:
    """Send every local record the central copy lacks; raises :class:`ChainError` (a gap, a
    fork, a rewritten record) or :class:`LedgerError` (the server unreachable)."""
    head, _hash = central.head(project)
    done = Shipped(first=head, head=head)
    for pending in batches(gov_dir, head, batch):
        _send(central, project, pending, done)
    return done


def _send(central: Central, project: str, pending: list[str], done: Shipped) -> None:
    found = central.call("POST", "/ledger/ship", {"project": project, "records": pending})
    done.sent += len(pending)
    done.stored += int(found.get("stored", 0))
    done.batches += 1
    done.head = int(found["head"]["seq"])


def ship_retrying(make: Any, gov_dir: str, project: str, batch: int, retry: float,
                  say: Any = None) -> Shipped:
    """:func:`ship`, tried again with a growing pause while the server cannot be reached, for
    up to ``retry`` seconds (a refused chain is not retried)."""
    deadline = time.monotonic() + retry
    pause = 0.5
    while True:
        central = make()
        try:
            return ship(central, gov_dir, project, batch)
        except ChainError:
            raise
        except LedgerError as exc:
            if time.monotonic() + pause > deadline or "cannot reach" not in exc.message:
                raise
            if say is not None:
                say(f"{exc.message.split(';')[0]}; trying again in {pause:g} s")
            time.sleep(pause)
            pause = min(pause * 2, 30.0)
        finally:
            central.close()


def local_hash(gov_dir: str, seq: int) -> tuple[str | None, int]:
    """The local record's hash at ``seq`` (None when there is none) and the last local seq."""
    mine, last = None, 0
    for found, line in after(gov_dir, 0):
        if found == seq:
            mine = str(json.loads(line).get("hash"))
        last = found
    return mine, last


def compare(central: Central, gov_dir: str, project: str) -> tuple[bool, str]:
    """Whether the local chain holds the central copy as its prefix, and the sentence saying so."""
    seq, digest = central.head(project)
    if seq == 0:
        return True, f"central copy: empty for project {project} (nothing shipped yet)"
    mine, last = local_hash(gov_dir, seq)
    if mine == digest:
        return True, (f"central copy: matches the local chain up to seq {seq} (project "
                      f"{project}; {max(last, seq) - seq} local record(s) not shipped yet)")
    if mine is None:
        return False, (f"local ledger truncated after shipping: central has seq {seq} hash "
                       f"{digest}, local ends at seq {last}")
    return False, (f"local ledger rewritten after shipping: central has seq {seq} hash {digest}, "
                   f"local has hash {mine}")
