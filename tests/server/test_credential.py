"""The bearer token: made once, private, compared in constant time."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from governance.server import credential


def test_made_once_with_mode_0600_and_reused(project: Path) -> None:
    token = credential.load_or_create(str(project))
    path = Path(credential.token_path(str(project)))
    assert len(token) >= 40 and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert credential.load_or_create(str(project)) == token


def test_a_readable_token_file_is_made_private_again(project: Path) -> None:
    credential.load_or_create(str(project))
    path = credential.token_path(str(project))
    os.chmod(path, 0o644)
    credential.load_or_create(str(project))
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_bearer_and_matches() -> None:
    assert credential.bearer(b"Bearer abc") == "abc"
    assert credential.bearer(b"bearer  abc ") == "abc"
    assert credential.bearer(b"Basic abc") is None
    assert credential.bearer(None) is None and credential.bearer(b"Bearer ") is None
    assert credential.matches("abc", "abc")
    assert not credential.matches("abd", "abc") and not credential.matches(None, "abc")
    assert not credential.matches("ab", "abc") and not credential.matches("é", "abc")
