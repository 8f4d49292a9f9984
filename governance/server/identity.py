"""Per-agent credentials: tokens minted for one agent with a role and a scope, stored hashed,
listable, revocable and expiring; and the :class:`Caller` an authenticated request carries into
the CSTP methods (picklable: worker processes receive it).

A token is 32 random bytes (256 bits). Only its SHA-256 is stored: a fast hash is enough because
the token is not a password a person chose — nobody can guess it or search a dictionary for it,
so a slow hash (bcrypt, scrypt) would only slow every lookup. Verifying looks the hash up (an
index or a dict), so no comparison of secrets runs in time that depends on them.

Where tokens live: with a team database (``GOVERNANCE_DATABASE_URL``) in its ``tokens`` table
(migration 0002); without one, in the project's ``.claude/governance/tokens.json`` (0600, written
atomically). The project's own server token (:mod:`governance.server.credential`) stays valid and
acts as a local admin of that project.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from governance.errors import GovernanceError
from governance.project import governance_dir, replace_file
from governance.server.credential import new_token
from governance.server.token_watch import TokenWatch

FILE = "tokens.json"
DEFAULT_EXPIRY = "90d"
AGENT_METHODS = ("cstp.preAction", "cstp.checkGuardrails", "cstp.queryDecisions",
                 "cstp.recordDecision", "cstp.getCalibration", "cstp.getSessionContext")
# Each role may call what the one before it may, and more; admin may call everything.
ROLES: dict[str, frozenset[str] | None] = {
    "agent": frozenset(AGENT_METHODS),
    "reviewer": frozenset((*AGENT_METHODS, "cstp.reviewDecision")),
    "admin": None,
}
DURATION = re.compile(r"(\d{1,6})([dhm])")
UNITS = {"d": 86400, "h": 3600, "m": 60}


class IdentityError(GovernanceError):
    """A token cannot be minted, revoked or read as asked."""


@dataclass(frozen=True)
class Caller:
    """Who an authenticated request is: ``key`` is what the rate limit and the audit key on
    (``agent:<name>`` for a minted token, ``bearer:<hash prefix>`` for the project's token)."""

    key: str
    role: str = "admin"
    project: str | None = None     # the project id a scoped token acts in; None: team-wide
    agent: str | None = None       # a minted token's agent name
    named: str | None = None       # the project the request names (``X-Governance-Project``)

    def may(self, method: str) -> bool:
        allowed = ROLES.get(self.role)
        return allowed is None or method in allowed

    @property
    def team(self) -> bool:
        """A minted team-wide token: it sees every project's decisions."""
        return self.agent is not None and self.project is None


@dataclass(frozen=True)
class Token:
    """One stored token, without the token."""

    token_hash: str
    agent: str
    role: str
    project_id: str | None
    created_at: float
    expires_at: float | None
    revoked_at: float | None = None

    def valid(self, now: float) -> bool:
        return self.revoked_at is None and (self.expires_at is None or now < self.expires_at)

    def caller(self) -> Caller:
        return Caller(f"agent:{self.agent}", self.role, self.project_id, self.agent)


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


def expiry(text: str, now: float) -> float | None:
    """``30d``, ``12h``, ``45m`` from ``now``; ``never``: None."""
    if text == "never":
        return None
    match = DURATION.fullmatch(text.strip())
    if not match:
        raise IdentityError(f"--expires is {text!r}, not a duration",
                            fix="give e.g. 30d, 12h, 45m or never")
    return now + int(match[1]) * UNITS[match[2]]


class Tokens(Protocol):
    def add(self, token: Token) -> None: ...

    def find(self, token_hash: str) -> Token | None: ...

    def all(self) -> list[Token]: ...

    def revoke(self, agent: str, now: float) -> int:
        """Revoke every live token of ``agent``; how many."""


class FileTokens:
    """A project's tokens in ``tokens.json`` (one project, no team database)."""

    def __init__(self, project: str) -> None:
        self.path = os.path.join(governance_dir(project), FILE)

    def all(self) -> list[Token]:
        try:
            with open(self.path, encoding="utf-8") as handle:
                rows = json.load(handle)
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as exc:
            raise IdentityError(f"the token file cannot be read: {exc}", file=self.path,
                                fix="restore it, or delete it and mint the tokens again") from None
        return [Token(**row) for row in rows]

    def _write(self, tokens: list[Token]) -> None:
        os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
        replace_file(self.path, json.dumps([asdict(t) for t in tokens], indent=1).encode())

    def add(self, token: Token) -> None:
        self._write([*self.all(), token])

    def find(self, token_hash: str) -> Token | None:
        return next((t for t in self.all() if t.token_hash == token_hash), None)

    def revoke(self, agent: str, now: float) -> int:
        tokens = self.all()
        changed = [Token(**{**asdict(t), "revoked_at": now})
                   if t.agent == agent and t.revoked_at is None else t for t in tokens]
        count = sum(1 for a, b in zip(tokens, changed, strict=True) if a != b)
        if count:
            self._write(changed)
        return count


class DatabaseTokens:
    """The team's tokens in its PostgreSQL ``tokens`` table (parameters only, never text in SQL)."""

    COLUMNS = "token_hash, agent, role, project_id, created_at, expires_at, revoked_at"

    def __init__(self, url: str) -> None:
        self.url = url

    def _rows(self, where: str, params: tuple[Any, ...]) -> list[Token]:
        from governance.storage.pool import pool

        with pool(self.url).connection() as conn:
            found = conn.execute(f"SELECT {self.COLUMNS} FROM tokens {where}", params).fetchall()
        return [Token(*row) for row in found]

    def add(self, token: Token) -> None:
        from governance.storage.pool import pool

        with pool(self.url).connection() as conn:
            conn.execute(f"INSERT INTO tokens ({self.COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                         tuple(asdict(token).values()))

    def find(self, token_hash: str) -> Token | None:
        found = self._rows("WHERE token_hash = %s", (token_hash,))
        return found[0] if found else None

    def all(self) -> list[Token]:
        return self._rows("ORDER BY created_at", ())

    def revoke(self, agent: str, now: float) -> int:
        from governance.storage.pool import pool

        with pool(self.url).connection() as conn:
            done = conn.execute("UPDATE tokens SET revoked_at = %s WHERE agent = %s AND "
                                "revoked_at IS NULL", (now, agent))
            return int(done.rowcount or 0)


def tokens_for(project: str, url: str | None) -> Tokens:
    """The token store a server of ``project`` reads: the team database's, else the project's."""
    return DatabaseTokens(url) if url else FileTokens(project)


def mint(tokens: Tokens, agent: str, role: str, project_id: str | None,
         expires: str = DEFAULT_EXPIRY, now: float | None = None) -> tuple[str, Token]:
    """A new token for ``agent`` (returned once; only its hash is stored) and its stored row."""
    if role not in ROLES:
        raise IdentityError(f"--role is {role!r}", fix=f"use one of {', '.join(ROLES)}")
    if not agent.strip() or len(agent) > 200:
        raise IdentityError("--agent must be 1 to 200 characters")
    now = time.time() if now is None else now
    token = new_token()
    row = Token(digest(token), agent, role, project_id, now, expiry(expires, now))
    tokens.add(row)
    return token, row


class Verifier:
    """Looks a presented token up by its hash; a found token is kept ``ttl`` seconds at most, so
    a revoke or an expiry takes effect within that time; with a ``watch`` that is listening,
    until a token changes (:data:`WATCHED_TTL` at most). Expiry is checked at every call."""

    WATCHED_TTL = 300.0

    def __init__(self, tokens: Tokens, ttl: float = 2.0, watch: TokenWatch | None = None) -> None:
        self.tokens = tokens
        self.ttl = ttl
        self.watch = watch
        self._seen: dict[str, tuple[float, Token | None, int]] = {}

    def known(self, token: str) -> tuple[bool, Caller | None]:
        """(True, its caller or None) when ``token``'s lookup is still good (see the class);
        (False, None) when it must be looked up (:meth:`caller`): a server answers a known token
        without handing it to a thread."""
        key, now = digest(token), time.time()
        held = self._seen.get(key)
        if held is None:
            return False, None
        age, watch = now - held[0], self.watch
        if age > self.ttl and not (watch is not None and watch.live and age <= self.WATCHED_TTL
                                   and held[2] == watch.generation):
            return False, None
        return True, _live(held[1], now)

    def caller(self, token: str) -> Caller | None:
        known, found = self.known(token)
        if known:
            return found
        key, now = digest(token), time.time()
        if len(self._seen) > 10_000:
            self._seen.clear()
        generation = self.watch.generation if self.watch is not None else 0   # before the lookup
        self._seen[key] = (now, self.tokens.find(key), generation)
        return _live(self._seen[key][1], now)


def _live(found: Token | None, now: float) -> Caller | None:
    """The caller of a stored token that is neither revoked nor expired at ``now``."""
    return found.caller() if found is not None and found.valid(now) else None
