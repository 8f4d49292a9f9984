"""Which database: the URL a command was given (``--database``) or the environment's
(``GOVERNANCE_DATABASE_URL``), shown without its password, and the id a project's rows carry in a
shared database.

No URL means SQLite: each project's own ``.claude/governance/decisions.db``, as before.
"""

from __future__ import annotations

import os
import re

from governance.errors import StorageError

ENV = "GOVERNANCE_DATABASE_URL"
PROJECT_ENV = "GOVERNANCE_PROJECT_ID"
SCHEMES = ("postgresql", "postgres")
PROJECT_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def database_url(explicit: str | None = None) -> str | None:
    """``explicit`` (a ``--database`` option), else ``GOVERNANCE_DATABASE_URL``, else None
    (SQLite). Raises :class:`StorageError` for a URL that is not PostgreSQL's."""
    url = explicit or os.environ.get(ENV) or None
    if url is None:
        return None
    from urllib.parse import urlsplit

    if urlsplit(url).scheme not in SCHEMES:
        source = "--database" if explicit else ENV
        raise StorageError(f"{source} is {masked(url)!r}, not a PostgreSQL URL",
                           fix="give a URL like postgresql://user@host:5432/governance, or "
                               f"unset {ENV} to keep each project's SQLite file")
    return url


def require_driver() -> None:
    """Raise a :class:`StorageError` naming the fix when the ``team`` extra (psycopg 3 and
    psycopg-pool) is not installed."""
    try:
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    except ImportError as exc:
        raise StorageError(f"a PostgreSQL database was asked for, but {exc.name or 'psycopg'} "
                           "is not installed",
                           fix="install the team extra: pip install 'claude-governance[team]' "
                               f"(or unset {ENV} to keep each project's SQLite file)") from None


def masked(url: str) -> str:
    """``url`` with its password (in the address or as ``?password=``) replaced by ``***``."""
    from urllib.parse import parse_qsl, urlencode, urlsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unreadable URL>"
    netloc = parts.netloc
    if "@" in netloc:
        who, host = netloc.rsplit("@", 1)
        if ":" in who:
            who = who.split(":", 1)[0] + ":***"
        netloc = f"{who}@{host}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, "***" if k.lower() == "password" else v) for k, v in pairs],
                          safe="/:*")
    return (f"{parts.scheme}://{netloc}{parts.path}" + (f"?{query}" if query else "")
            + (f"#{parts.fragment}" if parts.fragment else ""))


def project_id(project_dir: str) -> str:
    """The id of a project's rows in a shared database: ``GOVERNANCE_PROJECT_ID`` when set (so
    the clones of one repository on several machines share their decisions), else the project
    folder's name and a short hash of its absolute path (``shop-api-3f2a9c1e``)."""
    chosen = os.environ.get(PROJECT_ENV)
    if chosen:
        if not PROJECT_ID.fullmatch(chosen):
            raise StorageError(f"{PROJECT_ENV} is {chosen!r}, not a project id",
                               fix="use letters, digits, '.', '_' and '-' (at most 100), "
                                   "starting with a letter or digit")
        return chosen
    import hashlib

    path = os.path.realpath(project_dir)
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", os.path.basename(path)).strip("-._")[:80]
    return f"{name or 'project'}-{hashlib.sha256(path.encode()).hexdigest()[:8]}"
