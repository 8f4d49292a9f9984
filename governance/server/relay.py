"""The relay: on a server that keeps a team database and was asked to ship its ledger
(``governance serve --database URL --ship-ledger``), the served project's ledger is recorded
centrally as the server decides.

A thread of the server looks at the project's ledger every :data:`POLL_S` seconds and stores the
records appended since (by the server's hooks and CSTP calls, the command hooks, the CLI) in the
database's central copy (``central_ledger``), with the checks ``POST /ledger/ship`` makes
(:func:`governance.server.audit.ingest`: continuity, forks, rewritten records) from where the copy
ends. It and ``governance ledger ship`` can both run: a record stored already is skipped. While
the ledger's head has not moved since the last look, the database is not asked. The copy holds
one chain per project id: two servers of one project (one ``GOVERNANCE_PROJECT_ID``, two
folders) each keep a ledger of their own, so only one of them may ship it (the other's first
record is refused as a fork, said once).

The hooks never wait for it: it reads the ledger's files and writes the database on its own
thread, at most one transaction a look. The project's ledger stays the record; the copy follows
it. While the database cannot be reached, or refuses a record, it says so once (standard error
and ``errors.log``) and tries again with a growing pause; nothing is lost, the next attempt starts
from where the copy ends. When the server stops, it records what is left before the server exits.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable

from governance.errors import GovernanceError
from governance.ledger import chain
from governance.ledger.shipping import batches
from governance.project import governance_dir

POLL_S = 0.5          # seconds between looks at the ledger
BATCH = 1000          # records stored in one transaction
MAX_PAUSE_S = 30.0    # the longest pause between attempts after failures
STOP_WAIT_S = 10.0    # how long a stopping server waits for the last records to be stored


class Relay:
    """Records the served project's ledger in the team database's central copy, on a thread."""

    def __init__(self, project: str, say: Callable[[str], None] | None = None) -> None:
        from governance.storage.database import project_id

        self.project = project
        self.gov_dir = governance_dir(project)
        self.project_id = project_id(project)
        self.say = say or (lambda text: print(text, file=sys.stderr, flush=True))
        self.stored = 0
        self.problem = ""
        self._seen: int | None = None    # the local head's seq when the copy last caught up
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="governance-relay", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout: float = STOP_WAIT_S) -> None:
        """Record what is left, then end the thread (at most ``timeout`` seconds)."""
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def step(self) -> int:
        """Store every record of the project's ledger the copy lacks; how many were stored."""
        from governance.server.audit import copy_for, ingest

        local = chain.read_head(self.gov_dir)
        seen = (local or {}).get("seq")
        if seen is not None and seen == self._seen:
            return 0    # nothing appended since the copy last caught up
        copy = copy_for(self.project)
        head, _hash = copy.head(self.project_id)
        stored = 0
        # up to the head: it is written after its line, so a later line may be mid-write
        for pending in batches(self.gov_dir, head, BATCH, until=seen):
            stored += int(ingest(copy, self.project_id, pending)["stored"])
        self._seen = seen
        return stored

    def _run(self) -> None:
        failures = 0
        while True:
            stopping = self._stop.is_set()
            try:
                self.stored += self.step()
            except GovernanceError as exc:   # the database down, a refused or torn record
                failures += 1
                self._said(f"central recording of {self.project_id}'s ledger failed: "
                           f"{exc.render()}; trying again (nothing is lost)")
            else:
                failures = 0
                if self.problem:
                    self._said("")
            if stopping:
                return
            pause = POLL_S if not failures else min(MAX_PAUSE_S, POLL_S * 2 ** failures)
            self._wake.wait(pause)
            self._wake.clear()

    def _said(self, problem: str) -> None:
        """Say a new problem once, and that it is over."""
        if problem == self.problem:
            return
        text = problem or f"central recording of {self.project_id}'s ledger resumed"
        self.problem = problem
        self.say(text)
        chain.log_error(self.gov_dir, text)
