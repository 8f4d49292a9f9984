"""A helper process of ours that runs detached on a loopback port (the sandbox's proxy): found by
its port, started without waiting.

Light enough for a hook process: ``_socket`` and ``posix_spawn``, no ``subprocess``.
"""

from __future__ import annotations

from governance import system


def answers(port: int) -> bool:
    """Whether something answers on 127.0.0.1:``port`` in this network namespace."""
    import _socket

    sock = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    try:
        sock.settimeout(1.0)
        sock.connect(("127.0.0.1", port))
    except OSError:
        return False
    finally:
        sock.close()
    return True


def spawn(argv: list[str], log: str) -> None:
    """Start ``argv`` in a session of its own, its output appended to ``log``; does not wait."""
    system.makedirs(system.dirname(log), mode=0o700, exist_ok=True)
    out = system.open(log, system.O_WRONLY | system.O_APPEND | system.O_CREAT, 0o600)
    null = system.open(system.devnull, system.O_RDONLY)
    try:
        system.posix_spawn(argv[0], argv, system.environment(),
                           file_actions=[(system.POSIX_SPAWN_DUP2, null, 0),
                                         (system.POSIX_SPAWN_DUP2, out, 1),
                                         (system.POSIX_SPAWN_DUP2, out, 2)], setsid=True)
    finally:
        system.close(out)
        system.close(null)
