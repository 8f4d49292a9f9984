"""Programs that administer the machine, found where the system keeps them.

A program governance has no entry for, run from a folder named ``sbin`` (``/usr/sbin/ufw``,
``/sbin/swapoff``, ``/usr/local/sbin/x``; a name without a path is the first file of that name on
the command's ``PATH``, as the shell finds it), is a system administration program: the place the
file system hierarchy keeps them, and the reason they are not on an ordinary user's ``PATH``. It is
``privilege`` (the user confirms it in every state), unless its subcommand reads as a read
(``tc qdisc show``, ``ipset list``: ``shell.lexicon``) or it is given a help or version option.
The readers kept there that people run every day are listed in ``shell.read_only`` (``lsmod``,
``ethtool``, ``sysctl`` through its own entry), and the administration programs kept in ``bin``
folders have entries of their own (``systemctl``, ``passwd``, ``hostnamectl``).

Imported by ``shell.resolver`` only for a program that no entry names (not on the hot path of a
listed command).
"""

from __future__ import annotations

from governance import system

TYPE_CHECKING = False
if TYPE_CHECKING:
    from governance.shell.walk import Walk


def sbin_program(an: Walk, first: str) -> str | None:
    """The path of the program ``first`` runs when it is in an ``sbin`` folder, else None."""
    if "/" in first:
        path: str | None = first
    else:
        from governance.shell.names import on_path

        path = on_path(an, first)
    if path is None:
        return None
    return path if system.basename(system.dirname(path)) == "sbin" else None


def administers(an: Walk, base: str, first: str, fields: list[str | None],
                raws: list[str]) -> str | None:
    """Why an unlisted program is a system administration program (see the module), or None:
    in an ``sbin`` folder, and no read verb or help option says it only reads."""
    quiet = an.shell.get("harmless_flags", ())
    if any(f in quiet for f in fields[1:]):
        return None                       # --help, --version: it stays an unlisted program
    path = sbin_program(an, first)
    if path is None:
        return None
    from governance.shell import lexicon

    found = lexicon.read(an, base, fields, raws, None)
    if found is not None and found[0] == "read":
        return None
    return (f"{base} is a system administration program ({path}): it changes the machine, "
            "not the project, and needs the user's confirmation")


# ip OBJECT COMMAND: the commands that only report, and those that change the machine; ip takes
# any prefix of a command and, where two share it, the one it checks first: the report, but for
# links and network namespaces, whose changes come first
_IP_REPORTS = ("show", "list", "lst", "ls", "get", "monitor", "help", "showdump", "save")
_IP_CHANGES = ("add", "delete", "del", "set", "change", "chg", "replace", "flush", "append",
               "prepend", "restore", "exec", "attach", "detach")
_IP_VALUED = ("-n", "-netns", "--netns", "-rc", "-rcvbuf", "-l", "-loops", "-f", "-family")


def ip_change(fields: list[str | None]) -> str | None:
    """Why ``ip [OPTIONS] OBJECT COMMAND ...`` changes the machine's network (``ip addr add``,
    ``ip a a``, ``ip r d default``, ``ip netns exec``, ``ip -batch FILE``), or None when it only
    reports (``ip a``, ``ip route get``, ``ip link show up``)."""
    words: list[str] = []
    k = 1
    while k < len(fields) and len(words) < 2:
        arg = fields[k]
        if arg is None:
            return "ip runs an OBJECT or COMMAND known only at run time"
        if arg in ("-b", "-batch", "--batch"):
            return "ip -batch runs the ip commands of a file"
        if arg in _IP_VALUED and not words:
            k += 2
            continue
        if not (arg.startswith("-") and not words):
            words.append(arg.lower())
        k += 1
    if len(words) < 2:
        return None
    changes = any(c.startswith(words[1]) for c in _IP_CHANGES)
    # `ip link` and `ip netns` try set (and add, delete ...) before show: `ip l s` is link set
    first = "link".startswith(words[0]) or ("netns".startswith(words[0]) and len(words[0]) > 2)
    if not (changes and first) and any(r.startswith(words[1]) for r in _IP_REPORTS):
        return None
    if changes:
        return f"ip {words[0]} {words[1]} changes the machine's network"
    return None
