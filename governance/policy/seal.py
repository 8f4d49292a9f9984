"""The seal: what the user last accepted of the cycle state, the activity matrix and the settings
governance owns, each with its content hash.

Only legitimate routes write it: ``governance state set|next`` (the state, as it happens),
``governance validate`` (the matrix), ``governance install|sandbox|uninstall`` (our settings) and
``governance accept`` (everything as it is now). A hook reads it (one small file) and compares: a
governance file that no longer matches was changed some other way, and is not acted on.

It also records what governance built from those sources (``derived``: the compiled caches, the
knowledge index, the memos), written by ``governance.policy.derived`` and checked here on the hot
path, so that a derived file rewritten by a script is not taken for governance's own.

Layout of ``.claude/governance/seal.json`` (version 1)::

    {"version": 1,
     "state": {"sha256": "..." | "", "previous_sha256": "...", "content": {...} | null, ...},
     "matrix": {"sha256": "..." | "", ...},          # "" = no project override accepted
     "settings": {"files": [...], "expect": [...], "sandbox": bool, ...},
     "derived": {"matrix-f13-....marshal": {"sha256": "...", "stat": [size, mtime, ctime, ino]
                                                               | null}, ...}}

The accepted override's bytes are kept beside it in ``seal-matrix.yaml``, so the accepted matrix
can be compiled again when its cache is gone. Hot path: ``os``, ``marshal``, ``jsoncodec`` and the
builtin sha256; writing takes a filelock (and a mismatch of a derived file, to read it again).
"""

from __future__ import annotations

import marshal
import time

from governance import jsoncodec, system
from governance.errors import StateError
from governance.project import (
    cache_file,
    enable_site_packages,
    governance_dir,
    read_bytes,
    replace_file,
    signature,
)

try:
    from _sha256 import sha256  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - interpreters without the builtin module
    from hashlib import sha256

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SEAL_NAME = "seal.json"
SETTINGS_MEMO = "settings-seal.marshal"  # settings files last found as the seal expects
MATRIX_COPY = "seal-matrix.yaml"
VERSION = 1


def seal_path(project_dir: str) -> str:
    return system.join(governance_dir(project_dir), SEAL_NAME)


def matrix_copy_path(project_dir: str) -> str:
    return system.join(governance_dir(project_dir), MATRIX_COPY)


def digest(data: bytes) -> str:
    return str(sha256(data).hexdigest())


def read(project_dir: str) -> dict[str, Any] | None:
    """The seal, or None when there is none (never written, deleted, or unreadable: all three
    mean that nothing is accepted)."""
    try:
        data = jsoncodec.loads(read_bytes(seal_path(project_dir)).decode("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("version") != VERSION:
        return None
    return data


def accepted_override(record: dict[str, Any] | None) -> str:
    """The sha256 of the accepted project override; "" when none is accepted (no seal, or the
    project had no override when it was sealed): the packaged default alone is then in force."""
    entry = record.get("matrix") if record else None
    if isinstance(entry, dict) and isinstance(entry.get("sha256"), str):
        return str(entry["sha256"])
    return ""


def accepted_state(record: dict[str, Any] | None) -> dict[str, Any] | None:
    """The accepted state entry (``sha256``, ``previous_sha256``, ``content``), or None when no
    state was ever accepted."""
    entry = record.get("state") if record else None
    return entry if isinstance(entry, dict) and isinstance(entry.get("sha256"), str) else None


def accepted_matrix_bytes(project_dir: str, record: dict[str, Any] | None) -> bytes | None:
    """The accepted override's bytes, checked against the seal; None when no override is accepted
    or its copy is gone or does not match (then the packaged default alone is in force)."""
    want = accepted_override(record)
    if not want:
        return None
    try:
        data = read_bytes(matrix_copy_path(project_dir))
    except OSError:
        return None
    return data if digest(data) == want else None


def settings_memo(entry: dict[str, Any]) -> tuple[str, object]:
    """The memo (a derived file, ``governance.policy.derived``) in which ``governance.hook.owned``
    remembers settings files that met the seal, and its key: their stat signature with the seal's
    key."""
    files = [str(f) for f in entry.get("files") or ()]
    return SETTINGS_MEMO, (signature(files), entry.get("key"))


def settings_unchanged(project_dir: str, entry: dict[str, Any] | None,
                       record: dict[str, Any] | None = None) -> bool:
    """True when nothing is owned, or the settings files are as when last found to meet the seal
    (a few stats and one small read)."""
    if not entry or not entry.get("expect"):
        return True
    name, key = settings_memo(entry)
    return recall_derived(project_dir, name, key, record) is True


# --- derived files: checking (the hot path; ``governance.policy.derived`` writes them) ----------

DERIVED = "derived"   # the seal's part: name in the cache folder -> {"sha256", "stat"}
_CHANGED: dict[str, list[str]] = {}


def derived_entries(record: dict[str, Any] | None) -> dict[str, Any]:
    """The seal's records of derived files: name -> {"sha256", "stat"}."""
    found = record.get(DERIVED) if record else None
    return found if isinstance(found, dict) else {}


def _derived_entry(record: dict[str, Any] | None, name: str) -> dict[str, Any] | None:
    entry = derived_entries(record).get(name)
    return entry if isinstance(entry, dict) and isinstance(entry.get("sha256"), str) else None


def stat_list(st: system.stat_result) -> list[int]:
    """A file's stat as the seal records it: size, mtime, ctime, inode."""
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def note_changed(project_dir: str, name: str) -> None:
    """Remember that the derived file ``name`` was found changed outside governance."""
    names = _CHANGED.setdefault(project_dir, [])
    if name not in names:
        names.append(name)


def changed(project_dir: str) -> list[str]:
    """The derived files found changed outside governance since last asked (then forgotten)."""
    return _CHANGED.pop(project_dir, [])


def derived_bytes(project_dir: str, name: str, record: dict[str, Any] | None = None
                  ) -> bytes | None:
    """A small derived file's bytes (a memo), hashed: None when it is missing, has no record,
    or was changed (noted). ``record`` is the seal (read when not given)."""
    try:
        data = read_bytes(cache_file(project_dir, name))
    except OSError:
        return None
    entry = _derived_entry(read(project_dir) if record is None else record, name)
    if entry is None:
        return None
    found = digest(data)
    return data if found == entry["sha256"] or _again(project_dir, name, found) else None


def derived_verified(project_dir: str, name: str, fd: int, record: dict[str, Any] | None
                     ) -> bool:
    """Whether the open file ``fd`` (``name`` in the cache) holds what was recorded: its stat as
    recorded, else its bytes hashed. A change is noted; a file with no record is just False."""
    entry = _derived_entry(record, name)
    if entry is None:
        return False
    st = system.fstat(fd)
    if entry.get("stat") == stat_list(st):
        return True
    found = digest(read_whole(fd))
    return found == entry["sha256"] or _again(project_dir, name, found)


def derived_whole(project_dir: str, name: str, record: dict[str, Any] | None
                  ) -> tuple[bytes, list[int]] | None:
    """A large derived file's bytes, read whole, with the stat they were verified under; None
    when it is missing, not recorded or changed (noted). The stat is taken after the read: a
    write before or during it moved the ctime."""
    try:
        fd = system.open(cache_file(project_dir, name), system.O_RDONLY | system.O_CLOEXEC)
    except OSError:
        return None
    try:
        data = read_whole(fd)
        stat = stat_list(system.fstat(fd))
    finally:
        system.close(fd)
    entry = _derived_entry(record, name)
    if entry is None:
        return None
    if entry.get("stat") == stat:
        return data, stat
    found = digest(data)
    return (data, stat) if found == entry["sha256"] or _again(project_dir, name, found) else None


def trusted_stat(record: dict[str, Any] | None, name: str, stat: list[int]) -> bool:
    """Whether ``stat`` is the one recorded for ``name`` (its bytes need no hashing)."""
    entry = _derived_entry(record, name)
    return entry is not None and entry.get("stat") == stat


def recall_derived(project_dir: str, name: str, seen: object,
                   record: dict[str, Any] | None = None) -> object:
    """``project.recall`` for a memo bound to the seal: the value remembered for files with the
    stat signature ``seen``; None when the memo is missing, unrecorded, changed or for other
    files."""
    if seen is None:
        return None
    data = derived_bytes(project_dir, name, record)
    if data is None:
        return None
    try:
        memo = marshal.loads(data)
    except (EOFError, ValueError, TypeError):
        return None
    if isinstance(memo, dict) and memo.get("signature") == seen:
        return memo.get("value")
    return None


def read_whole(fd: int) -> bytes:
    """All of an open file's bytes (one read of the size ``fstat`` gives, when it still holds)."""
    size = system.fstat(fd).st_size
    first = system.pread(fd, size + 1, 0)
    if len(first) <= size:
        return first
    chunks = [first]
    offset = len(first)
    while chunk := system.pread(fd, 1 << 20, offset):
        chunks.append(chunk)
        offset += len(chunk)
    return b"".join(chunks)


def _again(project_dir: str, name: str, found: str) -> bool:
    """A mismatch read again under the seal's lock: True when ``found`` is what is recorded now
    (a builder was replacing the file and its record). Otherwise the change is noted, unless the
    file on disk is what is recorded (a builder's newer file, not a change)."""
    try:
        with lock(project_dir):
            entry = _derived_entry(read(project_dir), name)
            try:
                data: bytes | None = read_bytes(cache_file(project_dir, name))
            except OSError:
                data = None
    except Exception:  # no lock to be had (read-only, a timeout): judged as read
        entry = _derived_entry(read(project_dir), name)
        data = None
    if entry is None:
        return False        # its record was dropped meanwhile (pruned): not a change
    if found == entry["sha256"]:
        return True
    if data is None or digest(data) != entry["sha256"]:
        note_changed(project_dir, name)
    return False


# --- writing (the CLI, and a hook that builds a derived file) -----------------------------------

def who() -> str:
    """Who changes a governance file, and how: ``alice (cli)``, ``alice (just)`` (a just recipe),
    ``alice (claude-code)`` (through Claude Code's Bash tool). The user is ``$USER``, else the
    account the process runs as (``$USER`` is unset under cron, containers, ``env -i``)."""
    user = system.environ_get("USER", "") or system.environ_get("LOGNAME", "")
    if not user:
        import pwd

        try:
            user = pwd.getpwuid(system.getuid()).pw_name
        except KeyError:  # an account with no passwd entry (some containers)
            user = f"uid {system.getuid()}"
    return f"{user} ({_how()})"


def _how() -> str:
    """How the change was made: Claude Code sets ``CLAUDECODE`` for the commands it runs; this
    repository's just recipes set ``GOVERNANCE_VIA=just`` on the commands that change governance
    files. Informational only (the user is what matters): anything else is ``cli``."""
    if system.environ_get("CLAUDECODE"):
        return "claude-code"
    if system.environ_get("GOVERNANCE_VIA") == "just":
        return "just"
    return "cli"


def _stamp(by: str) -> dict[str, str]:
    return {"at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "by": by or who()}


def _write_atomic(path: str, data: bytes) -> None:
    try:
        replace_file(path, data, sync=True)
    except OSError as exc:
        raise StateError(f"cannot record the accepted version ({exc.strerror})", file=path,
                         fix="check that the project's .claude/governance folder is writable"
                         ) from None


def lock(project_dir: str) -> Any:
    """The seal's lock (a ``filelock.FileLock``, 10 s timeout): held by whatever writes the seal,
    and by ``governance.policy.derived`` while it replaces a file and its record together."""
    enable_site_packages()   # a hook runs with -S: filelock is in the venv
    from filelock import FileLock

    system.makedirs(governance_dir(project_dir), mode=0o700, exist_ok=True)
    return FileLock(seal_path(project_dir) + ".lock", timeout=10)


def write(project_dir: str, record: dict[str, Any]) -> None:
    """Write the whole seal; the caller holds ``lock``."""
    import json

    _write_atomic(seal_path(project_dir),
                  (json.dumps(record, indent=2, sort_keys=True) + "\n").encode())


def accepts_nothing(record: dict[str, Any] | None) -> bool:
    """True when no seal exists or it records no accepted part (only what governance built)."""
    return record is None or not any(part in record for part in ("state", "matrix", "settings"))


def update(project_dir: str, part: str, entry: dict[str, Any] | None) -> dict[str, Any]:
    """Replace one part of the seal (``state``, ``matrix`` or ``settings``; None removes it) under
    the seal's lock; returns the new seal."""
    with lock(project_dir):
        record = read(project_dir) or {"version": VERSION}
        if entry is None:
            record.pop(part, None)
        else:
            record[part] = entry
        write(project_dir, record)
    return record


def accept_state(project_dir: str, data: bytes | None, content: dict[str, Any] | None,
                 previous_sha256: str | None = None, actor: str = "") -> None:
    """Record the state file's bytes (None: no state file) as accepted. ``previous_sha256`` (""
    for no file) stays accepted too while the caller replaces the file, so no hook call in
    between sees an unrecorded change."""
    entry: dict[str, Any] = {"sha256": digest(data) if data is not None else "",
                             "content": content, **_stamp(actor)}
    if previous_sha256 is not None:
        entry["previous_sha256"] = previous_sha256
    update(project_dir, "state", entry)


def accept_matrix(project_dir: str, override: bytes | None, actor: str = "") -> str:
    """Record the project override's bytes (None: no override) as accepted, keeping a copy;
    returns their sha256 ("" for none)."""
    sha = digest(override) if override is not None else ""
    copy = matrix_copy_path(project_dir)
    if override is not None:
        system.makedirs(system.dirname(copy), mode=0o700, exist_ok=True)
        _write_atomic(copy, override)
    else:
        try:
            system.unlink(copy)
        except FileNotFoundError:
            pass
    update(project_dir, "matrix", {"sha256": sha, **_stamp(actor)})
    return sha


def accept_settings(project_dir: str, files: list[str], expect: list[list[Any]],
                    sandbox: bool, actor: str = "") -> None:
    """Record what governance owns in Claude Code's settings files (see ``owned``); an empty
    ``expect`` forgets it."""
    if not expect:
        update(project_dir, "settings", None)
        return
    import json

    key = digest(json.dumps([files, expect], sort_keys=True).encode())
    update(project_dir, "settings", {"files": files, "expect": expect, "sandbox": sandbox,
                                     "key": key, **_stamp(actor)})
