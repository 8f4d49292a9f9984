"""Where a team server keeps the organisation's signed bundles (``governance.server.org_bundle``
serves them): with a team database, its ``org_bundles`` table (migration 0004, one row per
version, the highest served); without one, ``org-bundle.json`` in the served project's
``.claude/governance/``, replaced atomically under a lock. A version never goes backwards: adding
one at or below the stored version raises :class:`VersionConflict`.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import dataclass
from typing import Any, Protocol

from governance.errors import StorageError
from governance.project import governance_dir, replace_file
from governance.storage.database import database_url

FILE = "org-bundle.json"


class VersionConflict(StorageError):
    """A bundle whose version is not above the stored one's."""

    def __init__(self, message: str, fix: str, version: int, published: int) -> None:
        super().__init__(message, fix=fix)
        self.version = version
        self.published = published

    def extra(self) -> dict[str, Any]:
        return {"version": self.version, "published": self.published}


@dataclass(frozen=True)
class Published:
    """A stored bundle: its version, issue time and exact bytes."""

    version: int
    issued: str
    document: bytes

    @property
    def etag(self) -> str:
        return f'"{hashlib.sha256(self.document).hexdigest()}"'


class Store(Protocol):
    def current(self) -> Published | None:
        """The highest published bundle; None when none is."""

    def add(self, found: Published, by: str) -> None:
        """Store ``found`` when its version is above every stored one (else
        :class:`VersionConflict`)."""


def _backwards(found: Published, have: Published) -> VersionConflict:
    what = ("published already with other content" if found.version == have.version
            else f"older than the published version {have.version}")
    return VersionConflict(f"the bundle is version {found.version}, {what}; a bundle's version "
                           f"never goes backwards, so it is refused and version {have.version} "
                           "stays published",
                           fix=f"sign it again with a version above {have.version} (`governance "
                               f"org sign DIR --version {have.version + 1} ...`)",
                           version=found.version, published=have.version)


class FileStore:
    """The bundle in one file beside the served project's ledger (its exact bytes)."""

    def __init__(self, gov_dir: str) -> None:
        self.path = os.path.join(gov_dir, FILE)
        self.lock = threading.Lock()

    def current(self) -> Published | None:
        try:
            with open(self.path, "rb") as handle:
                data = handle.read()
        except FileNotFoundError:
            return None
        document = json.loads(data)
        return Published(int(document["version"]), str(document["issued"]), data)

    def add(self, found: Published, by: str) -> None:
        from filelock import FileLock

        os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
        with self.lock, FileLock(self.path + ".lock", timeout=10):
            have = self.current()
            if have is not None and found.version <= have.version:
                raise _backwards(found, have)
            replace_file(self.path, found.document, mode=0o644, sync=True)


class PostgresStore:
    """The bundles in the team database's ``org_bundles`` table (one row per version)."""

    def __init__(self, url: str) -> None:
        self.url = url

    def current(self) -> Published | None:
        from governance.storage.pool import borrowed

        with borrowed(self.url) as conn:
            row = conn.execute("SELECT version, issued, document FROM org_bundles "
                               "ORDER BY version DESC LIMIT 1").fetchone()
        return Published(int(row[0]), str(row[1]), bytes(row[2])) if row else None

    def add(self, found: Published, by: str) -> None:
        from governance.storage.pool import borrowed

        with borrowed(self.url) as conn, conn.transaction():
            # one publisher at a time: the check and the insert are one step; readers go on
            conn.execute("LOCK TABLE org_bundles IN SHARE ROW EXCLUSIVE MODE")
            row = conn.execute("SELECT version, issued, document FROM org_bundles "
                               "ORDER BY version DESC LIMIT 1").fetchone()
            if row is not None and found.version <= int(row[0]):
                raise _backwards(found, Published(int(row[0]), str(row[1]), bytes(row[2])))
            conn.execute("INSERT INTO org_bundles (version, issued, document, published_by) "
                         "VALUES (%s, %s, %s, %s)",
                         (found.version, found.issued, found.document, by))


_STORES: dict[str, Store] = {}
_STORES_LOCK = threading.Lock()


def store_for(project: str) -> Store:
    """The served project's bundle store, opened once per process."""
    with _STORES_LOCK:
        found = _STORES.get(project)
        if found is None:
            url = database_url()
            found = _STORES[project] = (PostgresStore(url) if url
                                        else FileStore(governance_dir(project)))
        return found
