"""Consulting knowledge at a tool call: what the call names (:func:`of_call`), reading the
knowledge index (:class:`Index`, built by ``knowledge.indexer``, whose docstring gives the file
format, and the delta of the memories added since, ``knowledge.increment``), which SOPs and
memories apply (:func:`find`), and the outcome (:func:`consult`; the levels at work are
``knowledge.enforcement``). docs/knowledge.md says how each part decides. The builder
(``knowledge.indexer``) is passed in, so that nothing here imports it.

Hot path: ``os``, ``marshal`` and our modules. A call that no knowledge applies to loads only this
module; ``knowledge.enforcement`` loads when something applies. Kept in one module because each
module a hook process loads costs it time.
"""

from __future__ import annotations

import marshal
import time

from governance import system
from governance.policy import seal
from governance.project import cache_file, knowledge_sources, package_root, signature

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Builder = Callable[[str], "Index"]

MAGIC = b"GKI1"
FORMAT = 6
NAME = "knowledge.index"
DELTA_NAME = "knowledge.delta"   # the memories added since the index was built (knowledge.increment)
POSTINGS_MAX = 2000   # entries kept per term (the most confident)
FIRST_READ = 16384
_PUNCTUATION = ("\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14"
                "\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f !\"#$%&'()*+,/:;<=>?@[\\]^`{|}~\x7f")
_SEPARATORS = str.maketrans(_PUNCTUATION, " " * len(_PUNCTUATION))   # ASCII but letters, digits, -_.
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
    """The organisation's SOP folder first (it wins on a name clash), then the project's, then
    the user's."""
    return knowledge_sources(project_dir)[2:5]


def store_paths(project_dir: str) -> list[str]:
    """The memory store (``knowledge.db`` and its write-ahead log) and the decision store's review
    stamp (reviewed patterns are memories)."""
    return knowledge_sources(project_dir)[5:]


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


def command_words(entry: str) -> list[str]:
    """The whole words of an SOP's ``match: commands`` entry, as a call's command words are
    taken (lower case, quotes and brackets trimmed): ``docker-compose`` is one word, and it is not
    the word ``docker``."""
    return [w for w in (w.strip(_STRIP).lower() for w in entry.split()) if w]


def fnv(key: str) -> int:
    """FNV-1a (32 bit) of the key's UTF-8 bytes: the same in every process."""
    value = 0x811C9DC5
    for byte in key.encode():
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value


def bucket_of(key: str, buckets: int) -> int:
    return fnv(key) % buckets


class Index:
    """An open index: the header, and reads of buckets and records on demand."""

    def __init__(self, data: bytes | None, fd: int | None, header: dict[str, Any]) -> None:
        self._data = data
        self._fd = fd
        self.header = header
        self.delta: Index | None = None    # the memories added since (``knowledge.increment``)

    def attach(self, project: str, record: dict[str, Any] | None) -> Index | None:
        """The delta built on this index, when there is one (read only if its file exists,
        checked against the seal as the index is); attached, and returned."""
        entry = seal.derived_entries(record).get(NAME)
        base = entry.get("sha256") if isinstance(entry, dict) else None
        delta = open_delta(project, record, base) if base else None
        if delta is not None:
            self.delta = delta
        return delta

    def empty(self) -> bool:
        """No SOP and no memory (counting the delta's)."""
        return bool((self.delta or self).header["empty"])

    @classmethod
    def open(cls, project: str, record: dict[str, Any] | None) -> Index | None:
        """The project's index, or None when it is missing, not in this format, or not what
        governance recorded in the seal ``record`` when it built it (``policy.derived``; a
        rewritten index is noted, and built again)."""
        try:
            fd = system.open(path(project), system.O_RDONLY | system.O_CLOEXEC)
        except OSError:
            return None
        try:
            if not seal.derived_verified(project, NAME, fd, record):
                system.close(fd)
                return None
            head = system.pread(fd, FIRST_READ, 0)
            header = _header(head, lambda n: system.pread(fd, n, 0))
        except (OSError, EOFError, ValueError, TypeError):
            header = None
        if header is None:
            system.close(fd)
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
            system.close(self._fd)
            self._fd = None
        if self.delta is not None:
            self.delta.close()
            self.delta = None

    def extra(self) -> Any:
        """The builders' section (``knowledge.increment`` reads it; a lookup never does)."""
        start, end = self.header["extra"]
        return marshal.loads(self._read(start, end - start))

    def _read(self, offset: int, size: int) -> bytes:
        if self._data is not None:
            return self._data[offset:offset + size]
        assert self._fd is not None
        return system.pread(self._fd, size, offset)

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
        start, bits = header["filter"]
        for key in keys:
            value = fnv(key)
            bit = value % bits
            if self._read(start + (bit >> 3), 1)[0] >> (bit & 7) & 1:   # else surely absent
                by_bucket.setdefault(value % count, []).append(key)
        found: dict[str, list[int]] = {}
        base, size = header["postings"], header["item_size"]
        for number in sorted(by_bucket):
            start, end = self._span(header["bucket_table"], number)
            if end <= start:
                continue
            bucket = marshal.loads(self._read(start, end - start))
            for key in by_bucket[number]:
                if key in bucket:
                    offset, items = bucket[key]
                    raw = self._read(base + offset, items * size)
                    found[key] = memoryview(raw).cast("I").tolist()
        return found

    def sop(self, number: int) -> dict[str, Any]:
        start, end = self._span(self.header["sop_table"], number)
        record: dict[str, Any] = marshal.loads(self._read(start, end - start))
        return record

    def globs(self, kind: str) -> list[tuple[str, int]]:
        """The SOP match globs of a kind (``host``, ``tool``, ``path``): (glob, SOP number)."""
        span = self.header["glob_spans"].get(kind)
        if span is None:
            return []
        found: list[tuple[str, int]] = marshal.loads(self._read(span[0], span[1] - span[0]))
        return found

    def memory(self, number: int) -> dict[str, Any]:
        start, end = self._span(self.header["memory_table"], number)
        record: dict[str, Any] = marshal.loads(self._read(start, end - start))
        return record


def open_delta(project: str, record: dict[str, Any] | None, base: str) -> Index | None:
    """The delta file, when it exists, holds what the seal recorded for it (a change is noted, as
    for the index) and was built on the index whose sha256 is ``base``; else None."""
    try:
        fd = system.open(cache_file(project, DELTA_NAME), system.O_RDONLY | system.O_CLOEXEC)
    except OSError:
        return None
    header = None
    try:
        if seal.derived_verified(project, DELTA_NAME, fd, record):
            header = _header(system.pread(fd, FIRST_READ, 0), lambda n: system.pread(fd, n, 0))
    except (OSError, EOFError, ValueError, TypeError):
        header = None
    if header is None or header.get("base") != base:
        system.close(fd)
        return None
    return Index(None, fd, header)


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


SYNC_MEMORIES = 5000      # a store this small is rebuilt at once when it changed
BACKGROUND_PAUSE = 60.0   # seconds before another background rebuild may start
NAMED = ("service", "fleet", "technology")
SCORE_NEEDED = 2


CONTEXT_PATH_KEYS = ("file_path", "notebook_path", "path")
REMOTE = ("ssh", "scp", "rsync", "sftp", "mosh")
_SSH_VALUES = frozenset("-" + c for c in "bcDEeFIiJLlmOopQRSWw")   # ssh options with a value
_STRIP = "'\"`()[]{};,<>|&"
COMMAND_WORDS = 4   # a command's words that say what it does (docker compose down SERVICE)


class Context:
    """The call's words and what the detectors made of them (``names``: kind -> names)."""

    __slots__ = ("commands", "hosts", "names", "paths", "ports", "tool", "words")

    def __init__(self) -> None:
        self.tool = ""
        self.words: set[str] = set()
        self.commands: list[str] = []     # each command's first words: program, subcommands
        self.paths: list[str] = []
        self.hosts: set[str] = set()
        self.ports: set[str] = set()
        self.names: dict[str, set[str]] = {}

    def all_names(self) -> set[str]:
        return {n for names in self.names.values() for n in names}

    def found(self, kind: str, name: str, why: str, why_map: dict[str, str] | None) -> None:
        self.names.setdefault(kind, set()).add(name)
        if why_map is not None:
            why_map.setdefault(f"{kind} {name}", why)


def of_call(project: str, tool: str, tool_input: dict[str, Any], cwd: str | None,
            acts: list[dict[str, Any]], detectors: list[dict[str, Any]],
            why: dict[str, str] | None = None) -> Context:
    """The context of one call; ``why`` (when given) gets which word made each name."""
    ctx = Context()
    ctx.tool = tool
    lowered = tool.lower()
    ctx.words.add(lowered)
    if lowered.startswith("mcp__"):
        ctx.words.update(w for w in lowered.split("__")[1:] if w)
    for key in CONTEXT_PATH_KEYS:
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            ctx.paths.append(value)
    url = tool_input.get("url")
    if isinstance(url, str):
        _url(ctx, url)
    command = tool_input.get("command")
    segments = [str(a.get("segment") or "") for a in acts if a.get("segment")]
    if not segments and isinstance(command, str):
        segments = [command]
    for segment in segments:
        _segment(ctx, segment)
    ctx.paths.append(cwd or project)
    ctx.found("project", system.basename(project.rstrip("/")).lower(), "the project folder", why)
    _detect(ctx, detectors, why)
    return ctx


def _segment(ctx: Context, segment: str) -> None:
    words = [w.strip(_STRIP) for w in segment.split()]
    program = ""
    skip = False
    leading = 0
    for word in words:
        if not word:
            continue
        lowered = word.lower()
        if leading < COMMAND_WORDS and not word.startswith("-") and "=" not in word:
            ctx.commands.append(lowered)
            leading += 1
        base = lowered.rsplit("/", 1)[-1]
        if base in REMOTE and not program:
            program = base
        elif "://" in word:
            _url(ctx, word)
        elif "@" in word and not word.startswith("-"):
            _host(ctx, word.split("@", 1)[1].split(":", 1)[0].split("/", 1)[0])
        elif program in ("ssh", "mosh", "sftp") and not skip and not word.startswith("-") and \
                "=" not in word:
            _host(ctx, word.split(":", 1)[0])     # ssh [options] HOST [command]
            program = "-"
        elif program in ("scp", "rsync") and ":" in word and word[:1] not in "/.-":
            _host(ctx, word.split(":", 1)[0])     # scp FILE HOST:PATH
        skip = program in ("ssh", "mosh", "sftp") and word in _SSH_VALUES
        if "/" in word and not word.startswith("-"):
            ctx.paths.append(word)
        for piece in (lowered, base):
            if piece and len(piece) <= 64:
                ctx.words.add(piece)


def _url(ctx: Context, url: str) -> None:
    rest = url.split("://", 1)[1] if "://" in url else url
    authority = rest.split("/", 1)[0].rsplit("@", 1)[-1]
    host, _, port = authority.partition(":")
    _host(ctx, host)
    if port.isdigit():
        ctx.ports.add(port)


def _host(ctx: Context, host: str) -> None:
    host = host.strip("[]").lower()
    if ":" in host and host.count(":") == 1:
        host, port = host.split(":")
        if port.isdigit():
            ctx.ports.add(port)
    if host:
        ctx.hosts.add(host)
        ctx.words.add(host)


def _detect(ctx: Context, detectors: list[dict[str, Any]], why: dict[str, str] | None) -> None:
    for det in detectors:
        kind, name = det["kind"], det["name"]
        word = next((w for w in det["words"] if w in ctx.words), None)
        if word is not None:
            ctx.found(kind, name, f"the word {word!r}", why)
        port = next((p for p in det["ports"] if p in ctx.ports), None)
        if port is not None:
            ctx.found(kind, name, f"the port {port}", why)
        for glob in det["hosts"]:
            host = next((h for h in sorted(ctx.hosts) if glob_match(h, glob)), None)
            if host is not None:
                ctx.found(kind, name, f"the host {host}", why)
        for template in det["paths"]:
            for path in ctx.paths:
                found = _path_name(path, template)
                if found is not None:
                    ctx.found(kind, name.replace("{name}", found) if "{name}" in name else name,
                              f"the path {path}", why)
                    break


def glob_match(value: str, pattern: str) -> bool:
    """fnmatch semantics (``*`` crosses ``/``); the full matcher loads only for ``?`` and ``[``."""
    if "?" in pattern or "[" in pattern:
        from governance.policy.wildcard import match

        return match(value, pattern)
    if "*" not in pattern:
        return value == pattern
    pieces = pattern.split("*")
    if not value.startswith(pieces[0]) or not value.endswith(pieces[-1]) or \
            len(value) < len(pieces[0]) + len(pieces[-1]):
        return False
    pos, limit = len(pieces[0]), len(value) - len(pieces[-1])
    for piece in pieces[1:-1]:
        found = value.find(piece, pos, limit)
        if found < 0:
            return False
        pos = found + len(piece)
    return True


def _path_name(path: str, template: str) -> str | None:
    """The component of ``path`` that ``{name}`` stands for in ``template`` (or, without
    ``{name}``, the path itself when it matches), else None."""
    path = path.lower()
    if "{name}" not in template:
        return path if glob_match(path, template) else None
    left, right = template.split("{name}", 1)
    parts = path.split("/")
    for k in range(1, len(parts)):
        name = parts[k]
        if name and glob_match("/".join(parts[:k]) + "/", left) and \
                glob_match("/" + "/".join(parts[k + 1:]), right or "*"):
            return name
    return None


class Outcome:
    """What the hook does with the knowledge: deny with ``reason``, or add ``context``; ``record``
    goes into the call's ledger record, ``ignored`` are ledger records of their own."""

    __slots__ = ("context", "deny", "ignored", "reason", "record", "system")

    def __init__(self, record: dict[str, Any]) -> None:
        self.deny = False
        self.reason = ""
        self.context = ""
        self.system = ""
        self.record = record
        self.ignored: list[dict[str, Any]] = []


def consult(project: str, data: dict[str, Any], decision: Any, build: Builder,
            sources: object = None, sealed: dict[str, Any] | None = None
            ) -> tuple[Outcome, Found, dict[str, Any]] | None:
    """What applies to a call the matrix lets through: the outcome to fill (``record`` holds the
    lookup's figures), what was found, and the settings; None when there is nothing to consult
    (no knowledge, level disabled). ``knowledge.enforcement`` makes the outcome of what was
    found; ``build`` rebuilds the index (``knowledge.indexer``) when the sources changed. SOPs
    that do not parse are told to the user once per change (``knowledge.notice``). ``sealed``
    is the seal, when the caller has read it."""
    started = time.perf_counter()
    index, cache = current(project, build, sources, sealed)
    notice = ""
    try:
        header = index.header
        settings: dict[str, Any] = header["settings"]
        if settings["level"] == "disabled":
            return None
        if header["problems"]:
            from governance.knowledge.notice import tell

            notice = tell(project, header, data.get("session_id"), sealed)
        if index.empty() and not notice:
            return None
        acts = decision.acts
        primitives = {a["primitive"] for a in acts} | {decision.primitive}
        args = (project, data["tool_name"], data["tool_input"], data.get("cwd"), acts,
                primitives, decision.state.state)
        found = find(index, *args)
        if found.stale:
            index.close()
            index, cache = build(project), "built"
            found = find(index, *args)
    finally:
        index.close()
    record: dict[str, Any] = {"cache": cache, "risk": found.risk,
                              "lookup_ms": round((time.perf_counter() - started) * 1000, 3)}
    outcome = Outcome(record)
    if notice:
        record["sops_skipped"] = len(header["problems"])
        outcome.system = notice
    return outcome, found, settings


class Found:
    """What applies to one call, and why."""

    __slots__ = ("context", "memories", "risk", "sops", "stale", "threshold", "why")

    def __init__(self, context: Context, risk: str, threshold: float) -> None:
        self.context = context
        self.risk = risk
        self.threshold = threshold
        self.sops: list[dict[str, Any]] = []
        self.memories: list[dict[str, Any]] = []
        self.why: dict[str, str] = {}
        self.stale = False     # a matched SOP file changed after the index was built

    def __bool__(self) -> bool:
        return bool(self.sops or self.memories)


def current(project: str, build: Builder, sources: object = None,
            record: dict[str, Any] | None = None) -> tuple[Index, str]:
    """The index for the project's sources as they are, and how it was had: ``hit`` (as stored),
    ``built`` (rebuilt now) or ``stale`` (a large memory store changed: brought up to date in the
    background, this index and delta are the ones before). A ``hit`` may be the index with the
    delta of the memories added since (``index.delta``). ``sources`` is the signature of
    ``project.knowledge_sources`` when the caller has it already; ``build`` builds and stores the
    index (``knowledge.indexer.rebuild_index``); ``record`` is the seal (read when not given)."""
    if record is None:
        record = seal.read(project)
    index = Index.open(project, record)
    if index is not None:
        header = index.header
        seen = header["signature"]
        now = sources if sources is not None else signature(knowledge_sources(project))
        if isinstance(now, tuple) and now[:4] == seen["all"][:4] and (
                not header["watched"] or signature(header["watched"]) == seen["watched"]):
            if now[4:] == seen["all"][4:]:
                return index, "hit"
            # only the memories changed: a delta may hold them (read only when it exists)
            delta = index.attach(project, record)
            if delta is not None and delta.header["signature"] == now:
                return index, "hit"
            if header["memories"] >= SYNC_MEMORIES:
                _rebuild_in_background(project)   # a delta, or a compaction when it is full
                return index, "stale"
        index.close()
    return build(project), "built"


def _rebuild_in_background(project: str) -> None:
    marker = path(project) + ".building"
    try:
        if time.time() - system.stat(marker).st_mtime < BACKGROUND_PAUSE:
            return
    except OSError:
        pass
    try:
        system.close(system.open(marker, system.O_WRONLY | system.O_CREAT | system.O_TRUNC, 0o600))
        system.utime(marker)
        import sys

        devnull = system.open(system.devnull, system.O_RDWR)
        try:
            code = (f"import sys; sys.path.insert(0, {package_root()!r}); "
                    "from governance.knowledge.increment import main; "
                    f"raise SystemExit(main([{project!r}]))")
            system.posix_spawn(sys.executable, [sys.executable, "-I", "-S", "-c", code],
                           system.environment(), setsid=True,
                           file_actions=[(system.POSIX_SPAWN_DUP2, devnull, 0),
                                         (system.POSIX_SPAWN_DUP2, devnull, 1),
                                         (system.POSIX_SPAWN_DUP2, devnull, 2)])
        finally:
            system.close(devnull)
    except OSError:
        pass   # the next call tries again; this one reads the index it has


def risk_of(settings: dict[str, Any], primitives: set[str], words: set[str],
            state: str) -> tuple[str, float]:
    """The call's risk class and the confidence a memory needs for it."""
    risk = settings["risk"]
    critical = risk["critical"]
    if primitives.intersection(critical["primitives"]) or words.intersection(critical["words"]):
        return "critical", critical["threshold"]
    if state in risk["experimental"]["states"]:
        return "experimental", risk["experimental"]["threshold"]
    return "routine", risk["routine"]["threshold"]


def find(index: Index, project: str, tool: str, tool_input: dict[str, Any], cwd: str | None,
         acts: list[dict[str, Any]], primitives: set[str], state: str,
         explain: bool = False) -> Found:
    """The SOPs and memories that apply to the call (``explain`` fills ``why``)."""
    header = index.header
    settings = header["settings"]
    why: dict[str, str] | None = {} if explain else None
    ctx = of_call(project, tool, tool_input, cwd, acts, settings["detectors"], why)
    spoken: dict[str, str] = {}          # term -> the command word it comes from (memories)
    for word in set(ctx.commands):
        for term in terms(word):
            spoken.setdefault(term, word)
    # SOPs match whole command words (a program also by its base name: /usr/bin/docker)
    said = set(ctx.commands) | {w.rsplit("/", 1)[-1] for w in ctx.commands}
    name, threshold = risk_of(settings, primitives, ctx.words | set(spoken), state)
    found = Found(ctx, name, threshold)
    if why is not None:
        found.why.update(why)
    if index.empty():
        return found
    keys, weights = _keys(ctx, project, spoken, said)
    postings = index.postings(set(keys) | set(weights))
    _sops(index, found, ctx, keys, postings, said)
    limit = header["limits"].get(name, 0)
    if index.delta is not None:
        _merged_memories(index, index.delta, found, weights, postings, limit,
                         settings["max_memories"])
    elif limit:
        _memories(index, found, weights, postings, limit, settings["max_memories"])
    return found


def _keys(ctx: Context, project: str, spoken: dict[str, str], said: set[str]
          ) -> tuple[dict[str, str], dict[str, int]]:
    """SOP keys (key -> what it stands for: whole names and words) and memory terms (``m:`` key
    -> weight: names and words also by their parts)."""
    keys: dict[str, str] = {f"t:{ctx.tool.lower()}": f"the tool {ctx.tool}"}
    weights: dict[str, int] = {}
    for kind, names in ctx.names.items():
        for name in names:
            keys[f"k:{kind}:{name}"] = f"{kind} {name}"
            keys[f"any:{name}"] = f"{kind} {name}"
            if kind == "fleet":
                keys[f"h:{name}"] = f"fleet {name}"
            for term in terms(name):
                weight = 2 if kind in NAMED else 1
                weights["m:" + term] = max(weights.get("m:" + term, 0), weight)
    for host in ctx.hosts:
        keys[f"h:{host}"] = f"the host {host}"
        weights.setdefault("m:" + host, 1)
    for word in said:
        keys[f"c:{word}"] = f"the command word {word!r}"
    for term in spoken:
        weights.setdefault("m:" + term, 1)
    root = project.rstrip("/") + "/"
    for path in ctx.paths[:-1]:          # the last one is the working directory
        inside = path[len(root):] if path.startswith(root) else path
        for term in terms(inside):
            weights.setdefault("m:" + term, 1)
    return keys, weights


def _sops(index: Index, found: Found, ctx: Context, keys: dict[str, str],
          postings: dict[str, list[int]], words: set[str]) -> None:
    reasons: dict[int, list[str]] = {}
    for key, said in keys.items():
        for number in postings.get(key, ()):
            reasons.setdefault(number, []).append(key + "\t" + said)
    if index.header["globs"]:
        _globs(index, ctx, reasons)
    for number in sorted(reasons):
        record = index.sop(number)
        because = reasons[number]
        if all(r.startswith("c:") for r in because) and not any(
                set(entry) <= words for entry in record["commands"]):
            continue
        if not _unchanged(record):      # changed since the index was built: rebuild first
            found.stale = True
            return
        record["why"] = sorted({r.split("\t", 1)[1] for r in because})
        found.sops.append(record)


def _globs(index: Index, ctx: Context, reasons: dict[int, list[str]]) -> None:
    """SOPs whose host, tool or path globs match (each kind read only when the call has one)."""
    hosts = sorted(ctx.hosts | ctx.names.get("fleet", set()))
    paths = [p.lower() for p in ctx.paths]
    tool = ctx.tool.lower()
    counts = index.header["globs"]
    for kind, values in (("host", hosts), ("tool", [tool]), ("path", paths)):
        if not values or not counts.get(kind):
            continue
        for glob, number in index.globs(kind):
            if kind == "path":
                hit = next((p for p in values if glob_match(p, glob) or
                            glob_match(p, "*/" + glob)), None)
            else:
                hit = next((v for v in values if glob_match(v, glob)), None)
            if hit is not None:
                reasons.setdefault(number, []).append(f"g:\tthe {kind} {hit} ({glob})")


def _unchanged(record: dict[str, Any]) -> bool:
    stamp = record.get("stamp")
    try:
        st = system.stat(record["path"])
    except OSError:
        return False
    return stamp is not None and (st.st_size, st.st_mtime_ns) == tuple(stamp)


def _memories(index: Index, found: Found, weights: dict[str, int],
              postings: dict[str, list[int]], limit: int, most: int) -> None:
    scores: dict[int, int] = {}
    shared: dict[int, list[str]] = {}
    for key, weight in weights.items():
        numbers = postings.get(key)
        if not numbers:
            continue
        for number in numbers:
            if number >= limit:
                break
            scores[number] = scores.get(number, 0) + weight
            shared.setdefault(number, []).append(key[2:])
    hits = sorted((n for n, s in scores.items() if s >= SCORE_NEEDED),
                  key=lambda n: (-scores[n], n))
    for number in hits[:most]:
        record = index.memory(number)
        record["why"] = sorted(shared[number])
        found.memories.append(record)


def _merged_memories(index: Index, delta: Index, found: Found, weights: dict[str, int],
                     postings: dict[str, list[int]], limit: int, most: int) -> None:
    """``_memories`` over the index and its delta, as over one index built from both: the index's
    memories the delta replaced (``dead``) and the terms that became too common (``dropped``) left
    out, each posting list merged in showing order and cut at ``POSTINGS_MAX``. A delta memory
    comes before the index's memory number ``slots[d]`` (the delta is in showing order too), so
    positions ``n + (delta memories before n)`` and ``slots[d] + d`` order both as a rebuild
    numbers them. References: ``n`` for the index's memories, ``-1 - d`` for the delta's."""
    head = delta.header
    dropped = set(head["dropped"])
    dead = set(head["dead"])
    slots: list[int] = head["slots"]
    below = head["limits"].get(found.risk, 0)
    if not limit and not below:
        return
    extra = delta.postings({k for k in weights if k not in dropped})
    scores: dict[int, int] = {}
    shared: dict[int, list[str]] = {}
    refs: dict[int, int] = {}
    for key, weight in weights.items():
        if key in dropped:
            continue
        merged: list[tuple[int, int]] = []
        ahead = 0
        for number in postings.get(key, ()):
            if number in dead:
                continue
            while ahead < len(slots) and slots[ahead] <= number:
                ahead += 1
            merged.append((number + ahead, number))
        merged.extend((slots[d] + d, -1 - d) for d in extra.get(key, ()))
        merged.sort()
        for position, ref in merged[:POSTINGS_MAX]:
            if ref >= limit if ref >= 0 else -1 - ref >= below:
                continue
            scores[position] = scores.get(position, 0) + weight
            shared.setdefault(position, []).append(key[2:])
            refs[position] = ref
    hits = sorted((p for p, s in scores.items() if s >= SCORE_NEEDED),
                  key=lambda p: (-scores[p], p))
    for position in hits[:most]:
        ref = refs[position]
        record = index.memory(ref) if ref >= 0 else delta.memory(-1 - ref)
        record["why"] = sorted(shared[position])
        found.memories.append(record)
