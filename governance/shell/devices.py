"""Disks named as files: a write to ``/dev/sda``, ``/dev/nvme0n1``, ``/dev/mmcblk0``,
``/dev/disk2`` or ``/dev/mapper/root`` overwrites a disk, so it is ``destructive``, not a
``file-write``; so is a write to ``/proc/sysrq-trigger`` or ``/sys/power/``, which stops or
restarts the machine at once.

Hot path: no imports; loaded only when a command writes under ``/dev/`` or a program without an
entry is given a path there. A device is a disk when its name under ``/dev/`` matches one of
``shell.block_devices`` (globs: ``sd*``, ``nvme*``, ``mapper/*``). ``/dev/null``, ``/dev/stdout``,
``/dev/tty`` and ``/dev/fd/N`` are not disks (``shell.safe_targets``), nor is any other device
(``/dev/shm/x`` is a file). A device named only at run time (``/dev/$DISK``, ``/dev/sd?``) may
be a disk, and counts as one.
"""

from __future__ import annotations

from governance.shell.rules import glob_match

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from governance.shell.walk import Walk

_RUN_TIME = "$`*?["


def disk(shell: dict[str, Any], path: str) -> bool:
    """Whether ``path`` (absolute, or as written) names a disk device or may name one."""
    if not path.startswith("/dev/"):
        return False
    name = path[len("/dev/"):]
    if any(c in name for c in _RUN_TIME):
        return True
    return any(glob_match(pattern, name) for pattern in shell.get("block_devices", ()))


def written(an: Walk, path: str, seg: str, reason: str) -> None:
    """A write to ``path``: ``destructive`` when it is a disk, or a file that makes the kernel
    stop or restart the machine at once (``/proc/sysrq-trigger``, ``/sys/power/state``)."""
    if path.startswith(("/proc/sysrq-trigger", "/sys/power/")):
        an.add("destructive", seg, f"{reason}: writing {path} makes the kernel act at once "
                                   "(reboot, power off, crash or suspend the machine)")
    elif disk(an.shell, path):
        an.add("destructive", seg, f"{reason}: {path} is a disk device, and writing it "
                                   "overwrites what the disk holds")


def arguments(an: Walk, base: str, fields: list[str | None], seg: str) -> None:
    """A program without an entry given a disk (``ddrescue img /dev/sdb``, ``nvme format
    /dev/nvme0n1``, ``dcfldd of=/dev/sda``) may write it."""
    for value in fields[1:]:
        if value is None or "/dev/" not in value:
            continue
        path = value[value.index("/dev/"):]
        if path != value and not value[:value.index("/dev/")].endswith("="):
            continue
        if disk(an.shell, path):
            an.add("destructive", seg, f"{base} is not a command governance knows, and it is "
                                       f"given the disk device {path}, which it may overwrite")
            return
