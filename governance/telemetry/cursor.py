"""What the exporter remembers it sent: ``.claude/governance/telemetry/otlp.cursor``.

The cursor holds the position of the last record the collector acknowledged
(``governance.telemetry.source``), how many were sent and rejected, and the metrics counted from
them (``governance.telemetry.tally``) with the time and instance id their series started. It is
written atomically (a temp file, then a rename) only after a collector's 2xx, so a crash or a
collector that is down loses nothing: what was not acknowledged is sent again.

``otlp.lock`` beside it keeps two exporters of one project (the server's, a ``--follow``, a one
shot) from sending the same records: one holds it while it runs.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
import uuid
from dataclasses import dataclass, field

from governance.errors import TelemetryError
from governance.project import replace_file
from governance.telemetry.source import Entry, Position
from governance.telemetry.tally import Tally

FOLDER = "telemetry"
CURSOR = "otlp.cursor"
LOCK = "otlp.lock"
FORMAT = 1


def folder(gov_dir: str) -> str:
    return os.path.join(gov_dir, FOLDER)


def cursor_path(gov_dir: str) -> str:
    return os.path.join(folder(gov_dir), CURSOR)


@dataclass
class Cursor:
    path: str
    position: Position = field(default_factory=Position)
    sent: int = 0
    rejected: int = 0
    instance: str = field(default_factory=lambda: str(uuid.uuid4()))
    since_ns: int = field(default_factory=time.time_ns)
    tally: Tally = field(default_factory=Tally)
    endpoint: str = ""

    @classmethod
    def load(cls, gov_dir: str) -> Cursor:
        """The project's cursor (a new one when there is none); raises TelemetryError when it
        cannot be read, rather than send the ledger again from its start."""
        path = cursor_path(gov_dir)
        try:
            with open(path, "rb") as fh:
                data = json.loads(fh.read())
        except FileNotFoundError:
            return cls(path)
        except (OSError, ValueError) as exc:
            raise _damaged(path, str(exc)) from None
        try:
            if data.get("v") != FORMAT:
                raise ValueError(f"format {data.get('v')!r}, this version reads {FORMAT}")
            position = Position(int(data["seq"]), str(data["hash"]), str(data.get("file", "")),
                                int(data.get("inode", 0)), int(data.get("offset", 0)))
            cursor = cls(path, position, sent=int(data.get("sent", 0)),
                         rejected=int(data.get("rejected", 0)), instance=str(data["instance"]),
                         since_ns=int(data["since_ns"]), endpoint=str(data.get("endpoint", "")))
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise _damaged(path, str(exc)) from None
        try:
            cursor.tally = Tally.from_json(data["tally"])
        except (KeyError, TypeError, ValueError):   # the metrics start a new series; logs go on
            cursor.since_ns, cursor.tally = time.time_ns(), Tally(changed=True)
        return cursor

    def advance(self, entries: list[Entry], rejected: int, endpoint: str) -> None:
        """Take acknowledged ``entries`` into the cursor and write it."""
        for entry in entries:
            self.tally.add(entry.record)
        self.position = entries[-1].position
        self.sent += len(entries)
        self.rejected += rejected
        self.endpoint = endpoint
        self.save()

    def save(self) -> None:
        position = self.position
        data = {"v": FORMAT, "seq": position.seq, "hash": position.hash, "file": position.file,
                "inode": position.inode, "offset": position.offset, "sent": self.sent,
                "rejected": self.rejected, "endpoint": self.endpoint,
                "instance": self.instance, "since_ns": self.since_ns,
                "updated": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "tally": self.tally.as_json()}
        try:
            os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
            replace_file(self.path, (json.dumps(data, sort_keys=True) + "\n").encode())
        except OSError as exc:
            raise TelemetryError(f"cannot write the exporter's cursor ({exc.strerror or exc}); "
                                 "the batch just acknowledged will be sent again next time",
                                 file=self.path, fix="check that the folder is writable and the "
                                                     "disk is not full") from None


def _damaged(path: str, why: str) -> TelemetryError:
    return TelemetryError(f"the exporter's cursor cannot be read ({why}), so what was sent is "
                          "not known", file=path,
                          fix="remove it to send the whole ledger again (the collector can drop "
                              "what it has by the attribute governance.record.id)")


class Lock:
    """``otlp.lock``: held by the one exporter of a project that runs."""

    def __init__(self, gov_dir: str) -> None:
        self.path = os.path.join(folder(gov_dir), LOCK)
        self.fd = -1

    def acquire(self) -> bool:
        """Take the lock if it is free; False when another exporter holds it."""
        os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self.fd = fd
        return True

    def release(self) -> None:
        if self.fd >= 0:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = -1
