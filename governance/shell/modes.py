"""File modes: whether a recursive ``chmod`` is destructive, read from its mode.

A recursive ``chmod`` changes every file of a tree at once, and the modes the files had before are
not recorded anywhere. It is destructive when its mode (docs/shell.md, "Recursive permission
changes"):

- replaces modes: a numeric mode (``755``, ``000``), ``=`` (``a=r``), or ``--reference=FILE``;
  the tree's earlier modes are lost;
- removes a permission from the owner (``-w``, ``a-x``, ``u-r``): the owner can be locked out of
  the tree or its folders made untraversable;
- opens the tree or turns its files into programs: adding ``w``, ``s`` or ``t`` for anyone but the
  owner (``o+w``, ``+w``, ``g+s``), or lower-case ``x`` for anyone (``+x`` makes every data file
  executable; ``X``, which adds it to folders and programs only, is not);
- cannot be read (a mode known only at run time, or one ``chmod`` would not parse).

Adding read access (``g+r``, ``a+rX``), adding write for the owner (``u+w``) and removing access
from the group or others (``go-rwx``) are ordinary file-writes. Imported only when a ``chmod -R``
pattern is tried. No imports.
"""

from __future__ import annotations

_WHO = "ugoa"
_PERMS = "rwxXst"


def sweeping(flags: list[str], positionals: list[tuple[str | None, str]]) -> bool:
    """Whether the mode of a (recursive) ``chmod`` command is destructive (module docstring):
    its options and its positional arguments (value, source text)."""
    modes: list[str | None] = []
    for flag in flags:
        if flag.startswith("--reference"):
            return True
        if flag[1:] and all(c in _PERMS for c in flag[1:]):
            modes.append(flag)         # chmod -R -w DIR: a mode spelled like an option
    if not modes:
        if not positionals:
            return False
        modes.append(positionals[0][0])
    return any(_sweeping(mode) for mode in modes)


def _sweeping(mode: str | None) -> bool:
    if not mode:
        return True
    if mode.isdigit():
        return True
    for clause in mode.split(","):
        k = 0
        while k < len(clause) and clause[k] in _WHO:
            k += 1
        who = clause[:k] or "a"
        if k == len(clause):
            return True                # no operator: not a mode chmod reads
        while k < len(clause):
            op = clause[k]
            if op not in "+-=":
                return True
            k += 1
            end = k
            while end < len(clause) and clause[end] not in "+-=":
                end += 1
            perms = clause[k:end]
            k = end
            if op == "=" or (any(p not in _PERMS for p in perms) and perms not in ("u", "g", "o")):
                return True
            if perms in ("u", "g", "o"):   # g+u copies the owner's bits, write included
                return True
            if op == "-" and perms and ("u" in who or "a" in who):
                return True
            if op == "+" and ("x" in perms or (("w" in perms or "s" in perms or "t" in perms)
                                               and who != "u")):
                return True
    return False
