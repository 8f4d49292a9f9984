"""``governance export --otlp``: send the ledger's records not sent yet to an OpenTelemetry
collector (OTLP over HTTP, the ``OTEL_EXPORTER_OTLP_*`` variables; docs/telemetry.md), once or,
with ``--follow``, as they are written.

Exit 0 when every record was acknowledged; 1 when the collector did not acknowledge a batch (what
was sent stays sent, the rest goes next time) or another exporter runs; 2 when the ``otel`` extra
is missing or a variable is wrong (grpc, for one).
"""

from __future__ import annotations

import argparse

TYPE_CHECKING = False
if TYPE_CHECKING:
    from governance.telemetry.exporter import Exporter


def add_arguments(parser: argparse.ArgumentParser) -> None:
    target = parser.add_argument_group("destination (one is required)")
    target.add_argument("--otlp", action="store_true", required=True,
                        help="to the OTLP/HTTP collector the OTEL_EXPORTER_OTLP_* variables name "
                             "(default http://localhost:4318)")
    parser.add_argument("--follow", action="store_true",
                        help="keep running: send new records as they are written, retry with "
                             "backoff while the collector is down (stop with Ctrl-C)")
    parser.add_argument("--project", help="project folder (default: found from the current one)")
    parser.add_argument("--batch", type=int, default=256, metavar="N",
                        help="records per OTLP request (default 256)")
    parser.add_argument("--json", dest="as_json", action="store_true",
                        help="print what was sent as JSON (without --follow)")


def run(args: argparse.Namespace) -> int:
    import os

    from governance.errors import ConfigError
    from governance.project import project_from_cli
    from governance.telemetry import settings, wire

    if args.batch < 1:
        raise ConfigError(f"--batch must be at least 1, not {args.batch}")
    wire.require()
    chosen = settings.load(os.environ)
    project = project_from_cli(args.project)
    from governance.telemetry.exporter import Exporter

    if args.follow:
        return _follow(Exporter(project, chosen, args.batch,
                                say=lambda text: print(text, flush=True)))
    return _once(Exporter(project, chosen, args.batch), args.as_json)


def _once(exporter: Exporter, as_json: bool) -> int:
    import json
    from dataclasses import asdict

    report = exporter.once()
    where = exporter.settings.logs.shown()
    if as_json:
        print(json.dumps({**asdict(report), "endpoint": where,
                          "cursor": exporter.cursor.path}, indent=2))
        return 0
    for note in report.notes:
        print(f"note: {note}")
    if report.skipped:
        print(f"note: {report.skipped} records are not on this machine (archived or removed) "
              "and were not sent")
    if report.sent:
        print(f"Sent {report.sent} ledger records (seq {report.first}–{report.last}) to {where} "
              f"in {report.batches} request{'s' if report.batches != 1 else ''}"
              + ("; metrics sent." if report.metrics else "."))
    elif exporter.cursor.sent:
        print(f"Nothing new to send: {where} has every record up to seq "
              f"{exporter.cursor.position.seq}" + ("; metrics sent." if report.metrics else "."))
    else:
        print(f"Nothing to send: the ledger in {exporter.gov} has no records yet.")
    return 0


def _follow(exporter: Exporter) -> int:
    import threading

    print(f"Sending the ledger of {exporter.project} to {exporter.settings.logs.shown()} as it "
          "grows (Ctrl-C stops).", flush=True)
    try:
        exporter.follow(threading.Event())
    except KeyboardInterrupt:
        print(f"Stopped; {exporter.cursor.sent} records sent in all, up to seq "
              f"{exporter.cursor.position.seq}.")
    return 0
