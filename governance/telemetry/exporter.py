"""The exporter: the ledger's records not sent yet go to the collector in batches, each batch one
OTLP request; the cursor moves only after the collector acknowledged it.

Two ways to run: ``once`` sends what is there and stops at the first batch that is not
acknowledged (raising TelemetryError that says how many were sent and that the rest go next
time); ``follow`` keeps going, polling the ledger, and after a failure waits and sends the same
batch again (exponential backoff, or the collector's ``Retry-After``). A 413 halves the batch.

What is guaranteed: every record reaches the collector at least once, in ledger order; a record
is sent again only when the collector stored its batch without acknowledging it, or the process
died between the acknowledgement and the cursor's write. Each log record carries its ledger hash
as ``governance.record.id`` and the record's own time, so such a duplicate is identical and a
receiver can drop it. Metrics are cumulative totals pushed after the logs, so a push that is lost
costs nothing but a later point.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from governance.errors import GovernanceError, TelemetryError
from governance.project import governance_dir, installed_version
from governance.telemetry import record, transport, wire
from governance.telemetry.cursor import Cursor, Lock
from governance.telemetry.settings import Settings, shown
from governance.telemetry.source import unsent
from governance.telemetry.transport import Answer

DEFAULT_BATCH = 256
POLL_S = 1.0
METRICS_EVERY_S = 60.0
BACKOFF_S = (1.0, 60.0)   # first wait after a failure, longest wait


@dataclass
class Report:
    """What one run sent."""

    sent: int = 0
    batches: int = 0
    first: int = 0
    last: int = 0
    rejected: int = 0
    skipped: int = 0
    metrics: bool = False
    notes: list[str] = field(default_factory=list)


class Exporter:
    """Sends one project's ledger to the collector in ``settings``."""

    def __init__(self, project: str, settings: Settings, batch: int = DEFAULT_BATCH,
                 say: Callable[[str], None] = lambda text: None) -> None:
        wire.require()
        self.project = project
        self.gov = governance_dir(project)
        if not os.path.isdir(self.gov):
            raise TelemetryError(f"there is no ledger in {project}: governance has not run there "
                                 f"(no {self.gov})", fix="pass --project with the folder of a "
                                                         "governed project")
        self.settings = settings
        self.batch = max(1, batch)
        self.say = say
        self.version = installed_version()
        self.agent = f"claude-governance/{self.version}"
        self.lock = Lock(self.gov)
        self.cursor = Cursor.load(self.gov)
        self.resource = wire.resource(project, self.cursor.instance, self.version)
        self.report = Report()

    def _start(self) -> None:
        """With the lock held: read the cursor again (another exporter may have moved it)."""
        self.cursor = Cursor.load(self.gov)
        self.resource = wire.resource(self.project, self.cursor.instance, self.version)

    def step(self) -> tuple[int, Answer | None]:
        """Send the next batch: (records acknowledged, None), (0, None) when there is nothing to
        send, (0, answer) when the collector did not acknowledge it."""
        found = unsent(self.gov, self.cursor.position, self.batch)
        if not found.entries:
            return 0, None
        if found.skipped:
            self.report.skipped += found.skipped
            self.say(f"{found.skipped} records before seq {found.entries[0].position.seq} are "
                     "not on this machine (archived or removed) and cannot be sent")
        body = wire.logs_request(self.resource, self.version,
                                 [record.log_fields(entry.record) for entry in found.entries])
        answer = transport.post(self.settings.logs, body, self.agent)
        if not answer.ok:
            if answer.status == transport.TOO_LARGE and self.batch > 1:
                self.batch = max(1, self.batch // 2)
                self.say(f"the collector found a batch too large: batches of {self.batch} now")
                return self.step()
            return 0, answer
        refused, why = wire.rejected("logs", answer.body)
        if refused:
            note = (f"the collector rejected {refused} of {len(found.entries)} records (seq "
                    f"{found.entries[0].position.seq}–{found.entries[-1].position.seq})"
                    + (f": {why}" if why else "") + "; they are not sent again")
            if len(self.report.notes) < 100:   # a server's exporter runs for weeks
                self.report.notes.append(note)
            self.say(note)
        self.cursor.advance(found.entries, refused, shown(self.settings.logs.url))
        report = self.report
        report.first = report.first or found.entries[0].position.seq
        report.last = found.entries[-1].position.seq
        report.sent += len(found.entries)
        report.batches += 1
        report.rejected += refused
        return len(found.entries), None

    def push_metrics(self) -> Answer | None:
        """Send the cumulative metrics; None when they were acknowledged (or are off)."""
        signal = self.settings.metrics
        tally = self.cursor.tally
        if signal is None or not (tally.decisions or tally.durations):
            return None
        body = wire.metrics_request(self.resource, self.version, tally, self.cursor.since_ns,
                                    time.time_ns())
        answer = transport.post(signal, body, self.agent)
        if not answer.ok:
            return answer
        tally.changed = False
        self.report.metrics = True
        return None

    def once(self) -> Report:
        """Send every record not sent yet, then the metrics. Raises TelemetryError at the first
        batch the collector does not acknowledge, or when another exporter runs."""
        if not self.lock.acquire():
            raise TelemetryError(
                "another exporter of this project's ledger is running (the server's background "
                "exporter or `governance export --otlp --follow`); it sends these records",
                file=self.lock.path, fix="let it, or stop it first (`governance serve --stop`)")
        try:
            self._start()
            while True:
                sent, failure = self.step()
                if failure is not None:
                    raise self._undelivered(failure)
                if not sent:
                    break
            failure = self.push_metrics()
            if failure is not None and self.settings.metrics is not None:
                raise TelemetryError(
                    f"{failure.describe(self.settings.metrics)}: the metrics were not sent "
                    f"(the {self.report.sent} records were); they are cumulative totals and go "
                    "with the next run", fix=_fix(failure, "METRICS"))
            return self.report
        finally:
            self.lock.release()

    def _undelivered(self, failure: Answer) -> TelemetryError:
        done = self.report
        before = (f"{done.sent} records were sent and acknowledged in this run (seq "
                  f"{done.first}–{done.last})" if done.sent else "no record was sent in this run")
        return TelemetryError(
            f"{failure.describe(self.settings.logs)}: {before}; the records from seq "
            f"{self.cursor.position.seq + 1} on were not acknowledged and stay unsent, for the "
            "next `governance export --otlp` (nothing is lost: the cursor moved only with the "
            "collector's acknowledgements)", fix=_fix(failure, "LOGS"))

    def follow(self, stop: threading.Event, poll: float = POLL_S,
               backoff: tuple[float, float] = BACKOFF_S, progress: bool = True) -> None:
        """Send records as the ledger grows until ``stop`` is set; wait and retry after any
        failure (saying so once per kind of failure, and, with ``progress``, each batch sent)."""
        waiting = False
        while not self.lock.acquire():
            if not waiting:
                self.say("another exporter of this ledger is running; waiting for it to stop")
                waiting = True
            if stop.wait(backoff[1]):
                return
        try:
            self._follow(stop, poll, backoff, progress)
        finally:
            self.lock.release()

    def _follow(self, stop: threading.Event, poll: float, backoff: tuple[float, float],
                progress: bool) -> None:
        failures = 0
        last_problem = ""
        pushed = 0.0
        started = False
        while not stop.is_set():
            problem = ""
            acknowledged = False
            delay = poll
            try:
                if not started:
                    self._start()
                    started = True
                sent, failure = self.step()
                if failure is not None:
                    problem = (f"{failure.describe(self.settings.logs)}; the records from seq "
                               f"{self.cursor.position.seq + 1} on are kept and sent again")
                    delay = failure.retry_after or min(backoff[1], backoff[0] * 2 ** failures)
                elif sent:
                    if progress:
                        self.say(f"sent {sent} record{'s' if sent != 1 else ''} (up to seq "
                                 f"{self.cursor.position.seq})")
                    acknowledged, delay = True, 0.0
                elif self.cursor.tally.changed or time.monotonic() - pushed > METRICS_EVERY_S:
                    pushed = time.monotonic()
                    metrics = self.push_metrics()
                    if metrics is not None and self.settings.metrics is not None:
                        problem = (f"{metrics.describe(self.settings.metrics)}: the metrics "
                                   "are sent again later")
                    else:
                        acknowledged = True
            except GovernanceError as exc:   # a ledger replaced, a cursor that cannot be written
                problem, delay = exc.render(), backoff[1]
            except OSError as exc:           # a ledger file that cannot be read
                problem, delay = f"cannot read the ledger ({exc})", backoff[1]
            if problem:
                failures += 1
                if problem != last_problem:
                    self.say(problem)
                last_problem = problem
            elif acknowledged:
                if last_problem:
                    self.say("the collector acknowledges again")
                failures, last_problem = 0, ""
            if delay and stop.wait(delay):
                return


def _fix(failure: Answer, signal: str) -> str:
    if failure.retryable:
        return ("start the collector (or wait until it is up), check that "
                f"OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_{signal}_ENDPOINT names its "
                "OTLP/HTTP port (4318 by default), then run `governance export --otlp` again")
    return (f"check OTEL_EXPORTER_OTLP_{signal}_ENDPOINT (its path, usually "
            f"/v1/{signal.lower()}) and OTEL_EXPORTER_OTLP_HEADERS (the credentials the "
            "collector expects), then run `governance export --otlp` again")
