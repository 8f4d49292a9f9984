"""Where the ledger's records go and how: the standard ``OTEL_EXPORTER_OTLP_*`` variables, read as
the OpenTelemetry specification and Claude Code's own telemetry read them, so governance's events
land beside Claude Code's.

Read here (a per-signal variable wins over the general one):

- ``OTEL_EXPORTER_OTLP_ENDPOINT`` (a base URL: ``/v1/logs`` and ``/v1/metrics`` are appended),
  ``OTEL_EXPORTER_OTLP_LOGS_ENDPOINT`` and ``OTEL_EXPORTER_OTLP_METRICS_ENDPOINT`` (used as given);
  none set: ``http://localhost:4318``, the collector's OTLP/HTTP port;
- ``OTEL_EXPORTER_OTLP[_LOGS|_METRICS]_HEADERS`` (``key=value,key2=value2``, percent-encoded);
- ``OTEL_EXPORTER_OTLP[_LOGS|_METRICS]_PROTOCOL``: only ``http/protobuf``; ``grpc`` and
  ``http/json`` are refused with the variable named;
- ``OTEL_EXPORTER_OTLP[_LOGS|_METRICS]_TIMEOUT`` (milliseconds, as the specification says; default
  10000), ``..._COMPRESSION`` (``gzip`` or ``none``), ``..._CERTIFICATE``, ``..._CLIENT_CERTIFICATE``
  and ``..._CLIENT_KEY`` (PEM files, for https);
- ``OTEL_LOGS_EXPORTER`` / ``OTEL_METRICS_EXPORTER``: a list without ``otlp`` (``none``,
  ``console``) turns that signal off (metrics), or keeps the server from exporting (logs);
- ``OTEL_SERVICE_NAME`` and ``OTEL_RESOURCE_ATTRIBUTES`` describe the resource
  (``governance.telemetry.wire``).

No import of the ``otel`` extra: the variables are checked before anything heavy is loaded.
Header values are credentials: no message repeats them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

from governance.errors import ConfigError

DEFAULT_ENDPOINT = "http://localhost:4318"
PROTOCOL = "http/protobuf"
DEFAULT_TIMEOUT_MS = 10_000
PREFIX = "OTEL_EXPORTER_OTLP_"


@dataclass(frozen=True)
class Signal:
    """Where and how one signal (logs or metrics) is sent."""

    url: str
    headers: dict[str, str] = field(default_factory=dict)
    timeout_s: float = DEFAULT_TIMEOUT_MS / 1000
    gzip: bool = False
    certificate: str | None = None
    client_certificate: str | None = None
    client_key: str | None = None

    def shown(self) -> str:
        """The URL as messages show it: without credentials (``user:password@``)."""
        return shown(self.url)


def shown(url: str) -> str:
    """``url`` without the credentials it may hold (``user:password@``)."""
    parts = urlsplit(url)
    return parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()


@dataclass(frozen=True)
class Settings:
    """The OTLP destination of both signals; ``metrics`` is None when metrics are turned off."""

    logs: Signal
    metrics: Signal | None


def configured(env: Mapping[str, str]) -> bool:
    """Whether the environment names an OTLP endpoint for logs (what starts the server's
    background exporter) and does not turn the logs exporter off."""
    named = bool(env.get(PREFIX + "ENDPOINT") or env.get(PREFIX + "LOGS_ENDPOINT"))
    return named and _enabled(env, "OTEL_LOGS_EXPORTER")


def load(env: Mapping[str, str]) -> Settings:
    """The settings in ``env``; raises ConfigError naming the variable that is wrong."""
    logs = _signal(env, "LOGS", "v1/logs")
    metrics = _signal(env, "METRICS", "v1/metrics") if _enabled(env, "OTEL_METRICS_EXPORTER") \
        else None
    return Settings(logs=logs, metrics=metrics)


def _enabled(env: Mapping[str, str], name: str) -> bool:
    chosen = [word.strip().lower() for word in env.get(name, "").split(",") if word.strip()]
    return not chosen or "otlp" in chosen


def _pick(env: Mapping[str, str], signal: str, name: str) -> tuple[str, str | None]:
    """(variable, value) of the per-signal variable when set, else of the general one."""
    for variable in (f"{PREFIX}{signal}_{name}", f"{PREFIX}{name}"):
        value = env.get(variable, "").strip()
        if value:
            return variable, value
    return f"{PREFIX}{name}", None


def _signal(env: Mapping[str, str], signal: str, path: str) -> Signal:
    variable, protocol = _pick(env, signal, "PROTOCOL")
    if protocol is not None and protocol.lower() != PROTOCOL:
        fix = (f"in the environment governance runs in, set {PREFIX}{signal}_PROTOCOL="
               f"{PROTOCOL} (or {PREFIX}PROTOCOL, for both signals) and point the endpoint at the "
               "collector's OTLP/HTTP port (4318 by default)"
               + ("; or turn governance's metrics off with OTEL_METRICS_EXPORTER=none"
                  if signal == "METRICS" else ""))
        raise ConfigError(f"{variable} is {protocol!r}, but governance sends OTLP over HTTP with "
                          f"protobuf only ({PROTOCOL}); grpc and http/json are not supported",
                          fix=fix)
    own = env.get(f"{PREFIX}{signal}_ENDPOINT", "").strip()
    if own:
        url, source = own, f"{PREFIX}{signal}_ENDPOINT"
    else:
        base = env.get(PREFIX + "ENDPOINT", "").strip() or DEFAULT_ENDPOINT
        url, source = base.rstrip("/") + "/" + path, PREFIX + "ENDPOINT"
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{source} must be an http:// or https:// URL with a host, not "
                          f"{shown(url)!r}", fix=f"for example {source}={DEFAULT_ENDPOINT}")
    return Signal(url=url, headers=_headers(env, signal), timeout_s=_timeout(env, signal),
                  gzip=_gzip(env, signal), certificate=_pick(env, signal, "CERTIFICATE")[1],
                  client_certificate=_pick(env, signal, "CLIENT_CERTIFICATE")[1],
                  client_key=_pick(env, signal, "CLIENT_KEY")[1])


def _headers(env: Mapping[str, str], signal: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for variable in (PREFIX + "HEADERS", f"{PREFIX}{signal}_HEADERS"):   # per signal wins
        for number, item in enumerate(env.get(variable, "").split(","), 1):
            if not item.strip():
                continue
            key, equals, value = item.partition("=")
            if not equals or not key.strip():
                raise ConfigError(f"{variable}: entry {number} is not key=value (value not "
                                  "shown: headers often hold credentials)",
                                  fix=f"write {variable} as key1=value1,key2=value2, "
                                      "percent-encoding any comma or equals sign in a value")
            found[unquote(key.strip())] = unquote(value.strip())
    return found


def _timeout(env: Mapping[str, str], signal: str) -> float:
    variable, value = _pick(env, signal, "TIMEOUT")
    if value is None:
        return DEFAULT_TIMEOUT_MS / 1000
    try:
        millis = float(value)
    except ValueError:
        millis = -1.0
    if millis <= 0:
        raise ConfigError(f"{variable} must be a positive number of milliseconds, not {value!r}",
                          fix=f"for example {variable}={DEFAULT_TIMEOUT_MS}")
    return millis / 1000


def _gzip(env: Mapping[str, str], signal: str) -> bool:
    variable, value = _pick(env, signal, "COMPRESSION")
    if value is None or value.lower() == "none":
        return False
    if value.lower() == "gzip":
        return True
    raise ConfigError(f"{variable} must be gzip or none, not {value!r}",
                      fix=f"set {variable}=gzip, or unset it")
