"""The compiled activity matrix, as the hook reads it.

Hot path: imports only ``os``, ``marshal`` and the builtin sha256. Each call reads the source files
(the packaged default and the project's override), hashes their bytes, and loads the compiled form
from ``<project>/.claude/governance/.cache/matrix-<hash>.marshal``. Only when no cache exists for
these exact bytes does it import the compiler (yaml + pydantic), validate and write the cache. A
matrix that fails validation is cached as an error too, so every later call reports the same error
quickly until the file is fixed; it is never replaced by defaults.

The project's override is used only as last accepted (``governance.policy.seal``): when its bytes are not
the ones ``governance validate`` recorded, ``load`` compiles the accepted copy instead (or the
packaged default alone, when none was accepted) and says so under ``unaccepted``.
"""

from __future__ import annotations

import marshal

from governance import system
from governance.errors import ConfigError, OrgPolicyError
from governance.policy import managed, seal
from governance.project import (
    cache_file,
    default_matrix_path,
    installation_paths,
    org_matrix_path,
    override_matrix_path,
    require_config_libraries,
    signature,
)

try:
    from _sha256 import sha256  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - interpreters without the builtin module
    from hashlib import sha256

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FORMAT = 26  # bump when the compiled form (or what the compiler puts in it) changes


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"cannot read the activity matrix ({exc.strerror})", file=path,
                          fix="check the file's permissions") from None


def _with_org(digest: Any) -> None:
    """The organisation's layer in a content hash (nothing when there is none, so a project's
    hashes stay as they were)."""
    org = managed.source()
    if org is not None:
        digest.update(b"\0org\0")
        digest.update(org[1])


def read_sources(project_dir: str) -> tuple[tuple[str, bytes], tuple[str, bytes] | None, str]:
    """The default and override sources with a content hash over both and the organisation's
    layer (``org_source``)."""
    default_path = default_matrix_path()
    default_bytes = _read(default_path)
    if default_bytes is None:
        raise ConfigError("the packaged default activity matrix is missing", file=default_path,
                          fix="reinstall claude-governance or set GOVERNANCE_DEFAULT_MATRIX")
    override_path = override_matrix_path(project_dir)
    override_bytes = _read(override_path)
    digest = sha256(default_bytes)
    digest.update(b"\0override\0")
    if override_bytes is not None:
        digest.update(override_bytes)
    _with_org(digest)
    override = None if override_bytes is None else (override_path, override_bytes)
    return (default_path, default_bytes), override, digest.hexdigest()


def cache_path(project_dir: str, config_hash: str) -> str:
    return cache_file(project_dir, f"matrix-f{FORMAT}-{config_hash[:32]}.marshal")


def _sources(project_dir: str) -> tuple[str, str, str]:
    return default_matrix_path(), override_matrix_path(project_dir), org_matrix_path()


def org_source() -> tuple[str, bytes] | None:
    """The organisation's matrix to compile with the project's (``policy.managed``)."""
    return managed.source()


MEMO = f"sources-f{FORMAT}.marshal"   # the sources' stat signature -> their content hash


# A compiled cache is named by the hash of the sources it was compiled from, and it is read only
# when it holds what governance recorded in the seal when it wrote it (``derived``). A process that
# decides many calls (the resident server) keeps what it read, for a few paths, as long as the
# file's stat is the one it was verified under; a command hook reads each once anyway. Callers get
# a shallow copy to mark.
_HELD: dict[str, tuple[list[int], Any]] = {}
_HELD_PATHS = 4


def _hold(path: str, stat: list[int], found: Any) -> Any:
    if len(_HELD) >= _HELD_PATHS:
        _HELD.clear()
    _HELD[path] = (stat, found)
    return found


def _read_cache(project_dir: str, path: str, record: dict[str, Any] | None
                ) -> dict[str, Any] | None:
    """The compiled matrix at ``path`` when it is what governance recorded in the seal (else
    None; a change is noted, ``seal.changed``). Read whole, so that the rules read later come
    from the bytes that were checked."""
    name = system.basename(path)
    held = _HELD.get(path)
    if held is not None:
        try:
            stat = seal.stat_list(system.stat(path))
        except OSError:
            return None
        if held[0] == stat and seal.trusted_stat(record, name, stat):
            return dict(held[1])
    found = seal.derived_whole(project_dir, name, record)
    if found is None:
        return None
    data, stat = found
    try:
        cached = _read_framed(data)
    except (EOFError, ValueError, TypeError):
        return None
    if not isinstance(cached, dict):
        return None
    if "rule_files" in cached:
        for table in LAZY_CORE:
            cached[table] = LazyTable(cached[table])
        cached["decide"] = DecideTable(cached["decide"])
        cached["decide"].files = cached["rule_files"]
        cached["decide"].path = path
        cached["decide"].data = data
    return dict(_hold(path, stat, cached))


def _read_framed(data: bytes) -> Any:
    """The header of a cache file written by ``_framed``."""
    length = int.from_bytes(data[:4], "little")
    if len(data) < 4 + length:
        raise ValueError("the cache file is cut short")
    return marshal.loads(data[4:4 + length])


def _framed(header: Any, blob: bytes = b"") -> bytes:
    """A cache file: the header's length, the header, then bytes read only on demand."""
    head = marshal.dumps(header)
    return len(head).to_bytes(4, "little") + head + blob


def load(project_dir: str) -> dict[str, Any]:
    """The compiled matrix in force for a project; raises ConfigError when it is invalid.

    Fast path: stat the sources, and when they are as last seen, open the cache named by the
    content hash remembered for them. Otherwise read and hash the sources (and remember them).
    Then compare the override with the accepted one (one small read of the seal)."""
    managed.present()   # an org file only root can write, or none: else fail closed
    record = seal.read(project_dir)
    seen = signature(_sources(project_dir))
    known = seal.recall_derived(project_dir, MEMO, seen, record)
    cached = (_read_cache(project_dir, cache_path(project_dir, known), record)
              if isinstance(known, str) else None)
    if cached is None:
        default, override, config_hash = read_sources(project_dir)
        path = cache_path(project_dir, config_hash)
        cached = (_read_cache(project_dir, path, record)
                  or rebuild(project_dir, default, override, config_hash, path))
        if known != config_hash:
            from governance.policy import derived

            derived.remember(project_dir, MEMO, seen, config_hash)
    found = cached.get("override_sha256", "")
    if found != seal.accepted_override(record):
        cached = _load_accepted(project_dir, record, found)
    cached["seal"] = record
    error = cached.get("error")
    if error:
        kind = OrgPolicyError if cached.get("file") == org_matrix_path() else ConfigError
        raise kind(error, file=cached.get("file"), key=cached.get("key"),
                   fix="run `governance validate` to see every problem")
    return cached


def accepted_sources(project_dir: str, record: dict[str, Any] | None
                     ) -> tuple[tuple[str, bytes], tuple[str, bytes] | None, str]:
    """The packaged default and the accepted copy of the override (None when no override is
    accepted or its copy is gone), with their content hash."""
    default_path = default_matrix_path()
    default_bytes = _read(default_path)
    if default_bytes is None:
        raise ConfigError("the packaged default activity matrix is missing", file=default_path,
                          fix="reinstall claude-governance or set GOVERNANCE_DEFAULT_MATRIX")
    accepted = seal.accepted_matrix_bytes(project_dir, record)
    digest = sha256(default_bytes)
    digest.update(b"\0override\0")
    if accepted is not None:
        digest.update(accepted)
    _with_org(digest)
    override = None if accepted is None else (seal.matrix_copy_path(project_dir), accepted)
    return (default_path, default_bytes), override, digest.hexdigest()


def _load_accepted(project_dir: str, record: dict[str, Any] | None, found: str
                   ) -> dict[str, Any]:
    """The last accepted matrix, marked with what was not accepted and how to accept it."""
    default, override, config_hash = accepted_sources(project_dir, record)
    path = cache_path(project_dir, config_hash)
    compiled = (_read_cache(project_dir, path, record)
                or rebuild(project_dir, default, override, config_hash, path))
    where = override_matrix_path(project_dir)
    change = ("was removed" if not found else
              f"was written (sha256 {found[:12]})" if not seal.accepted_override(record)
              else f"changed (sha256 {found[:12]})")
    kept = ("the version accepted last" if override is not None else
            "the packaged default alone" + ("" if not seal.accepted_override(record) else
                                           " (the accepted copy is gone too)"))
    compiled["unaccepted"] = (
        f"The activity matrix {where} {change} without `governance validate`, so governance "
        f"does not use it and keeps {kept}. If you made this change, check and accept it from "
        "a terminal: `governance validate`.")
    return compiled


def rebuild(project_dir: str, default: tuple[str, bytes], override: tuple[str, bytes] | None,
            config_hash: str, path: str) -> dict[str, Any]:
    """Validate and compile the sources, then store the result (or the error) in the cache."""
    require_config_libraries(default[0] if override is None else override[0])
    from governance.policy.compiler import compile_matrix

    compiled, problems = compile_matrix(default, override, config_hash, org_source())
    if compiled is None:
        errors = [p for p in problems if p.level == "error"] or problems
        first = errors[0]
        more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
        result: dict[str, Any] = {"error": f"at key {first.key}: {first.message}{more}",
                                  "file": first.file, "key": None}
    else:
        result = compiled
    result["override_sha256"] = seal.digest(override[1]) if override is not None else ""
    result["installation"] = installation_paths()  # resolved once here, not on every call
    write_cache(path, result)
    return result


# Tables of the shell patterns whose entries stay in the cache's bytes until a command needs one:
# a Bash call looks up a handful of names, and unmarshalling every entry costs more than its
# analysis (see ``_shell_bytes``).
LAZY_TABLES = ("commands", "wrappers", "read_only", "lexicon")
# The same for the matrix itself: a call needs one state's summary, one rule of that state's table
# and one tool's mapping. ``decide`` is lazy twice (by state, then by primitive, with the rule's
# file stored as an index into ``rule_files``); ``allowed_in`` is only read when a call is denied.
LAZY_CORE = ("summary", "tools_exact")


class LazyTable(dict):  # type: ignore[type-arg]
    """A table whose values are marshalled bytes, decoded on first use."""

    def _decode(self, value: bytes) -> Any:
        return marshal.loads(value)

    def __getitem__(self, key: str) -> Any:
        value = dict.__getitem__(self, key)
        if type(value) is bytes:
            value = self._decode(value)
            dict.__setitem__(self, key, value)
        return value

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default  # noqa: SIM401 (self.get would recurse)

    def values(self) -> Any:
        return [self[key] for key in self]

    def items(self) -> Any:
        return [(key, self[key]) for key in self]


class RuleTable(LazyTable):
    """One state's rules: primitive -> (action, message, redirect_to, file, key)."""

    files: list[str]

    def _decode(self, value: bytes) -> Any:
        action, message, redirect_to, file_index, key = marshal.loads(value)
        return (action, message, redirect_to, self.files[file_index], key)


class DecideTable(LazyTable):
    """State -> RuleTable. Each state's rules stay marshalled (a span of the file's bytes after
    its header) until a call in that state needs them: one state is decoded, not all."""

    files: list[str]
    path: str
    data: bytes      # the whole file, as checked against the seal

    def _decode(self, value: Any) -> Any:
        start, end = value
        data = self.data[start:end]
        if len(data) != end - start:
            raise ConfigError("the compiled matrix is cut short", file=self.path,
                              fix="retry; the next call compiles it again")
        table = RuleTable(marshal.loads(data))
        table.files = self.files
        return table

    def __getitem__(self, key: str) -> Any:
        value = dict.__getitem__(self, key)
        if type(value) is tuple:
            value = self._decode(value)
            dict.__setitem__(self, key, value)
        return value


def _marshalled(table: dict[str, Any]) -> dict[str, bytes]:
    return {key: marshal.dumps(value) for key, value in table.items()}


def _store_core(value: dict[str, Any]) -> bytes:
    """The core cache file: its tables, and after them each state's rules (``DecideTable``)."""
    files = list(dict.fromkeys([*value["files"], value["default_file"]]))
    core = {k: (_marshalled(v) if k in LAZY_CORE else v) for k, v in value.items()}
    head = marshal.dumps({**core, "decide": {}})   # the spans below shift it: measure first
    states = [marshal.dumps({prim: marshal.dumps((*entry[:3], files.index(entry[3]), entry[4]))
                             for prim, entry in table.items()})
              for table in value["decide"].values()]
    spans: dict[str, tuple[int, int]] = {}
    while True:
        offset = 4 + len(head)
        for state, data in zip(value["decide"], states, strict=True):
            spans[state] = (offset, offset + len(data))
            offset += len(data)
        core.update(format=FORMAT, decide=spans, rule_files=files,
                    allowed_in=marshal.dumps(value["allowed_in"]))
        framed = _framed(core, b"".join(states))
        if int.from_bytes(framed[:4], "little") == len(head):
            return framed
        head = framed[4:4 + int.from_bytes(framed[:4], "little")]


def allowed_states(compiled: dict[str, Any], primitive: str) -> list[str]:
    """The states in which ``primitive`` is not blocked (for a denial's "instead")."""
    table = compiled["allowed_in"]
    if type(table) is bytes:
        table = compiled["allowed_in"] = marshal.loads(table)
    return list(table.get(primitive, []))


def shell_cache_path(path: str) -> str:
    folder, name = system.split(path)
    return system.join(folder, "shell-" + name[len("matrix-"):])


def load_shell(project_dir: str, compiled: dict[str, Any]) -> dict[str, Any] | None:
    """The compiled shell patterns, kept in a file of their own: only Bash calls need them."""
    shell = compiled.get("shell")
    if shell is not True:
        return shell if isinstance(shell, dict) else None
    path = shell_cache_path(cache_path(project_dir, compiled["config_hash"]))
    loaded: Any = None
    held = _HELD.get(path)
    try:
        stat = seal.stat_list(system.stat(path))
        if held is not None and stat == held[0] and seal.trusted_stat(
                compiled.get("seal"), system.basename(path), stat):
            loaded = held[1]
        else:
            found = seal.derived_whole(project_dir, system.basename(path),
                                       compiled.get("seal"))
            if found is not None:
                loaded = _hold(path, found[1], _read_shell(found[0]))
    except (OSError, EOFError, ValueError, TypeError):
        loaded = None
    if loaded is None:
        default, override, config_hash = (
            accepted_sources(project_dir, compiled.get("seal")) if compiled.get("unaccepted")
            else read_sources(project_dir))
        loaded = rebuild(project_dir, default, override, config_hash,
                         cache_path(project_dir, config_hash)).get("shell")
    return loaded if isinstance(loaded, dict) else None


class IndexedTable:
    """A read-only table over the shell cache's bytes: a name is found with one ``str.find`` in
    a text index (``\nNAME\tSTART\tEND``), and its entry decoded on first use."""

    __slots__ = ("blob", "decoded", "index", "missing")

    def __init__(self, index: str, extra: dict[str, Any], blob: memoryview) -> None:
        self.index = index
        self.decoded = extra        # entries decoded so far, and names the index cannot hold
        self.missing: set[str] = set()
        self.blob = blob

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str) or key in self.missing:
            return False
        if key in self.decoded:
            return True
        index = self.index
        at = index.find("\n" + key + "\t") if "\t" not in key and "\n" not in key else -1
        if at < 0:
            self.missing.add(key)
            return False
        _, start, end = index[at + 1:index.find("\n", at + 1)].split("\t")
        self.decoded[key] = marshal.loads(self.blob[int(start):int(end)])
        return True

    def __getitem__(self, key: str) -> Any:
        if key in self:
            return self.decoded[key]
        raise KeyError(key)

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default

    def keys(self) -> list[str]:
        names = [line.split("\t", 1)[0] for line in self.index.split("\n") if line]
        return list(dict.fromkeys([*names, *self.decoded]))

    def __iter__(self) -> Any:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self.keys())

    def __bool__(self) -> bool:   # `table or {}` without listing every key
        return bool(self.decoded) or any(line for line in self.index.split("\n", 2)[:2])

    def items(self) -> list[tuple[str, Any]]:
        return [(key, self[key]) for key in self.keys()]

    def values(self) -> list[Any]:
        return [self[key] for key in self.keys()]


def _shell_bytes(shell: dict[str, Any]) -> bytes:
    """The shell cache: the length of a header, the header (small tables; for each of
    ``LAZY_TABLES`` a text index of its entries' spans), then the entries' marshalled bytes. A
    Bash call decodes the header and the few entries its command names, not the whole file."""
    chunks: list[bytes] = []
    size = 0
    header: dict[str, Any] = {}
    for key, value in shell.items():
        if key not in LAZY_TABLES or not isinstance(value, dict):
            header[key] = value
            continue
        lines = [""]
        extra = {}
        for name, entry in value.items():
            if "\t" in name or "\n" in name:
                extra[name] = entry
                continue
            data = marshal.dumps(entry)
            lines.append(f"{name}\t{size}\t{size + len(data)}")
            chunks.append(data)
            size += len(data)
        header[key] = ("\n".join(lines) + "\n", extra)
    head = marshal.dumps(header)
    return len(head).to_bytes(4, "little") + head + b"".join(chunks)


def _read_shell(data: bytes) -> dict[str, Any]:
    length = int.from_bytes(data[:4], "little")
    loaded = marshal.loads(data[4:4 + length])
    if not isinstance(loaded, dict):
        raise ValueError("the shell cache holds no table")
    blob = memoryview(data)[4 + length:]
    for table in LAZY_TABLES:
        if isinstance(loaded.get(table), tuple):
            index, extra = loaded[table]
            loaded[table] = IndexedTable(index, extra, blob)
    return loaded


KEEP_CACHES = 3  # the matrix in force, the accepted one while a change waits, and one more


def _pruned(folder: str, path: str) -> list[str]:
    """All but the newest compiled matrices (and their shell patterns) besides ``path``."""
    own = {system.basename(path), system.basename(shell_cache_path(path))}
    try:
        cores = sorted((entry for entry in system.scandir(folder)
                        if entry.name.startswith("matrix-") and entry.name not in own),
                       key=lambda entry: entry.stat().st_mtime_ns, reverse=True)
        keep = own | {entry.name for entry in cores[:KEEP_CACHES - 1]}
        keep |= {"shell-" + name[len("matrix-"):] for name in keep if name.startswith("matrix-")}
        return [entry.name for entry in system.scandir(folder)
                if entry.name.startswith(("matrix-", "shell-")) and entry.name not in keep]
    except OSError:
        return []


def write_cache(path: str, value: dict[str, Any]) -> None:
    """Store a compiled matrix (shell patterns apart), keeping a few others, each recorded in the
    seal (``derived``); a read-only project simply keeps no cache."""
    folder = system.dirname(path)
    project_dir = system.dirname(system.dirname(system.dirname(folder)))
    core = value
    files = {}
    shell = value.get("shell")
    if isinstance(shell, dict):
        files[system.basename(shell_cache_path(path))] = _shell_bytes(shell)
        core = {**value, "shell": True}
    files[system.basename(path)] = _store_core(core) if "decide" in core else _framed(core)
    from governance.policy import derived

    derived.store(project_dir, files, settle=files, remove=_pruned(folder, path))
