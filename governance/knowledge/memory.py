"""Memories: short texts the team wants an agent to know, in the project's embedded store.

``<project>/.claude/governance/knowledge.db`` (SQLite, WAL, owner-only) holds each memory with its
categories (``process``, ``technical``, ``security``, ``gotchas``, ``credentials``), a confidence
in 0..1, a source and the time it was written. The same text is stored once (a digest of its
normalised words is unique), so importing a file twice adds nothing.

Reviewed decisions count as memories too (:func:`decision_memories`): one per pattern, its
confidence the share of the pattern's reviewed outcomes that succeeded (partial counts half).

Cold path: used by ``governance memory`` and when the knowledge index is built.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from governance import system
from governance.errors import GovernanceError
from governance.knowledge.settings import CATEGORIES
from governance.project import governance_dir, open_private_db

DB_NAME = "knowledge.db"
SCHEMA_VERSION = 2
MAX_TEXT = 2000
# ``removals`` counts the memories removed or changed (by us or by any SQLite client): while it
# holds, the memories the knowledge index was built from are all still there (knowledge.increment)
SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, digest TEXT NOT NULL UNIQUE,
    text TEXT NOT NULL, categories TEXT NOT NULL, confidence REAL NOT NULL,
    source TEXT NOT NULL, created_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS removals (n INTEGER NOT NULL);
INSERT INTO removals SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM removals);
CREATE TRIGGER IF NOT EXISTS memory_removed AFTER DELETE ON memories
    BEGIN UPDATE removals SET n = n + 1; END;
CREATE TRIGGER IF NOT EXISTS memory_changed AFTER UPDATE ON memories
    BEGIN UPDATE removals SET n = n + 1; END;
"""


class MemoryInputError(GovernanceError):
    """A memory, or a file to import memories from, is not what it must be."""

    exit_code = 2


@dataclass
class Memory:
    id: str
    text: str
    categories: list[str]
    confidence: float
    source: str
    created_at: float

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "text": self.text, "categories": self.categories,
                "confidence": self.confidence, "source": self.source,
                "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.created_at))}


def db_path(project_dir: str) -> str:
    return system.join(governance_dir(project_dir), DB_NAME)


def digest(text: str) -> str:
    return hashlib.sha256(" ".join(text.lower().split()).encode()).hexdigest()


def check(text: object, categories: object, confidence: object, where: str = "") -> tuple[
        str, list[str], float]:
    """A memory's fields, validated; raises MemoryInputError naming what is wrong."""
    at = f" ({where})" if where else ""
    if not isinstance(text, str) or not text.strip():
        raise MemoryInputError(f"a memory needs a text{at}", key="text",
                               fix="give the memory's text")
    text = text.strip()
    if len(text) > MAX_TEXT:
        raise MemoryInputError(f"the memory is longer than {MAX_TEXT} characters{at}",
                               key="text", fix="split it into shorter memories")
    listed = [categories] if isinstance(categories, str) else categories
    if not isinstance(listed, list) or not listed or not all(
            isinstance(c, str) and c in CATEGORIES for c in listed):
        raise MemoryInputError(f"categories must be among {', '.join(CATEGORIES)}, got "
                               f"{categories!r}{at}", key="categories",
                               fix="give one or more of the categories")
    if isinstance(confidence, bool) or not isinstance(confidence, int | float) or \
            not 0 <= confidence <= 1:
        raise MemoryInputError(f"confidence must be a number from 0 to 1, got {confidence!r}{at}",
                               key="confidence", fix="give a confidence such as 0.8")
    return text, sorted(set(listed)), float(confidence)


class MemoryStore:
    """Add, read and remove memories in one SQLite file."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.db = open_private_db(path, SCHEMA, SCHEMA_VERSION)

    @classmethod
    def for_project(cls, project_dir: str) -> MemoryStore:
        return cls(db_path(project_dir))

    @staticmethod
    def exists(project_dir: str) -> bool:
        return system.exists(db_path(project_dir))

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add_many(self, items: Iterable[tuple[str, list[str], float, str, float | None]]
                 ) -> tuple[list[str], int]:
        """Insert (text, categories, confidence, source, created_at) in one transaction; returns
        the new ids and how many were already there (same text)."""
        added: list[str] = []
        skipped = 0
        cursor = self.db.cursor()
        cursor.execute("BEGIN IMMEDIATE")
        try:
            for text, categories, confidence, source, created in items:
                key = digest(text)
                if cursor.execute("SELECT 1 FROM memories WHERE digest = ?", (key,)).fetchone():
                    skipped += 1
                    continue
                while True:
                    memory_id = "mem-" + system.urandom(5).hex()
                    if not cursor.execute("SELECT 1 FROM memories WHERE id = ?",
                                          (memory_id,)).fetchone():
                        break
                cursor.execute(
                    "INSERT INTO memories (id, digest, text, categories, confidence, source, "
                    "created_at) VALUES (?,?,?,?,?,?,?)",
                    (memory_id, key, text, json.dumps(categories), confidence, source[:200],
                     time.time() if created is None else created))
                added.append(memory_id)
            cursor.execute("COMMIT")
        except BaseException:
            cursor.execute("ROLLBACK")
            raise
        return added, skipped

    def add(self, text: str, categories: list[str], confidence: float, source: str) -> str | None:
        """The new memory's id, or None when the same text is already stored."""
        added, _ = self.add_many([(text, categories, confidence, source, None)])
        return added[0] if added else None

    def snapshot(self) -> tuple[list[Memory], dict[str, Any]]:
        """Every memory, and the store's mark as they were read (one read transaction)."""
        self.db.execute("BEGIN")
        try:
            memories = list(self.all())
            return memories, self.mark()
        finally:
            self.db.execute("COMMIT")

    def mark(self) -> dict[str, Any]:
        """What says that no memory up to now was removed or changed: the highest ``seq``, the id
        stored under it and the count of removals (``knowledge.increment`` compares them)."""
        removed = int(self.db.execute("SELECT n FROM removals").fetchone()[0])
        row = self.db.execute("SELECT seq, id FROM memories ORDER BY seq DESC LIMIT 1").fetchone()
        if row is None:
            return {"seq": 0, "last": "", "removed": removed}
        return {"seq": int(row[0]), "last": row[1], "removed": removed}

    def since(self, mark: dict[str, Any], seen: dict[str, Any] | None = None
              ) -> tuple[list[Memory], bool, dict[str, Any]] | None:
        """The memories added after ``mark`` (oldest first), or None when a memory was removed or
        changed since. With ``seen`` (a later mark: those after ``mark`` already read), only those
        after ``seen`` when it still holds (True), else all (False). Then the store's mark (the
        next call's ``seen``). One read transaction."""
        self.db.execute("BEGIN")
        try:
            now = self.mark()
            if not self._holds(mark, now):
                return None
            again = seen is not None and self._holds(seen, now)
            start = max(mark["seq"], seen["seq"]) if seen is not None and again else mark["seq"]
            found = [_memory(row) for row in self.db.execute(
                f"SELECT {_COLUMNS} FROM memories WHERE seq > ? ORDER BY seq", (start,))]
            return found, again, now
        finally:
            self.db.execute("COMMIT")

    def _holds(self, mark: dict[str, Any], now: dict[str, Any]) -> bool:
        """Whether no memory was removed or changed since ``mark`` (two lookups, whatever the
        store's size)."""
        if mark.get("removed") != now["removed"]:
            return False
        if not mark["seq"]:
            return True
        row = self.db.execute("SELECT id FROM memories WHERE seq = ?", (mark["seq"],)).fetchone()
        return row is not None and row[0] == mark["last"]

    def get(self, memory_id: str) -> Memory | None:
        row = self.db.execute(f"SELECT {_COLUMNS} FROM memories WHERE id = ?",
                              (memory_id,)).fetchone()
        return _memory(row) if row else None

    def remove(self, memory_id: str) -> bool:
        return self.db.execute("DELETE FROM memories WHERE id = ?", (memory_id,)).rowcount > 0

    def count(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM memories").fetchone()[0])

    def list(self, category: str | None = None, text: str | None = None,
             limit: int | None = None) -> list[Memory]:
        sql = f"SELECT {_COLUMNS} FROM memories"
        where, params = [], []
        if category:
            where.append("categories LIKE ?")
            params.append(f'%"{category}"%')
        if text:
            where.append("instr(lower(text), lower(?)) > 0")
            params.append(text)
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY created_at DESC, seq DESC"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        return [_memory(row) for row in self.db.execute(sql, params)]

    def all(self) -> Iterator[Memory]:
        for row in self.db.execute(f"SELECT {_COLUMNS} FROM memories ORDER BY seq"):
            yield _memory(row)


_COLUMNS = "id, text, categories, confidence, source, created_at"


def _memory(row: Any) -> Memory:
    return Memory(row[0], row[1], json.loads(row[2]), float(row[3]), row[4], float(row[5]))


# -- import --------------------------------------------------------------------------------------
def read_import(path: str, categories: list[str] | None, confidence: float | None
                ) -> list[tuple[str, list[str], float, str, float | None]]:
    """Memories from a file: our JSONL export (one memory per line) or the MCP memory server's
    ``memory.jsonl`` (entities with observations, relations). Each line is checked; the first bad
    one raises MemoryInputError naming the file and line. ``categories`` and ``confidence`` fill
    what a line does not say (defaults: technical, 0.7)."""
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except FileNotFoundError:
        raise MemoryInputError("no such file", file=path, fix="give the path of a JSONL file") \
            from None
    except (OSError, UnicodeDecodeError) as exc:
        raise MemoryInputError(f"cannot read the file ({exc})", file=path,
                               fix="give a readable UTF-8 JSONL file") from None
    default_categories = categories or ["technical"]
    default_confidence = 0.7 if confidence is None else confidence
    source = f"import:{system.basename(path)}"
    items: list[tuple[str, list[str], float, str, float | None]] = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"line {number}"
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as exc:
            raise MemoryInputError(f"{where} is not JSON ({exc.msg})", file=path,
                                   fix="give one JSON object per line") from None
        if not isinstance(entry, dict):
            raise MemoryInputError(f"{where} is not a JSON object", file=path,
                                   fix="give one JSON object per line")
        for text, cats, conf, src, created in _entries(entry, where, path, source):
            text, cats, conf = check(text, cats or default_categories,
                                     default_confidence if conf is None else conf,
                                     f"{path} {where}")
            items.append((text, cats, conf, src, created))
    return items


def _entries(entry: dict[str, Any], where: str, path: str, source: str
             ) -> list[tuple[Any, Any, Any, str, float | None]]:
    kind = entry.get("type")
    if kind == "entity":   # the MCP memory server: {"type","name","entityType","observations"}
        name = str(entry.get("name") or "").strip()
        observations = entry.get("observations")
        if not name or not isinstance(observations, list):
            raise MemoryInputError(f"{where}: an entity needs a name and a list of observations",
                                   file=path, fix="export the memory server's graph again")
        label = f"{name} ({entry['entityType']})" if entry.get("entityType") else name
        return [(f"{label}: {obs}", None, None, f"mcp-memory:{name}", None)
                for obs in observations if isinstance(obs, str) and obs.strip()]
    if kind == "relation":
        parts = [str(entry.get(k) or "").strip() for k in ("from", "relationType", "to")]
        if not all(parts):
            raise MemoryInputError(f"{where}: a relation needs from, relationType and to",
                                   file=path, fix="export the memory server's graph again")
        return [(" ".join(parts), None, None, "mcp-memory:relation", None)]
    if "text" in entry:    # our export
        created = entry.get("created_at")
        when: float | None = None
        if isinstance(created, str):
            try:
                import calendar

                when = float(calendar.timegm(time.strptime(created, "%Y-%m-%dT%H:%M:%SZ")))
            except ValueError:
                when = None
        return [(entry.get("text"), entry.get("categories"), entry.get("confidence"),
                 str(entry.get("source") or source), when)]
    raise MemoryInputError(f"{where} is neither a memory (text) nor an MCP memory entity or "
                           "relation", file=path,
                           fix="give lines of `governance memory export`, or the MCP memory "
                               "server's memory.jsonl")


def export_lines(store: MemoryStore) -> Iterator[str]:
    for memory in store.all():
        yield json.dumps(memory.as_json(), ensure_ascii=False)


# -- reviewed decisions ----------------------------------------------------------------------------
REVIEWED_PATTERNS = ("SELECT pattern, category, outcome, count(*), max(reviewed_at) FROM decisions "
                     "WHERE outcome IN ('success', 'partial', 'failure') AND pattern != '' {}"
                     "GROUP BY pattern, category, outcome")


def _reviewed_patterns(project_dir: str) -> list[tuple[str, str, str, int, float | None]]:
    """The reviewed decisions counted by pattern, category and outcome: from the project's
    SQLite store, or its rows in the team's database (``GOVERNANCE_DATABASE_URL``). A store
    that is missing or cannot be read has none."""
    from governance.storage.database import database_url

    url = database_url()
    if url is not None:
        from governance.errors import StorageError
        from governance.storage.database import project_id

        try:
            import psycopg
        except ImportError:   # the team extra is missing: the commands that need it say so
            return []
        from governance.storage.pool import borrowed

        try:
            with borrowed(url) as conn:
                return [tuple(row) for row in conn.execute(
                    REVIEWED_PATTERNS.format("AND project_id = %s "),
                    (project_id(project_dir),)).fetchall()]
        except (StorageError, psycopg.Error):
            return []
    path = system.join(governance_dir(project_dir), "decisions.db")
    if not system.exists(path):
        return []
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10.0)
    try:
        return db.execute(REVIEWED_PATTERNS.format("")).fetchall()
    except sqlite3.DatabaseError:
        return []
    finally:
        db.close()


def decision_memories(project_dir: str) -> list[Memory]:
    """One memory per pattern of reviewed decisions (abandoned ones left out)."""
    rows = _reviewed_patterns(project_dir)
    grouped: dict[str, dict[str, Any]] = {}
    for pattern, category, outcome, count, reviewed in rows:
        entry = grouped.setdefault(pattern, {"counts": {}, "categories": set(), "at": 0.0})
        entry["counts"][outcome] = entry["counts"].get(outcome, 0) + count
        entry["categories"].add(category)
        entry["at"] = max(entry["at"], reviewed or 0.0)
    memories = []
    for pattern, entry in sorted(grouped.items()):
        counts = entry["counts"]
        total = sum(counts.values())
        score = (counts.get("success", 0) + 0.5 * counts.get("partial", 0)) / total
        said = ", ".join(f"{counts[k]} {k}" for k in ("success", "partial", "failure")
                         if counts.get(k))
        memories.append(Memory(
            "dec-" + hashlib.sha256(pattern.encode()).hexdigest()[:10],
            f"{pattern} (reviewed decisions: {said})", ["process"], round(score, 3),
            "decisions:" + ",".join(sorted(entry["categories"])), entry["at"]))
    return memories
