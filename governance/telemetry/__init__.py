"""The ledger's records sent to an OpenTelemetry collector over OTLP (cold: the CLI and the server,
never a hook; the `otel` extra's packages are imported inside, docs/telemetry.md).

May use ledger and the root modules.
"""
