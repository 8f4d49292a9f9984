"""The server's bearer token: made on first start into a 0600 file under ``.claude/governance/``,
read by the server, the installer (http hooks) and ``governance serve --token``; compared in
constant time."""

from __future__ import annotations

import hmac
import os
import secrets
import stat

from governance.errors import GovernanceError
from governance.project import ensure_dir, governance_dir

TOKEN_NAME = "server.token"
ENV_NAME = "GOVERNANCE_SERVER_TOKEN"   # the variable http hooks read the token from
PREFIX = "gov_"   # a token starts with a letter: a command line never takes it for an option


def new_token() -> str:
    """A new token: :data:`PREFIX` and 32 random bytes, URL-safe. Without the prefix one token
    in 64 began with ``-``, which ``--token TOKEN`` then read as an option."""
    return PREFIX + secrets.token_urlsafe(32)


def token_path(project: str) -> str:
    return os.path.join(governance_dir(project), TOKEN_NAME)


def load_or_create(project: str) -> str:
    """The project's token, made (32 random bytes, URL-safe) when there is none. A token file that
    others can read is made private again."""
    path = token_path(project)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        ensure_dir(os.path.dirname(path))
        from governance.install.gitignore import ensure_own

        ensure_own(project)   # the token is a secret: git ignores it from the start
        token = new_token()
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:     # another process made it first: use theirs
            return load_or_create(project)
        with os.fdopen(fd, "w", encoding="ascii") as fh:
            fh.write(token + "\n")
        return token
    if stat.S_IMODE(info.st_mode) & 0o077:
        os.chmod(path, 0o600)
    with open(path, encoding="ascii", errors="replace") as fh:
        token = fh.read().strip()
    if len(token) < 16:
        raise GovernanceError("the server token is missing or too short", file=path,
                              fix="delete the file; the next `governance serve` makes a new one")
    return token


def bearer(header: bytes | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, or None."""
    if not header:
        return None
    scheme, _, value = header.decode("latin-1").strip().partition(" ")
    return value.strip() or None if scheme.lower() == "bearer" else None


def matches(given: str | None, expected: str) -> bool:
    """Whether ``given`` is the token, in time independent of where they differ."""
    return hmac.compare_digest((given or "").encode("utf-8", "replace"),
                               expected.encode("utf-8"))
