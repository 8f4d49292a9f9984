"""Governance's own network proxy for sandboxed commands: every connection decided by the state.

Claude Code (2.1.330) sends a sandboxed command's traffic to the proxy named by the project's
``sandbox.network.httpProxyPort`` / ``socksProxyPort`` instead of its own, and then applies none
of its own host rules. Its own rules cannot open a closed network to a few hosts from the project:
``deniedDomains`` wins over ``allowedDomains``, and while the user's ``strictAllowlist`` is on, the
project's ``allowedDomains`` are left out. So governance answers on one loopback port for both
kinds (the first byte tells SOCKS5 from HTTP), and decides each connection when it is made:

- the state's network rule (``control.network_rule``: the ``sandbox_network`` acts the state
  blocks or asks close it; the hosts of the acts it allows stay open) is read afresh from the
  state file and the compiled matrix, so a state change applies to the next connection;
- a closed rule lets through only a host on its list (``pypi.org``, ``*.example.org`` for any
  name under it), compared by name: an address typed in place of a listed name is refused;
- a refusal answers ``403`` (HTTP) or "not allowed by ruleset" (SOCKS5) with the reason, and is
  recorded in the ledger (event ``SandboxNetwork``).

Once a connection is let through, its bytes go to that host and port only: a second request on it
cannot reach another host. The project's settings keep ``deniedDomains: ["*"]`` where the state
closes the network, so a command whose proxy setting was taken away reaches nothing.

One proxy per project runs detached (``sandbox.proxy_process``: started by ``governance sandbox
on`` and at every session start); its port, once bound, keeps a second one out.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import json
import os
import signal
import sys
import time
from collections.abc import Sequence

from governance.project import governance_dir, replace_file
from governance.sandbox.proxy_process import IDLE_ENV, paths

HEAD_LIMIT = 64 * 1024
HANDSHAKE_TIMEOUT = 30.0


def host_allowed(host: str, patterns: Sequence[str]) -> bool:
    """Whether ``host`` is on the list: an exact name, or a name under ``*.DOMAIN``."""
    name = host.lower().rstrip(".")
    for pattern in patterns:
        wanted = pattern.lower().rstrip(".")
        if wanted.startswith("*."):
            if name.endswith(wanted[1:]) and len(name) > len(wanted) - 1:
                return True
        elif name == wanted:
            return True
    return False


def decide(project: str, host: str, port: int) -> tuple[bool, str, str]:
    """(allowed, reason, state) for one connection, by the state in force now. Governance that
    cannot decide refuses."""
    from governance.errors import GovernanceError
    from governance.policy.layer import GovernanceLayer
    from governance.sandbox.control import network_rule

    try:
        layer = GovernanceLayer(project)
    except (GovernanceError, OSError, ValueError) as exc:
        return False, (f"governance: {host}:{port} is refused because governance cannot read "
                       f"its policy ({exc}); run `governance doctor`"), "?"
    state = layer.get_activity_state().state
    rule = network_rule(layer.matrix, state)
    if not rule["closed"]:
        return True, f"the network is open in {state}", state
    if host_allowed(host, rule["allow"]):
        return True, f"{host} is a host of {', '.join(rule['opened_by'])}, allowed in {state}", state
    listed = (f"; it is open only to {', '.join(rule['allow'])} (for "
              f"{', '.join(rule['opened_by'])})" if rule["allow"] else "")
    return False, (f"governance: {host}:{port} is not reachable from a sandboxed command in "
                   f"{state}, which blocks or asks {', '.join(rule['closed_by'])}{listed}. Use "
                   "the tool the state allows, or ask the user to change the cycle state."), state


class Proxy:
    """The server: one loopback port, HTTP (CONNECT and absolute-form requests) and SOCKS5."""

    def __init__(self, project: str, idle_exit: float | None = None) -> None:
        self.project = project
        self.idle_exit = idle_exit
        self.last = time.monotonic()
        self.open = 0
        self.stop = asyncio.Event()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.open += 1
        self.last = time.monotonic()
        try:
            first = await asyncio.wait_for(reader.readexactly(1), HANDSHAKE_TIMEOUT)
            if first == b"\x05":
                await self.socks(reader, writer)
            else:
                await self.http(first, reader, writer)
        except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError,
                ConnectionError, OSError, ValueError, UnicodeError):
            pass
        finally:
            self.open -= 1
            self.last = time.monotonic()
            writer.close()

    async def http(self, first: bytes, reader: asyncio.StreamReader,
                   writer: asyncio.StreamWriter) -> None:
        head = first + await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), HANDSHAKE_TIMEOUT)
        if len(head) > HEAD_LIMIT:
            raise ValueError("request head too long")
        line = head.split(b"\r\n", 1)[0].decode("latin-1")
        parts = line.split()
        if len(parts) != 3:
            return await _http_answer(writer, 400, "governance: not an HTTP proxy request")
        method, target, _version = parts
        tunnel = method.upper() == "CONNECT"
        where = _authority(target) if tunnel else _absolute(target)
        if where is None:
            return await _http_answer(writer, 400, f"governance: cannot read a host in {target!r}")
        host, port = where
        allowed, why, state = decide(self.project, host, port)
        if not allowed:
            self.record(host, port, why, state, "http")
            return await _http_answer(writer, 403, why)
        upstream_reader, upstream_writer = await asyncio.open_connection(host, port)
        if tunnel:
            writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        else:
            upstream_writer.write(head)
        await _relay(reader, writer, upstream_reader, upstream_writer)

    async def socks(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        count = (await reader.readexactly(1))[0]
        methods = await reader.readexactly(count)
        if 0 not in methods:
            writer.write(b"\x05\xff")
            return
        writer.write(b"\x05\x00")
        version, command, _zero, kind = await reader.readexactly(4)
        if kind == 1:
            host = ".".join(str(b) for b in await reader.readexactly(4))
        elif kind == 3:
            host = (await reader.readexactly((await reader.readexactly(1))[0])).decode("idna")
        elif kind == 4:
            import ipaddress

            host = str(ipaddress.IPv6Address(await reader.readexactly(16)))
        else:
            writer.write(b"\x05\x08\x00\x01\x00\x00\x00\x00\x00\x00")
            return
        port = int.from_bytes(await reader.readexactly(2), "big")
        if version != 5 or command != 1:
            writer.write(b"\x05\x07\x00\x01\x00\x00\x00\x00\x00\x00")
            return
        allowed, why, state = decide(self.project, host, port)
        if not allowed:
            self.record(host, port, why, state, "socks5")
            writer.write(b"\x05\x02\x00\x01\x00\x00\x00\x00\x00\x00")
            return
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(host, port)
        except OSError:
            writer.write(b"\x05\x05\x00\x01\x00\x00\x00\x00\x00\x00")
            return
        writer.write(b"\x05\x00\x00\x01\x00\x00\x00\x00\x00\x00")
        await _relay(reader, writer, upstream_reader, upstream_writer)

    def record(self, host: str, port: int, why: str, state: str, via: str) -> None:
        """A refused connection, in the ledger."""
        from governance.errors import GovernanceError
        from governance.ledger import chain

        try:
            chain.append(governance_dir(self.project), {
                "event": "SandboxNetwork", "tool": "Bash", "primitive": "network",
                "action": "block", "reason": why, "state": state, "host": host, "port": port,
                "via": via})
        except GovernanceError as exc:
            print(f"governance proxy: the refusal of {host}:{port} was not recorded: {exc}",
                  file=sys.stderr, flush=True)

    async def watch_idle(self) -> None:
        """Stop when idle for ``idle_exit`` seconds, or once the project's sandbox is no longer
        part of governance (its manifest gone: ``sandbox off``, uninstall, the project removed)."""
        from governance.project import sandbox_manifest_path

        manifest = sandbox_manifest_path(self.project)
        while not self.stop.is_set():
            await asyncio.sleep(1.0)
            idle = bool(self.idle_exit) and not self.open and \
                time.monotonic() - self.last > (self.idle_exit or 0)
            if idle or not os.path.exists(manifest):
                self.stop.set()


async def _http_answer(writer: asyncio.StreamWriter, code: int, text: str) -> None:
    body = (text + "\n").encode()
    status = {400: "Bad Request", 403: "Forbidden"}[code]
    writer.write(f"HTTP/1.1 {code} {status}\r\nContent-Type: text/plain; charset=utf-8\r\n"
                 f"X-Governance: refused\r\nConnection: close\r\nContent-Length: {len(body)}"
                 "\r\n\r\n".encode() + body)
    await writer.drain()


def _authority(text: str, default: int | None = None) -> tuple[str, int] | None:
    """host:port (``[v6]:port``) -> (host, port)."""
    host, sep, port = text.rpartition(":")
    if not sep or "]" in port:
        host, port = text, ""
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not host:
        return None
    if not port:
        return (host, default) if default is not None else None
    return (host, int(port)) if port.isdigit() and 0 < int(port) < 65536 else None


def _absolute(target: str) -> tuple[str, int] | None:
    """http://host[:port]/path -> (host, port)."""
    scheme, sep, rest = target.partition("://")
    if not sep or scheme.lower() not in ("http", "ws"):
        return None
    authority = rest.split("/", 1)[0].split("?", 1)[0].rpartition("@")[2]
    return _authority(authority, 80)


async def _relay(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 upstream_reader: asyncio.StreamReader,
                 upstream_writer: asyncio.StreamWriter) -> None:
    async def pump(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        try:
            while data := await source.read(65536):
                sink.write(data)
                await sink.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            if sink.can_write_eof():
                try:
                    sink.write_eof()
                except OSError:
                    pass

    try:
        await asyncio.gather(pump(reader, upstream_writer), pump(upstream_reader, writer))
    finally:
        upstream_writer.close()


async def _serve(project: str, port: int, idle_exit: float | None) -> int:
    proxy = Proxy(project, idle_exit)
    server = await asyncio.start_server(proxy.handle, "127.0.0.1", port)
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, proxy.stop.set)
    record, _log = paths(project)
    replace_file(record, json.dumps({"pid": os.getpid(), "port": port,
                                     "started": time.time()}).encode(), mode=0o600)
    print(f"governance sandbox proxy for {project} on 127.0.0.1:{port} (pid {os.getpid()})",
          flush=True)
    watcher = asyncio.create_task(proxy.watch_idle())
    async with server:
        await proxy.stop.wait()
    watcher.cancel()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="governance-sandbox-proxy",
                                     description="the sandbox's network proxy for one project")
    parser.add_argument("--project", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--idle-exit", type=float, default=None,
                        help=f"exit after this many seconds without a connection (also "
                             f"{IDLE_ENV})")
    args = parser.parse_args(argv)
    # started detached by a hook: drop whatever else it inherited (a pipe its starter waits on)
    os.closerange(3, 1024)
    idle = args.idle_exit
    if idle is None and os.environ.get(IDLE_ENV, "").replace(".", "", 1).isdigit():
        idle = float(os.environ[IDLE_ENV])
    try:
        return asyncio.run(_serve(args.project, args.port, idle))
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            print(f"governance sandbox proxy: 127.0.0.1:{args.port} is taken (a proxy already "
                  "runs here, or another program holds the port)", file=sys.stderr)
            return 0
        print(f"governance sandbox proxy: cannot listen on 127.0.0.1:{args.port}: {exc}",
              file=sys.stderr)
        return 1

if __name__ == "__main__":
    sys.exit(main())
