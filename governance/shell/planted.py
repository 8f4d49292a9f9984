"""Commands a command writes into a file that runs them later: a shell start-up file, a git
hook, ``.envrc``, a cron table, a systemd unit, ``package.json``'s scripts (the
``exec_config_paths``). Writing such a file is ``exec-config``, and what it runs is decided when
it runs, if it runs under governance; but the person's own next terminal, ``git commit`` or
``npm install`` runs it outside any hook. So the text written is read now, and a command in it
that changes governance makes the write ``governance-admin``. Only that: a hook that runs the
tests, or a ``.bashrc`` that sets ``PATH``, stays the ``exec-config`` it was.

Called by ``shell.analysis`` when the command wrote an ``exec_config_paths`` file (the hook's
path guard says which) with text it knows, and by the policy layer for the file tools. May use
the root modules and ``shell.schedule``; the analysis itself is reached through the callback it
is given.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from governance.shell.walk import Walk

_CRON_SYSTEM = ("/etc/crontab", "/etc/cron.d/", "/etc/anacrontab")   # a user field first
_CRON_USER = ("/var/spool/cron/",)
_MAX_TEXT = 65536


def check(an: Walk, written: list[tuple[str, str, str]],
          analyse: Callable[[str], list[tuple[str, str]]]) -> None:
    """``written``: (path of an ``exec_config_paths`` file, text this command wrote there, the
    segment that wrote it); ``analyse(text)``: the primitives and reasons of a command line, as
    a separate analysis finds them."""
    for path, text, seg in written:
        if not text.strip() or len(text) > _MAX_TEXT:
            continue
        for line in commands(path, text):
            why = next((reason for primitive, reason in analyse(line)
                        if primitive == "governance-admin"), None)
            if why is not None:
                an.add("governance-admin", seg, f"the command writes into {path}, which runs "
                                                f"it later, a command that changes governance "
                                                f"({why})")
                break


def commands(path: str, text: str) -> list[str]:
    """The command lines a file runs: a cron table's entries, ``package.json``'s scripts, the
    file itself for shell start-up files, hooks and the rest."""
    name = path.rsplit("/", 1)[-1]
    if name == "package.json":
        import json

        try:
            data = json.loads(text)
        except ValueError:
            return [text]                     # not JSON (yet): read as it stands
        scripts = data.get("scripts") if isinstance(data, dict) else None
        return [v for v in scripts.values() if isinstance(v, str)] \
            if isinstance(scripts, dict) else []
    if path.startswith(_CRON_SYSTEM) or path.startswith(_CRON_USER) or name == "crontab":
        from governance.shell.schedule import entries

        found = entries(text)
        if path.startswith(_CRON_SYSTEM):     # minute hour day month weekday USER command
            found = [e.split(None, 1)[1] for e in found if len(e.split(None, 1)) == 2]
        return found
    if name.endswith(".service") or name.endswith(".timer"):
        return [line.split("=", 1)[1] for line in text.splitlines()
                if line.strip().startswith("Exec") and "=" in line]
    return [text]
