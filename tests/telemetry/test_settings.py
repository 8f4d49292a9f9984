"""The OTEL_EXPORTER_OTLP_* variables, read as the specification reads them (no extra needed)."""

from __future__ import annotations

import pytest

from governance.errors import ConfigError
from governance.telemetry.settings import configured, load


def test_the_default_is_the_local_collector_over_http() -> None:
    chosen = load({})
    assert chosen.logs.url == "http://localhost:4318/v1/logs"
    assert chosen.metrics is not None and chosen.metrics.url == "http://localhost:4318/v1/metrics"
    assert chosen.logs.timeout_s == 10.0 and not chosen.logs.gzip and chosen.logs.headers == {}


def test_a_base_endpoint_gets_the_signal_path_and_a_signal_endpoint_is_used_as_given() -> None:
    chosen = load({"OTEL_EXPORTER_OTLP_ENDPOINT": "https://otel.example:4318/base/",
                   "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://m.example/custom"})
    assert chosen.logs.url == "https://otel.example:4318/base/v1/logs"
    assert chosen.metrics is not None and chosen.metrics.url == "http://m.example/custom"


def test_headers_are_percent_decoded_and_a_signal_header_wins() -> None:
    chosen = load({"OTEL_EXPORTER_OTLP_HEADERS": "api-key=a%2Cb,x-team = core ",
                   "OTEL_EXPORTER_OTLP_LOGS_HEADERS": "api-key=logs"})
    assert chosen.logs.headers == {"api-key": "logs", "x-team": "core"}
    assert chosen.metrics is not None
    assert chosen.metrics.headers == {"api-key": "a,b", "x-team": "core"}


def test_a_broken_header_is_named_without_its_value() -> None:
    with pytest.raises(ConfigError) as caught:
        load({"OTEL_EXPORTER_OTLP_HEADERS": "good=1,Bearer s3cr3t-token"})
    text = caught.value.render()
    assert "OTEL_EXPORTER_OTLP_HEADERS: entry 2 is not key=value" in text
    assert "s3cr3t" not in text and caught.value.exit_code == 2


@pytest.mark.parametrize("variable, value, words", [
    ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", "grpc and http/json are not supported"),
    ("OTEL_EXPORTER_OTLP_LOGS_PROTOCOL", "http/json", "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL is "
                                                      "'http/json'"),
    ("OTEL_EXPORTER_OTLP_TIMEOUT", "soon", "a positive number of milliseconds"),
    ("OTEL_EXPORTER_OTLP_COMPRESSION", "zstd", "must be gzip or none"),
    ("OTEL_EXPORTER_OTLP_ENDPOINT", "localhost:4318", "must be an http:// or https:// URL"),
])
def test_wrong_values_are_config_errors_naming_the_variable(variable: str, value: str,
                                                             words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load({variable: value})
    assert words in caught.value.render() and caught.value.exit_code == 2


def test_credentials_in_an_endpoint_are_not_shown() -> None:
    chosen = load({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://user:pa55@collector:4318"})
    assert chosen.logs.shown() == "http://collector:4318/v1/logs"


def test_timeout_is_in_milliseconds_and_protocol_http_protobuf_is_accepted() -> None:
    chosen = load({"OTEL_EXPORTER_OTLP_TIMEOUT": "2500",
                   "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"})
    assert chosen.logs.timeout_s == 2.5


def test_metrics_can_be_turned_off_and_the_server_exports_only_when_asked() -> None:
    assert load({"OTEL_METRICS_EXPORTER": "none"}).metrics is None
    assert load({"OTEL_METRICS_EXPORTER": "console,otlp"}).metrics is not None
    assert not configured({})
    assert configured({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"})
    assert configured({"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "http://c:4318/v1/logs"})
    assert not configured({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318",
                           "OTEL_LOGS_EXPORTER": "none"})
