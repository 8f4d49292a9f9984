"""The audit ledger: ``<project>/.claude/governance/ledger.jsonl``, one JSON record per line,
each chained to the one before by sha256.

Record hash: ``sha256(canonical(record without "hash"))`` where the record holds ``prev`` (the
previous record's hash, 64 zeros for the first) and ``seq``; canonical JSON has sorted keys, no
spaces, UTF-8. Secrets are redacted from every stored string before the hash is taken.

Appends are O(1) in the ledger's size: take an ``fcntl`` lock on ``ledger.jsonl.lock`` (the same
lock file the CLI takes with filelock), read the chain head from the sidecar ``ledger.head``
(``{hash, seq, size, segment}``), write the line with one ``write()`` on an ``O_APPEND`` descriptor,
then replace the head. When the ledger's size differs from the head's, a process died mid-append:
complete records that continue the chain are adopted, anything else after them (a torn line) is
moved to ``ledger.torn`` and cut off, and the chain goes on. Past ``max_bytes`` the ledger is
renamed to the next numbered segment ``ledger.000001.jsonl`` and the chain continues in a new file.
Each append then moves the head's anchor outside the project (``governance.ledger.anchor``).

Modes: files 0600, folder 0700. Hot path: ``os``, ``time``, ``fcntl``, the builtin sha256 and our
``jsoncodec`` (no ``json``, ``re`` or ``hashlib``).
"""

from __future__ import annotations

import fcntl
import time

from governance import jsoncodec, system
from governance.errors import LedgerError
from governance.ledger import anchor
from governance.ledger.files import _TAIL_WINDOW, _loads
from governance.ledger.files import LEDGER as LEDGER
from governance.ledger.files import last_record as last_record
from governance.ledger.files import segment_name as segment_name
from governance.ledger.files import segments as segments
from governance.ledger.redaction import redact, redact_record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hashlib import sha256 as sha256
    from typing import Any
else:
    try:
        from _sha256 import sha256
    except ImportError:  # pragma: no cover
        from hashlib import sha256

HEAD = "ledger.head"
LOCK = "ledger.jsonl.lock"
TORN = "ledger.torn"
ERRORS = "errors.log"
ERRORS_MAX_BYTES = 4 * 1024 * 1024
GENESIS = "0" * 64
FORMAT_VERSION = 1
LOCK_TIMEOUT_S = 5.0


def canonical(record: Any) -> bytes:
    """Sorted keys, no spaces, UTF-8: byte for byte ``json.dumps`` with those options."""
    if isinstance(record, dict | list):
        text = jsoncodec.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                               default=str)
    else:  # a scalar: encode it as the only item of a list, and drop the brackets
        text = jsoncodec.dumps([record], separators=(",", ":"), ensure_ascii=False,
                               default=str)[1:-1]
    return text.encode("utf-8")


def unknown_format(record: dict[str, Any]) -> str | None:
    """Why a record is in a ledger format this code does not read (None: it reads it). A record
    without ``v`` is format 1."""
    version = record.get("v", 1)
    if type(version) is int and 1 <= version <= FORMAT_VERSION:
        return None
    return (f"seq {record.get('seq')} is in ledger format {version!r}, which this "
            f"claude-governance does not read (it reads format {FORMAT_VERSION})")


UPGRADE = ("upgrade claude-governance (`uv tool upgrade claude-governance`, `pipx upgrade "
           "claude-governance` or `pip install -U claude-governance`), then run it again")


def record_hash(record: dict[str, Any]) -> str:
    body = {k: v for k, v in record.items() if k != "hash"}
    return sha256(canonical(body)).hexdigest()


def digest(value: Any) -> str:
    """sha256 of a value's canonical JSON (tool inputs and responses are stored as digests)."""
    return sha256(canonical(value)).hexdigest()


def now_iso() -> str:
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1000):03d}Z"


class _Lock:
    """An exclusive ``flock`` on the ledger's lock file, with a bounded wait."""

    def __init__(self, path: str, timeout: float | None = None) -> None:
        self.path = path
        self.timeout = LOCK_TIMEOUT_S if timeout is None else timeout
        self.fd = -1

    def __enter__(self) -> _Lock:
        self.fd = system.open(self.path, system.O_RDWR | system.O_CREAT, 0o600)
        deadline = time.monotonic() + self.timeout
        pause = 0.0005
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return self
            except BlockingIOError:
                if time.monotonic() > deadline:
                    system.close(self.fd)
                    raise LedgerError(f"the ledger lock was not free within {self.timeout:g} s",
                                      file=self.path,
                                      fix="check for a hung process holding it (lsof)") from None
                time.sleep(pause)
                pause = min(pause * 2, 0.005)

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        system.close(self.fd)


def read_head(gov_dir: str) -> dict[str, Any] | None:
    """The sidecar head, or None when it is missing or unreadable."""
    try:
        with open(system.join(gov_dir, HEAD), "rb") as fh:
            head = _loads(fh.read())
    except (OSError, ValueError):
        return None
    if (isinstance(head, dict) and isinstance(head.get("hash"), str)
            and isinstance(head.get("seq"), int) and isinstance(head.get("size"), int)):
        return head
    return None


HEAD_WIDTH = 256


def _write_head(gov_dir: str, head: dict[str, Any]) -> None:
    """Rewrite the head in place: one ``pwrite`` of a fixed-width, space-padded record (a rename
    costs more than the rest of an append). Only the lock holder writes it; a head torn by a
    crash is unreadable or names the wrong size, and the next append rebuilds it from the ledger."""
    data = canonical(head)
    data += b" " * (HEAD_WIDTH - len(data))
    fd = system.open(system.join(gov_dir, HEAD), system.O_WRONLY | system.O_CREAT, 0o600)
    try:
        system.pwrite(fd, data, 0)
        if len(data) > HEAD_WIDTH:  # never with today's fields; keep the file exactly one record
            system.ftruncate(fd, len(data))
    finally:
        system.close(fd)


def _chains(rec: Any, head: dict[str, Any]) -> bool:
    return (isinstance(rec, dict) and rec.get("prev") == head["hash"]
            and rec.get("seq") == head["seq"] + 1 and rec.get("hash") == record_hash(rec))


def _set_aside(gov_dir: str, data: bytes, offset: int) -> None:
    entry = {"ts": now_iso(), "file": LEDGER, "offset": offset, "length": len(data),
             "bytes": data.decode("utf-8", "replace")}
    fd = system.open(system.join(gov_dir, TORN), system.O_WRONLY | system.O_APPEND | system.O_CREAT, 0o600)
    try:
        system.write(fd, canonical(entry) + b"\n")
    finally:
        system.close(fd)


def _repair(gov_dir: str, fd: int, size: int, head: dict[str, Any] | None) -> dict[str, Any]:
    """The true chain head when the sidecar does not match the ledger (a crash or a lost head)."""
    good = size
    known = head is not None and head["size"] <= size and size - head["size"] <= _TAIL_WINDOW
    if head is not None and known:
        found = {"hash": head["hash"], "seq": head["seq"], "segment": head.get("segment", 0)}
        good = head["size"]
        for line in system.pread(fd, size - good, good).split(b"\n")[:-1]:
            try:
                rec = _loads(line)
            except ValueError:
                break
            if not _chains(rec, found):
                break
            found["hash"], found["seq"] = rec["hash"], rec["seq"]
            good += len(line) + 1
    else:
        rec, good = last_record(fd, size)
        if rec is None and good == 0:
            rec = _last_segment_record(gov_dir)
        numbers = [int(n[7:13]) for n in segments(gov_dir)]
        found = {"hash": rec["hash"] if rec else GENESIS,
                 "seq": int(rec.get("seq", 0)) if rec else 0,
                 "segment": max(numbers) if numbers else 0}
        if head is not None and head["hash"] != found["hash"]:
            log_error(gov_dir, f"ledger: {LEDGER} ends at seq {found['seq']} but its head says "
                               f"seq {head['seq']} (records removed?); the chain continues from "
                               "the file. Run `governance ledger verify`.")
    if good < size:
        _set_aside(gov_dir, system.pread(fd, size - good, good), good)
        system.ftruncate(fd, good)
    found["size"] = good
    return found


def _last_segment_record(gov_dir: str) -> dict[str, Any] | None:
    names = segments(gov_dir)
    if not names:
        return None
    fd = system.open(system.join(gov_dir, names[-1]), system.O_RDONLY)
    try:
        return last_record(fd, system.fstat(fd).st_size)[0]
    finally:
        system.close(fd)


def _write_line(fd: int, line: bytes, size: int, path: str) -> int:
    try:
        written = system.write(fd, line)
    except OSError:
        system.ftruncate(fd, size)
        raise
    if written != len(line):
        system.ftruncate(fd, size)  # never leave a partial record behind
        raise LedgerError(f"short write to the ledger ({written} of {len(line)} bytes)",
                          file=path, fix="check free disk space")
    return written


def append(gov_dir: str, record: dict[str, Any], *, max_bytes: int | None = None) -> dict[str, Any]:
    """Redact, chain and append one record; returns it with ``ts``, ``seq``, ``prev``, ``hash``.

    Raises :class:`LedgerError` when the ledger cannot be written (read-only, disk full, the lock
    not free within ``LOCK_TIMEOUT_S``)."""
    clean = redact_record(record)
    path = system.join(gov_dir, LEDGER)
    try:
        system.makedirs(gov_dir, mode=0o700, exist_ok=True)
        with _Lock(system.join(gov_dir, LOCK)):
            fd = system.open(path, system.O_RDWR | system.O_APPEND | system.O_CREAT, 0o600)
            try:
                info = system.fstat(fd)
                size = info.st_size
                head = read_head(gov_dir)
                if head is None or head["size"] != size:
                    head = _repair(gov_dir, fd, size, head)
                    size = head["size"]
                full = {"v": FORMAT_VERSION, "ts": clean.pop("ts", None) or now_iso(), **clean,
                        "seq": head["seq"] + 1, "prev": head["hash"]}
                full["hash"] = record_hash(full)
                line = canonical(full) + b"\n"
                segment = int(head.get("segment", 0))
                rotated = None
                if max_bytes and size and size + len(line) > max_bytes:
                    segment += 1
                    rotated = [segment, head["seq"], head["hash"], size]
                    system.close(fd)
                    fd = -1
                    system.rename(path, system.join(gov_dir, segment_name(segment)))
                    fd = system.open(path, system.O_RDWR | system.O_APPEND | system.O_CREAT, 0o600)
                    info = system.fstat(fd)
                    size = 0
                start = size
                size += _write_line(fd, line, size, path)
            finally:
                if fd >= 0:
                    system.close(fd)
            try:
                _write_head(gov_dir, {"hash": full["hash"], "seq": full["seq"], "size": size,
                                      "segment": segment})
            except OSError:
                pass  # the record is stored; the next append rebuilds the head from the ledger
            anchor.advance(gov_dir, head, full, [start, size], segment,
                           [info.st_dev, info.st_ino], rotated)
            return full
    except OSError as exc:
        raise LedgerError(f"cannot write the ledger ({exc.strerror or exc})", file=path,
                          fix="check that the folder is writable and the disk is not full"
                          ) from None


def log_error(gov_dir: str, text: str) -> str | None:
    """Append a redacted line to ``errors.log`` (0600); returns its path, or None on failure.
    A log past ``ERRORS_MAX_BYTES`` becomes ``errors.log.1`` (the one before is dropped), so a
    flood of bad input cannot fill the disk."""
    path = system.join(gov_dir, ERRORS)
    try:
        system.makedirs(gov_dir, mode=0o700, exist_ok=True)
        try:
            if system.stat(path).st_size > ERRORS_MAX_BYTES:
                system.replace(path, path + ".1")
        except FileNotFoundError:
            pass
        fd = system.open(path, system.O_WRONLY | system.O_APPEND | system.O_CREAT, 0o600)
        try:
            system.write(fd, f"{now_iso()} {redact(text)}\n".encode("utf-8", "replace"))
        finally:
            system.close(fd)
        return path
    except OSError:
        return None
