"""OTLP's protobuf messages: the export requests for logs and metrics and the collector's answers.
The only module that imports the ``otel`` extra (``opentelemetry-proto``, and the SDK's resource
detection for ``OTEL_SERVICE_NAME`` and ``OTEL_RESOURCE_ATTRIBUTES``).

Why the messages are built here rather than handed to the SDK's ``OTLPLogExporter``: the exporter
must move its cursor only after the collector acknowledged exactly the records it holds. The SDK's
logging pipeline queues records and drops them when its queue is full, and its exporter retries
inside ``export()`` with its own backoff and deadline, then reports success or failure of all
attempts together; its log record classes are still experimental (``opentelemetry.sdk._logs``).
One ``ExportLogsServiceRequest`` per batch, posted once (``governance.telemetry.transport``),
gives one HTTP status per batch, the ``partial_success`` the collector reports, and retries that
the exporter decides (``governance.telemetry.exporter``).
"""

from __future__ import annotations

from typing import Any

from governance.errors import ConfigError
from governance.telemetry.record import LogFields, Value
from governance.telemetry.tally import BOUNDS, DECISION_KEYS, DECISIONS, DURATION, Tally

INSTALL = "pip install 'claude-governance[otel]'"
SCOPE = "claude-governance"


def require() -> None:
    """Raise ConfigError (exit 2) when the ``otel`` extra is not installed."""
    try:
        import opentelemetry.proto.collector.logs.v1.logs_service_pb2
        import opentelemetry.sdk.resources  # noqa: F401
    except ImportError as exc:
        raise ConfigError(f"the OpenTelemetry export needs the otel extra, which is not installed "
                          f"here ({exc})",
                          fix=f"`{INSTALL}` into the environment governance runs from (a uv "
                              "tool: `uv tool install --force ./claude-governance --with "
                              "opentelemetry-sdk --with opentelemetry-exporter-otlp-proto-http`; "
                              "pipx: `pipx inject claude-governance opentelemetry-sdk "
                              "opentelemetry-exporter-otlp-proto-http`)") from None


def resource(project: str, instance: str, version: str) -> dict[str, Value]:
    """The resource every record and metric is sent with: ``service.name`` claude-governance,
    its version, the exporter's instance id (a stable series across restarts) and the project's
    folder name; ``OTEL_RESOURCE_ATTRIBUTES`` and ``OTEL_SERVICE_NAME`` override them."""
    import os

    from opentelemetry.sdk.resources import OTELResourceDetector

    found: dict[str, Value] = {"service.name": SCOPE, "service.version": version,
                               "service.instance.id": instance,
                               "governance.project": os.path.basename(project.rstrip("/"))}
    for key, value in OTELResourceDetector().detect().attributes.items():
        if isinstance(value, str | bool | int | float):
            found[key] = value
    return found


def _any(value: Value) -> Any:
    from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue

    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, int):
        return AnyValue(int_value=value)
    if isinstance(value, float):
        return AnyValue(double_value=value)
    if isinstance(value, list):
        return AnyValue(array_value=ArrayValue(values=[AnyValue(string_value=v) for v in value]))
    return AnyValue(string_value=value)


def _attributes(values: dict[str, Value]) -> list[Any]:
    from opentelemetry.proto.common.v1.common_pb2 import KeyValue

    return [KeyValue(key=key, value=_any(value)) for key, value in values.items()]


def _scope(version: str) -> Any:
    from opentelemetry.proto.common.v1.common_pb2 import InstrumentationScope

    return InstrumentationScope(name=SCOPE, version=version)


def logs_request(resource_attributes: dict[str, Value], version: str,
                 records: list[LogFields]) -> bytes:
    """The serialized ``ExportLogsServiceRequest`` of one batch."""
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
    from opentelemetry.proto.logs.v1.logs_pb2 import (
        LogRecord,
        ResourceLogs,
        ScopeLogs,
        SeverityNumber,
    )
    from opentelemetry.proto.resource.v1.resource_pb2 import Resource

    named = "event_name" in LogRecord.DESCRIPTOR.fields_by_name   # opentelemetry-proto >= 1.5
    logs = []
    for fields in records:
        log = LogRecord(time_unix_nano=fields.time_ns, observed_time_unix_nano=fields.time_ns,
                        severity_number=SeverityNumber.Value(
                            f"SEVERITY_NUMBER_{fields.severity_text}"),
                        severity_text=fields.severity_text,
                        body=_any(fields.body), attributes=_attributes(fields.attributes))
        if named:
            log.event_name = fields.event_name
        logs.append(log)
    request = ExportLogsServiceRequest(resource_logs=[ResourceLogs(
        resource=Resource(attributes=_attributes(resource_attributes)),
        scope_logs=[ScopeLogs(scope=_scope(version), log_records=logs)])])
    return bytes(request.SerializeToString())


def metrics_request(resource_attributes: dict[str, Value], version: str, tally: Tally,
                    since_ns: int, now_ns: int) -> bytes:
    """The serialized ``ExportMetricsServiceRequest`` of the cumulative tally."""
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
        ExportMetricsServiceRequest,
    )
    from opentelemetry.proto.metrics.v1 import metrics_pb2 as m
    from opentelemetry.proto.resource.v1.resource_pb2 import Resource

    cumulative = m.AggregationTemporality.AGGREGATION_TEMPORALITY_CUMULATIVE
    counts = [m.NumberDataPoint(
        attributes=_attributes({f"governance.{k}": v for k, v in zip(DECISION_KEYS, key,
                                                                       strict=True) if v}),
        start_time_unix_nano=since_ns, time_unix_nano=now_ns, as_int=count)
        for key, count in sorted(tally.decisions.items())]
    points = []
    for event, h in sorted(tally.durations.items()):
        point = m.HistogramDataPoint(
            attributes=_attributes({"governance.event": event} if event else {}),
            start_time_unix_nano=since_ns, time_unix_nano=now_ns, count=h.count, sum=h.total,
            bucket_counts=h.buckets, explicit_bounds=list(BOUNDS))
        if h.low is not None and h.high is not None:
            point.min, point.max = h.low, h.high
        points.append(point)
    metrics = [
        m.Metric(name=DECISIONS, unit="{decision}",
                 description="Tool calls decided by governance, by action, primitive and state",
                 sum=m.Sum(data_points=counts, aggregation_temporality=cumulative,
                           is_monotonic=True)),
        m.Metric(name=DURATION, unit="ms",
                 description="Time a governance hook took, by hook event",
                 histogram=m.Histogram(data_points=points, aggregation_temporality=cumulative)),
    ]
    request = ExportMetricsServiceRequest(resource_metrics=[m.ResourceMetrics(
        resource=Resource(attributes=_attributes(resource_attributes)),
        scope_metrics=[m.ScopeMetrics(scope=_scope(version), metrics=metrics)])])
    return bytes(request.SerializeToString())


def rejected(kind: str, body: bytes) -> tuple[int, str]:
    """(records or data points the collector rejected, its message) from a 2xx answer's body
    (``partial_success``); (0, "") for an empty or unreadable body."""
    if not body:
        return 0, ""
    from google.protobuf.message import DecodeError

    if kind == "logs":
        from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
            ExportLogsServiceResponse,
        )

        try:
            logs = ExportLogsServiceResponse.FromString(body)
        except DecodeError:
            return 0, ""
        return int(logs.partial_success.rejected_log_records), logs.partial_success.error_message
    from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
        ExportMetricsServiceResponse,
    )

    try:
        metrics = ExportMetricsServiceResponse.FromString(body)
    except DecodeError:
        return 0, ""
    return (int(metrics.partial_success.rejected_data_points),
            metrics.partial_success.error_message)
