"""Where a request goes: a loopback address, a Unix socket or one of the project's own dev hosts
(``local-request``), or anywhere else (``web-fetch``).

Hot path: no imports. A fetching program's command spec says where its URLs are
(``requests: {urls: all | httpie | host, url_options, via, sockets}``, compiled by
``governance.shell.schema``); ``request`` reads them from the parsed arguments. A request is local
only when every URL it names is known and local, and nothing sends it elsewhere: a proxy, a
``--resolve``/``--connect-to`` mapping, a config file (``via`` options) or a ``*_proxy`` variable
set in the same command keep it ``web-fetch``. Loopback (127.0.0.0/8, ``::1``, ``localhost``,
``*.localhost``, ``0.0.0.0``) is always local; ``shell.local_hosts`` adds a project's dev hosts
(globs: ``*.test``, ``api.dev.internal``).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from governance.shell.rules import Argv

METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT")
PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "ftp_proxy")


def proxied(assigned: Iterable[str], variables: Iterable[str]) -> bool:
    """Whether a ``*_proxy`` variable is set for the request: assigned before the command
    (``https_proxy=... curl``) or earlier in the command line (``export https_proxy=...``)."""
    return any(name.lower() in PROXY_VARIABLES for name in [*assigned, *variables])
_UNIX_SCHEMES = ("http+unix", "https+unix", "unix", "ws+unix")


def host_of(value: str) -> str | None:
    """The host a URL or a bare ``host[:port][/path]`` names; ``""`` for a Unix socket URL;
    None when the text names no host that can be read."""
    text = value.strip()
    scheme, sep, rest = text.partition("://")
    if sep:
        if scheme.lower() in _UNIX_SCHEMES:
            return ""
        if not scheme.replace("+", "").replace("-", "").replace(".", "").isalnum():
            return None
    else:
        rest = text
    authority = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    if "@" in authority:
        authority = authority.rsplit("@", 1)[1]
    if authority.startswith("["):          # [::1]:8080
        end = authority.find("]")
        return authority[1:end].lower() if end > 0 else None
    if authority.startswith(":"):          # httpie's :8000 means localhost
        return "localhost" if not sep and authority[1:].isdigit() else None
    host, _, port = authority.partition(":")
    if port and not port.isdigit():
        return None
    if not host or any(c in host for c in " \\'\"$`%{}"):
        return None
    return host.lower().rstrip(".")


# socat's address types: those that stay on this machine, and those that connect to a host
_SOCAT_LOCAL = ("-", "stdio", "stdin", "stdout", "stderr", "unix-connect", "unix-client",
                "unix-sendto", "unix", "local", "abstract-connect", "abstract-client",
                "abstract-sendto")
_SOCAT_CONNECT = ("tcp", "tcp4", "tcp6", "tcp-connect", "tcp4-connect", "tcp6-connect", "udp",
                  "udp4", "udp6", "udp-connect", "udp4-connect", "udp6-connect", "udp-sendto",
                  "udp4-sendto", "udp6-sendto", "ssl", "openssl", "openssl-connect", "dtls",
                  "openssl-dtls-client", "sctp", "sctp-connect", "sctp4-connect",
                  "sctp6-connect", "dccp-connect")
_SOCKET_NAMES = (".sock", ".socket")


def socat_host(address: str | None) -> str | None:
    """What one socat address reaches, as a URL for ``url_reason``: ``unix://`` for standard
    input and output or a Unix socket (``STDIO``, ``UNIX-CONNECT:/run/x.sock``, a bare
    ``/var/run/haproxy.sock``), the host of a connecting address (``TCP:db.example.com:5432``);
    None for anything else (a listener, a proxy, a program it runs, a file it writes)."""
    if address is None:
        return None
    kind, colon, rest = address.partition(":")
    kind = kind.split(",", 1)[0].lower()
    if not colon and "/" in kind:       # a bare path: a Unix socket only by its name
        return "unix://" if kind.endswith(_SOCKET_NAMES) else None
    if kind in _SOCAT_LOCAL:
        return "unix://"
    if kind in _SOCAT_CONNECT:
        return rest.split(",", 1)[0] or None
    return None


def is_local(host: str, local_hosts: Iterable[str] = ()) -> bool:
    """Loopback, a Unix socket (``""``) or one of ``local_hosts`` (globs, any case)."""
    if host in ("", "localhost", "::1", "0.0.0.0", "0:0:0:0:0:0:0:1") or \
            host.endswith(".localhost"):
        return True
    parts = host.split(".")
    if len(parts) == 4 and parts[0] == "127" and all(p.isdigit() and int(p) < 256 for p in parts):
        return True
    from governance.shell.rules import glob_match  # loaded with every Bash call anyway

    return any(glob_match(h.lower(), host) for h in local_hosts)


def url_reason(value: str | None, local_hosts: Iterable[str]) -> str | None:
    """Why a request to ``value`` is local (``"127.0.0.1 is this machine"``), or None."""
    if value is None:
        return None
    host = host_of(value)
    if host is None or not is_local(host, local_hosts):
        return None
    return describe(host, local_hosts)


def describe(host: str, local_hosts: Iterable[str]) -> str:
    if host == "":
        return "a Unix socket on this machine"
    if host == "localhost" or host.endswith(".localhost") or host.startswith("127.") or \
            host in ("::1", "0.0.0.0", "0:0:0:0:0:0:0:1"):
        return f"{host}, this machine's loopback address"
    return f"{host}, one of the project's dev hosts (shell.local_hosts)"


def request(spec: dict[str, Any], argv: Argv, local_hosts: Iterable[str],
            proxied: bool) -> str | None:
    """Why the request a fetching program's ``argv`` makes stays on this machine, or None when
    it may reach the network (a remote or unknown host, a proxy, a config file)."""
    if proxied:
        return None
    via = spec.get("via") or ()
    from governance.shell.rules import has_flag

    if any(has_flag(argv.flags, option) for option in via):
        return None
    for option in spec.get("sockets") or ():
        if argv.values.get(option):
            values = [v for v, _ in argv.values[option]]
            if None not in values:
                return f"the request goes to the Unix socket {values[-1]}"
    urls: list[str | None] = []
    for option in spec.get("url_options") or ():
        urls.extend(v for v, _ in argv.values.get(option, ()))
    positionals = [v for v, _ in argv.positionals]
    layout = spec.get("urls", "all")
    if layout == "httpie":   # [METHOD] URL [ITEM ...]
        if len(positionals) > 1 and positionals[0] is not None and \
                positionals[0].upper() in METHODS:
            positionals = positionals[1:]    # xh get URL: the method in any case
        urls.extend(positionals[:1])
    elif layout == "host":   # nc HOST PORT, telnet HOST PORT
        urls.extend(positionals[:1])
    elif layout == "socat":  # socat ADDRESS ADDRESS
        urls.extend(socat_host(p) for p in positionals)
    else:
        urls.extend(positionals)
    if not urls:
        return None
    reasons = [url_reason(u, local_hosts) for u in urls]
    if any(r is None for r in reasons):
        return None
    return f"the request goes to {reasons[0]}"
