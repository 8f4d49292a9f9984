"""A program whose arguments name a remote URL or host fetches: ``axel https://...``,
``kubectl apply -f https://...``, ``helm install app oci://...``, ``sshfs me@host:/ /mnt``.

Hot path: imports only ``shell.endpoint``; loaded only when an argument holds ``://`` or an
``@`` and a ``:``. An argument is remote when it is a URL (``scheme://host...``, also
``git::https://...``, ``--url=https://...``) of a network scheme (``http``, ``ssh``, ``oci``,
``postgres`` ...; not ``file://`` nor an app's own link such as ``op://``) whose host is not
this machine (loopback, a Unix socket or one of ``shell.local_hosts``: ``shell.endpoint``) nor a
name without a dot (``postgres://db/app``: a container or a machine of the local network), or
``user@host:path`` (scp's form, not an image digest ``name@sha256:...``).

It is data, not a fetch, where the program only prints, parses or stores it: a program in
``shell.read_only`` (``echo``, ``grep``, ``jq``), the value of a message option
(``shell.lexicon.message_options``: ``git commit -m``, ``--body``), a command whose subcommand
stores settings (``shell.lexicon.settings``: ``git remote add``, ``npm config set``), and a
listed command whose pattern already says what it does with the network (``web-fetch``,
``package-install``, ``vcs-push``).
"""

from __future__ import annotations

from governance.shell.endpoint import host_of, is_local

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from governance.shell.walk import Walk

_DIGESTS = ("sha256", "sha512", "sha384", "sha1", "md5")
# schemes that reach another machine (the last part of git+https, mongodb+srv ...); an app's
# own link (op://vault/item, vscode://..., slack://...) is not a fetch by this program
_SCHEMES = ("http", "https", "ftp", "ftps", "sftp", "ssh", "scp", "git", "svn", "rsync", "oci",
            "docker", "ws", "wss", "s3", "gs", "hdfs", "smb", "cifs", "nfs", "ldap", "ldaps",
            "mongodb", "srv", "postgres", "postgresql", "mysql", "mariadb", "redis", "rediss",
            "amqp", "amqps", "mqtt", "mqtts", "grpc", "grpcs", "tcp", "udp", "tls", "telnet",
            "webdav", "dav", "davs", "hg", "bzr", "ipfs", "magnet", "torrent", "rtsp", "rtmp",
            "irc", "ircs", "xmpp", "sip", "nntp", "gopher", "azure", "wasbs", "abfss", "clickhouse",
            "cassandra", "kafka", "nats", "memcached", "couchbase", "neo4j", "bolt", "jdbc")


def remote(value: str, local_hosts: Iterable[str]) -> str | None:
    """The remote host ``value`` names (a URL, or scp's ``user@host:path``), else None."""
    text = value
    if text.startswith("-") and "=" in text:            # --url=https://..., of=...
        text = text.split("=", 1)[1]
    cut = text.find("://")
    if cut > 0:
        scheme = text[:cut].rsplit("::", 1)[-1].lower()  # git::https://, s3::https://
        if scheme.rsplit("+", 1)[-1].rsplit(":", 1)[-1] not in _SCHEMES:
            return None
        host = host_of("x" + text[cut:])
        return host if host and _elsewhere(host, local_hosts) else None
    at = text.find("@")
    colon = text.find(":", at + 1)
    if at <= 0 or colon <= at + 1 or "/" in text[:at] or " " in text:
        return None
    host = text[at + 1:colon].lower()
    if "/" in host or host in _DIGESTS or not host.replace(".", "").replace("-", "").isalnum():
        return None
    return host if _elsewhere(host, local_hosts) else None


def _elsewhere(host: str, local_hosts: Iterable[str]) -> bool:
    """Not this machine, and not a name without a dot (``db``, ``redis``: a container or a
    machine of the local network, which reaches no web site)."""
    return not is_local(host, local_hosts) and ("." in host or ":" in host)


def unlisted(an: Walk, base: str, fields: list[str | None], seg: str) -> None:
    """A program without an entry given a remote URL or host fetches from it."""
    lexicon = an.shell.get("lexicon") or {}
    messages = lexicon.get("message_options") or {}
    if _stores(fields, lexicon):
        return
    local = an.shell.get("local_hosts", ())
    for k in range(1, len(fields)):
        value = fields[k]
        if value is None or (fields[k - 1] or "") in messages:
            continue
        host = remote(value, local)
        if host is not None:
            an.add("web-fetch", seg, f"{base} is not a command governance knows, and it is given "
                                     f"the remote address {value} ({host}), which it may fetch")
            return


def listed(an: Walk, base: str, argv: Any, fields: list[str | None], seg: str,
           understood: set[str]) -> None:
    """A listed command whose patterns say nothing of the network, given a remote URL
    (``kubectl apply -f https://...``, ``helm install app oci://...``). The options a matching
    pattern names (``understood``: ``docker -H ssh://host compose up`` deploys there) are read
    by that pattern."""
    lexicon = an.shell.get("lexicon") or {}
    if _stores(fields, lexicon):
        return
    messages = lexicon.get("message_options") or {}
    values = [v for v, _raw in argv.positionals]
    for option, given in argv.values.items():
        if option not in messages and option not in understood:
            values.extend(v for v, _raw in given)
    local = an.shell.get("local_hosts", ())
    for value in values:
        host = remote(value, local) if value is not None else None
        if host is not None:
            an.add("web-fetch", seg, f"{base} is given the remote address {value} ({host}), "
                                     "which it fetches")
            return


def _stores(fields: list[str | None], lexicon: dict[str, Any]) -> bool:
    """``git remote add origin URL``, ``npm config set registry URL``: the URL is stored."""
    settings = lexicon.get("settings") or {}
    words = [f for f in fields[1:] if f is not None and not f.startswith("-")][:3]
    return any(w in settings for w in words)
