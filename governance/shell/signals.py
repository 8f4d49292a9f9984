"""Signals that reach governance's resident server.

With http hooks, the server answers every tool call; stopped, the calls go through ungoverned
(Claude Code's failure policy, fail-open by default). ``governance serve --stop`` is
``governance-admin``, and so is any other way of sending the server a signal: ``kill PID`` with its
pid or its process group, ``kill -1`` (every process the user may signal), ``pkill``/``pgrep``-style
selection by name, full command line or user (``pkill -f governance``, ``pkill python``,
``pkill -u $USER``), ``killall NAME`` and ``fuser -k`` on the server's port or files. The server is
found through its record, ``.claude/governance/server.json``, and only while its pid is alive: with
no server running, a kill is the ordinary act its pattern says. A process chosen only at run time
(``kill $(cat pid.txt)``) while the server runs is ``shell-unknown``; ``kill $!``, the command's own
background job, is not the server.

Imported by ``shell.resolver`` for ``kill``, ``pkill``, ``killall``, ``skill`` and ``fuser`` only
(its ``SIGNALLERS``);
``re`` is loaded for a ``pkill`` pattern.
"""

from __future__ import annotations

import os

from governance import system
from governance.project import SERVER_RECORD, governance_dir, read_record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from governance.shell.walk import Walk

_PKILL_VALUED = frozenset(("-g", "--pgroup", "-G", "--group", "-P", "--parent", "-s", "--session",
                           "-t", "--terminal", "-u", "--euid", "-U", "--uid", "--signal",
                           "-F", "--pidfile", "--ns", "--nslist", "-q", "--queue", "-c",
                           "--cgroup"))
_KILLALL_VALUED = frozenset(("-s", "--signal", "-u", "--user", "-o", "--older-than", "-y",
                             "--younger-than", "-Z", "--context"))
_USERS = frozenset(("-u", "--euid", "-U", "--uid", "--user"))


class Server:
    """The running server: pid, port, process name, command line and owner."""

    __slots__ = ("cmdline", "comm", "group", "pid", "port", "record", "uid")

    def __init__(self, pid: int, record: dict[str, Any], path: str) -> None:
        self.pid = pid
        self.record = path
        port = record.get("port")
        self.port = port if isinstance(port, int) else None
        self.comm = _read(f"/proc/{pid}/comm").strip()
        self.cmdline = _read(f"/proc/{pid}/cmdline").replace("\0", " ").strip()
        try:
            self.group = os.getpgid(pid)
            self.uid = os.stat(f"/proc/{pid}").st_uid
        except OSError:
            self.group, self.uid = -1, -1


def running(project: str | None) -> Server | None:
    """The project's resident server when its record names a live process."""
    if not project:
        return None
    path = os.path.join(governance_dir(project), SERVER_RECORD)
    record = read_record(path)
    pid = record.get("pid") if record is not None else None
    if record is None or not isinstance(pid, int) or pid <= 1 or not system.alive(pid):
        return None
    return Server(pid, record, path)


def check(an: Walk, base: str, fields: list[str | None], raws: list[str], seg: str) -> None:
    """Add ``governance-admin`` when ``base ARGS`` signals the running server (``shell-unknown``
    when the process it signals is known only at run time), and ``destructive`` when it signals
    every process: ``kill`` of ``-1`` or init (``1``), which stops the machine, ``killall5``,
    and a ``pkill``/``killall``/``skill`` selection that takes in every process of a user or
    every process name (:func:`_every`)."""
    if base == "kill":
        every = {-1, 1} & set(_pids(fields[1:], raws[1:])[0])
        if every:
            an.add("destructive", seg, "kill -1 signals every process the user may signal"
                   if -1 in every else "kill 1 signals init, whose end stops the machine")
    elif base == "killall5":
        an.add("destructive", seg, "killall5 signals every process outside its own session")
    elif base != "fuser":
        why = _every(base, fields[1:])
        if why:
            an.add("destructive", seg, why)
    server = running(getattr(an.check, "base", None))
    if server is None:
        return
    args, rawargs = fields[1:], raws[1:]
    verdict = _fuser(args, server) if base == "fuser" else \
        _kill(args, rawargs, server) if base == "kill" else _select(base, args, server)
    if verdict is True:
        an.add("governance-admin", seg,
               f"{base} signals governance's resident server (pid {server.pid}, recorded in "
               f"{server.record}), which answers the hooks: ask the user to stop it with "
               "`governance serve --stop` from a terminal")
    elif verdict is None:
        an.unknown(seg, f"{base} signals a process known only at run time while governance's "
                   f"server runs (pid {server.pid})")


def _kill(args: list[str | None], raws: list[str], server: Server) -> bool | None:
    """``kill [-s SIG | -SIG | -n NUM] PID...``: True for the server, its group or every
    process; None for a pid known only at run time."""
    pids, unknown = _pids(args, raws)
    if any(pid in (server.pid, -1) or (server.group > 1 and pid == -server.group)
           for pid in pids):
        return True
    return None if unknown else False


def _pids(args: list[str | None], raws: list[str]) -> tuple[list[int], bool]:
    """The process ids ``kill [-s SIG | -SIG | -n NUM] PID...`` signals (none when it lists
    signals), and whether one is known only at run time (not ``$!``, the command's own job)."""
    pids: list[int] = []
    unknown = False
    k, options = 0, True
    while k < len(args):
        arg, raw = args[k], raws[k] if k < len(raws) else ""
        k += 1
        if arg is None:
            if "$!" not in raw:                 # the command's own background job
                unknown = True
            continue
        if options and arg == "--":
            options = False
            continue
        if options and arg in ("-s", "-n", "--signal"):
            k += 1
            continue
        if options and arg in ("-l", "-L", "--list", "--table"):
            return [], False
        if options and arg.startswith("-") and not arg[1:].isdigit():
            continue                            # -9, -KILL, -SIGTERM: the signal
        if options and arg.startswith("-") and arg[1:].isdigit() and k == 1 and len(args) > 1:
            continue                            # kill -9 PID: the first -N is the signal
        if arg.startswith("%"):
            continue                            # a job of this shell
        try:
            pids.append(int(arg))
        except ValueError:
            continue
    return pids, unknown


# process names and command lines a selection that takes in every process matches
_EVERY = ("systemd", "init", "sshd", "bash", "-bash", "node", "python3", "claude", "postgres",
          "/usr/lib/systemd/systemd --user", "/usr/sbin/sshd -D", "node server.js")


def _every(base: str, args: list[str | None]) -> str | None:
    """Why a ``pkill``/``killall``/``skill`` selection takes in every process of a user (``-u
    USER`` and no name) or every process (a pattern that matches any name: ``.``, ``.*``,
    ``''``), or None."""
    flags, users, patterns = _selection(base, args)
    if any(p is None for p in patterns):
        return None
    if not patterns:
        named = [u for u in users if u is not None]
        if not users:
            return None
        return f"{base} signals every process of {', '.join(named) or 'a user known only at run time'}"
    regex = base != "killall" or bool(flags & {"-r", "--regexp"})
    exact = bool(flags & {"-x", "--exact", "-e"}) if base == "killall" else \
        bool(flags & {"-x", "--exact"})
    if not regex:
        return None
    import re

    for pattern in patterns:
        try:
            found = re.compile(str(pattern), re.IGNORECASE)
        except re.error:
            continue
        if all(found.fullmatch(name) if exact else found.search(name) for name in _EVERY):
            return f"{base} {pattern!r} matches every process name"
    return None


def _selection(base: str, args: list[str | None]) -> tuple[set[str], list[str | None],
                                                           list[str | None]]:
    """``pkill``/``killall``/``skill`` arguments: (flags, users, name patterns); None for one
    known only at run time."""
    valued = _KILLALL_VALUED if base == "killall" else _PKILL_VALUED
    flags: set[str] = set()
    users: list[str | None] = []
    patterns: list[str | None] = []
    k = 0
    while k < len(args):
        arg = args[k]
        k += 1
        if arg is None:
            patterns.append(None)
        elif arg.startswith("-") and arg not in ("-", "--"):
            name = arg.split("=", 1)[0]
            if name in valued or (name in _USERS and "=" not in arg):
                value = arg.split("=", 1)[1] if "=" in arg else (args[k] if k < len(args) else "")
                k += 0 if "=" in arg else 1
                if name in _USERS:
                    users.append(value)
            elif len(arg) > 2 and arg[1] != "-" and arg[1:].isalnum() and not arg[1:].isdigit():
                flags.update("-" + c for c in arg[1:])
            else:
                flags.add(arg)
        elif arg != "--":
            patterns.append(arg)
    return flags, users, patterns


def _select(base: str, args: list[str | None], server: Server) -> bool | None:
    """``pkill``/``killall``/``skill``: whether the selection takes in the server."""
    flags, users, patterns = _selection(base, args)
    if any(u is None for u in users) or any(p is None for p in patterns):
        return None
    if users and not any(_is_owner(u, server) for u in users if u is not None):
        return False
    if not patterns:
        return bool(users)                      # pkill -u USER: every process of theirs
    full = bool(flags & {"-f", "--full"})
    exact = bool(flags & {"-x", "--exact", "-e"}) if base == "killall" else \
        bool(flags & {"-x", "--exact"})
    regex = base != "killall" or bool(flags & {"-r", "--regexp"})
    return any(_matches(str(p), server, full, exact, regex,
                        bool(flags & {"-i", "--ignore-case", "-I"})) for p in patterns)


def _matches(pattern: str, server: Server, full: bool, exact: bool, regex: bool,
             fold: bool) -> bool | None:
    subject = server.cmdline if full else server.comm
    if not regex:
        return (pattern.lower() if fold else pattern) == (subject.lower() if fold else subject) \
            or os.path.basename(server.cmdline.split(" ")[0]) == pattern
    import re

    try:
        found = re.compile(pattern, re.IGNORECASE if fold else 0)
    except re.error:
        return None
    return bool(found.fullmatch(subject) if exact else found.search(subject))


def _is_owner(user: str, server: Server) -> bool:
    for one in user.split(","):
        if one.isdigit() and int(one) == server.uid:
            return True
        try:
            import pwd

            if pwd.getpwnam(one).pw_uid == server.uid:
                return True
        except (KeyError, ImportError):
            continue
    return False


def _fuser(args: list[str | None], server: Server) -> bool | None:
    """``fuser -k NAME...``: the processes using a port (``8765/tcp``) or a file."""
    if not any(a is not None and a.startswith("-") and "k" in a.lstrip("-") and
               not a.startswith("--") for a in args) and "--kill" not in args:
        return False
    governance = os.path.dirname(server.record)
    for arg in args:
        if arg is None:
            return None
        if arg.startswith("-"):
            continue
        name = arg.split("/", 1)[0] if arg.endswith(("/tcp", "/udp")) else None
        if name is not None and name.isdigit() and int(name) == server.port:
            return True
        if name is None and os.path.abspath(arg).startswith(governance):
            return True
    return False


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(4096)
    except OSError:
        return ""
