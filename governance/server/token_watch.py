"""The team's tokens, watched: a server with a team database listens on the channel every change to
the ``tokens`` table is announced on (migration 0008), so its :class:`~governance.server.identity.
Verifier` keeps a token it looked up until a token changes, rather than looking it up again after
a few seconds, and a revoke takes effect once announced rather than after those seconds.

A thread holds one connection of its own, ``LISTEN``ing. :attr:`TokenWatch.generation` counts the
changes announced (and every time the thread starts or stops listening): a lookup is kept only
while the generation it began under is the current one, so a revoke that commits while a lookup
is under way is never hidden by it. While the thread is not listening (the database restarted,
the migration not applied), :attr:`TokenWatch.live` is false and the verifier keeps lookups for
its few seconds only, as without a watch; the thread connects again with a growing pause.
"""

from __future__ import annotations

import threading

CHANNEL = "governance_tokens"
WAKE_S = 0.5          # how often the listening thread looks whether it should stop
MAX_PAUSE_S = 30.0    # the longest pause before connecting again


class TokenWatch:
    """Listens for changes of the tokens in the team database at ``url``, on a thread."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.generation = 0
        self.live = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="governance-token-watch",
                                        daemon=True)
        self._thread.start()

    def stop(self, wait: bool = True) -> None:
        """Stop listening; with ``wait``, until the thread has closed its connection (at most
        :data:`WAKE_S`: a test about to drop the database). A server stopping does not wait: the
        thread ends on its own, or with the process."""
        self._stop.set()
        if wait and self._thread is not None:
            self._thread.join(WAKE_S * 4)

    def _changed(self, live: bool) -> None:
        self.generation += 1     # first: a lookup begun before this is never kept long
        self.live = live

    def _run(self) -> None:
        pause = WAKE_S
        while not self._stop.is_set():
            try:
                self._listen()
                pause = WAKE_S
            except Exception:   # the database went away, or never came: listen again later
                pass
            self._changed(False)
            self._stop.wait(pause)
            pause = min(pause * 2, MAX_PAUSE_S)

    def _listen(self) -> None:
        from governance.storage.pool import connect

        with connect(self.url) as conn:
            conn.execute(f"LISTEN {CHANNEL}")
            announced = conn.execute("SELECT count(*) FROM pg_trigger WHERE tgname = "
                                     "'tokens_changed'").fetchone()
            if announced != (1,):
                return          # nothing would be announced: the database is not migrated
            self._changed(True)
            while not self._stop.is_set():
                for _ in conn.notifies(timeout=WAKE_S):
                    self._changed(True)
