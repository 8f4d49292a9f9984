"""Which SOPs and memories apply to a tool call, read from the knowledge index.

Hot path (``os``, ``marshal`` and our modules). :func:`current` opens the index and checks its
signature against the sources (a handful of ``stat`` calls); a change of the settings or the SOPs
is rebuilt at once, a change of a large memory store in the background while this call reads the
index it has. :func:`find` turns the call's context into keys and reads only their buckets.

- An SOP applies when one of its ``match:`` entries names what the call names: a project, service or
  technology a detector found, a host (or fleet) the call reaches, the tool, a command (all of its
  words among the call's command words) or a path glob; an SOP without ``match:`` when a part of
  its file name is a detected name.
- A memory applies when it shares enough with the call: a detected name (other than the project's)
  counts 2, each other word 1 (command words, hosts, file paths below the project, the project's
  name), and 2 are needed. Only memories at least as confident as the call's risk class asks are
  considered (critical, experimental, routine: ``risk`` in the settings). The best matches are
  shown first, then the most confident.
"""

from __future__ import annotations

import os
import time

from governance.knowledge import index as index_module
from governance.knowledge.context import Context, of_call
from governance.knowledge.index import Index, terms
from governance.project import package_root, signature

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SYNC_MEMORIES = 5000      # a store this small is rebuilt at once when it changed
BACKGROUND_PAUSE = 60.0   # seconds before another background rebuild may start
NAMED = ("service", "fleet", "technology")
SCORE_NEEDED = 2


class Found:
    """What applies to one call, and why."""

    __slots__ = ("context", "memories", "risk", "sops", "threshold", "why")

    def __init__(self, context: Context, risk: str, threshold: float) -> None:
        self.context = context
        self.risk = risk
        self.threshold = threshold
        self.sops: list[dict[str, Any]] = []
        self.memories: list[dict[str, Any]] = []
        self.why: dict[str, str] = {}

    def __bool__(self) -> bool:
        return bool(self.sops or self.memories)


def current(project: str) -> tuple[Index, str]:
    """The index for the project's sources as they are, and how it was had: ``hit`` (as stored),
    ``built`` (rebuilt now) or ``stale`` (a large memory store changed: rebuilding in the
    background, this index is the one before)."""
    index = Index.open(index_module.path(project))
    if index is not None:
        header = index.header
        seen = header["signature"]
        sources = signature([*index_module.settings_paths(project),
                             *index_module.sop_dirs(project), *header["watched"]])
        if sources is not None and sources == seen["sources"]:
            stores = signature(index_module.store_paths(project))
            if stores is not None and stores == seen["stores"]:
                return index, "hit"
            if header["memories"] >= SYNC_MEMORIES:
                _rebuild_in_background(project)
                return index, "stale"
        index.close()
    from governance.knowledge.indexer import rebuild

    return rebuild(project)[0], "built"


def _rebuild_in_background(project: str) -> None:
    marker = index_module.path(project) + ".building"
    try:
        if time.time() - os.stat(marker).st_mtime < BACKGROUND_PAUSE:
            return
    except OSError:
        pass
    try:
        os.close(os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600))
        os.utime(marker)
        import sys

        devnull = os.open(os.devnull, os.O_RDWR)
        try:
            code = (f"import sys; sys.path.insert(0, {package_root()!r}); "
                    "from governance.knowledge.indexer import main; "
                    f"raise SystemExit(main([{project!r}]))")
            os.posix_spawn(sys.executable, [sys.executable, "-I", "-S", "-c", code],
                           dict(os.environ), setsid=True,
                           file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 0),
                                         (os.POSIX_SPAWN_DUP2, devnull, 1),
                                         (os.POSIX_SPAWN_DUP2, devnull, 2)])
        finally:
            os.close(devnull)
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
    command_terms = terms(" ".join(ctx.commands))
    name, threshold = risk_of(settings, primitives, ctx.words | command_terms, state)
    found = Found(ctx, name, threshold)
    if why is not None:
        found.why.update(why)
    if header["empty"]:
        return found
    keys, weights = _keys(ctx, project, command_terms)
    postings = index.postings(set(keys) | set(weights))
    _sops(index, found, ctx, keys, postings, command_terms)
    limit = header["limits"].get(name, 0)
    if limit:
        _memories(index, found, weights, postings, limit, settings["max_memories"])
    return found


def _keys(ctx: Context, project: str, command_terms: set[str]
          ) -> tuple[dict[str, str], dict[str, int]]:
    """SOP keys (key -> what it stands for) and memory terms (``m:`` key -> weight)."""
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
    spoken = {t: word for word in ctx.commands for t in terms(word)}
    for word in command_terms:
        keys[f"c:{word}"] = f"the command word {spoken.get(word, word)!r}"
        weights.setdefault("m:" + word, 1)
    root = project.rstrip("/") + "/"
    for path in ctx.paths[:-1]:          # the last one is the working directory
        inside = path[len(root):] if path.startswith(root) else path
        for term in terms(inside):
            weights.setdefault("m:" + term, 1)
    return keys, weights


def _sops(index: Index, found: Found, ctx: Context, keys: dict[str, str],
          postings: dict[str, list[int]], command_terms: set[str]) -> None:
    reasons: dict[int, list[str]] = {}
    for key, said in keys.items():
        for number in postings.get(key, ()):
            reasons.setdefault(number, []).append(key + "\t" + said)
    globs = index.header["globs"]
    if globs:
        _globs(ctx, globs, reasons)
    for number in sorted(reasons):
        record = index.sop(number)
        because = reasons[number]
        if all(r.startswith("c:") for r in because) and not any(
                set(words) <= command_terms for words in record["commands"]):
            continue
        if not _unchanged(record):
            raise Stale(record["path"])
        record["why"] = sorted({r.split("\t", 1)[1] for r in because})
        found.sops.append(record)


def _globs(ctx: Context, globs: list[tuple[str, str, int]], reasons: dict[int, list[str]]
           ) -> None:
    from governance.policy.wildcard import match

    hosts = sorted(ctx.hosts | ctx.names.get("fleet", set()))
    paths = [p.lower() for p in ctx.paths]
    tool = ctx.tool.lower()
    for kind, glob, number in globs:
        if kind == "host":
            hit = next((h for h in hosts if match(h, glob)), None)
        elif kind == "tool":
            hit = tool if match(tool, glob) else None
        else:
            hit = next((p for p in paths if match(p, glob) or match(p, "*/" + glob)), None)
        if hit is not None:
            reasons.setdefault(number, []).append(f"g:\tthe {kind} {hit} ({glob})")


def _unchanged(record: dict[str, Any]) -> bool:
    stamp = record.get("stamp")
    try:
        st = os.stat(record["path"])
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


class Stale(Exception):
    """A matched SOP file changed after the index was built (its folder is not watched)."""
