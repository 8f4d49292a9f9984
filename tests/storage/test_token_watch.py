"""A team server keeps the tokens it looked up until one changes: the ``tokens`` table announces
every change (migration 0008), a :class:`TokenWatch` listens, and the verifier looks a token up
again only after an announced change (or, when nobody listens, after its few seconds)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest

from governance.server.identity import DatabaseTokens, Token, Verifier, mint
from governance.server.token_watch import TokenWatch


def _until(check: Callable[[], bool], seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.02)
    return check()


class Counted(DatabaseTokens):
    """The team's tokens, counting the lookups."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.lookups = 0

    def find(self, token_hash: str) -> Token | None:
        self.lookups += 1
        return super().find(token_hash)


@pytest.fixture
def watch(database: str) -> Iterator[TokenWatch]:
    found = TokenWatch(database)
    found.start()
    assert _until(lambda: found.live), "the watch never listened"
    yield found
    found.stop()


def test_a_token_is_kept_until_a_token_changes_and_a_revoke_is_seen_at_once(
        database: str, watch: TokenWatch) -> None:
    tokens = Counted(database)
    verifier = Verifier(tokens, ttl=0.0, watch=watch)   # no time-based keeping at all
    minted = watch.generation
    token, _row = mint(tokens, "watched-agent", "agent", "p1", "1d")
    assert _until(lambda: watch.generation > minted)     # the mint itself is announced
    before = watch.generation
    first = verifier.caller(token)
    assert first is not None and first.agent == "watched-agent" and tokens.lookups == 1
    time.sleep(0.2)
    assert verifier.known(token) == (True, first) and verifier.caller(token) == first
    assert tokens.lookups == 1
    assert DatabaseTokens(database).revoke("watched-agent", time.time()) == 1   # another process
    assert _until(lambda: watch.generation > before and not verifier.known(token)[0], 2.0)
    assert verifier.caller(token) is None and tokens.lookups == 2


def test_a_lookup_under_way_when_a_token_changes_is_not_kept(database: str,
                                                             watch: TokenWatch) -> None:
    tokens = Counted(database)
    verifier = Verifier(tokens, ttl=0.0, watch=watch)
    token, _row = mint(tokens, "raced-agent", "agent", None, "1d")
    original = tokens.find

    def racing(token_hash: str) -> Token | None:
        found = original(token_hash)
        watch.generation += 1     # a change announced while the lookup was under way
        return found

    tokens.find = racing   # type: ignore[method-assign]
    assert verifier.caller(token) is not None
    assert verifier.known(token) == (False, None)    # looked up again next time


def test_without_a_listener_a_lookup_is_kept_for_the_ttl_only(database: str) -> None:
    stopped = TokenWatch(database)
    tokens = Counted(database)
    verifier = Verifier(tokens, ttl=0.3, watch=stopped)
    token, _row = mint(tokens, "unwatched-agent", "agent", None, "1d")
    assert verifier.caller(token) is not None and verifier.known(token)[0]
    time.sleep(0.4)
    assert verifier.known(token) == (False, None)
    assert verifier.caller(token) is not None and tokens.lookups == 2


def test_a_stopping_server_does_not_wait_for_the_listener(database: str) -> None:
    found = TokenWatch(database)
    found.start()
    assert _until(lambda: found.live), "the watch never listened"
    began = time.monotonic()
    found.stop(wait=False)
    assert time.monotonic() - began < 0.05
    thread = found._thread
    assert thread is not None
    thread.join(2.0)             # it ends on its own, its connection closed
    assert not thread.is_alive() and not found.live
