"""Whether ``governance install`` makes the sandbox part of governance: on by default where it can
start, for a project governance is not installed in yet.

``--sandbox`` insists (and refuses where the sandbox cannot start), ``--no-sandbox`` leaves it out
(and takes back one that was on), and an installed project keeps what it has, so that installing
again with another option never switches the sandbox behind the user's back. Where the default
cannot apply, install says why and what to install.
"""

from __future__ import annotations

from typing import NamedTuple

from governance.sandbox.control import load_manifest
from governance.sandbox.probe import Probe, probe


class Choice(NamedTuple):
    on: bool                 # turn the sandbox on (again) now
    checked: Probe | None    # the probe's verdict, when it ran
    note: str                # what to tell the user ("" when turning it on says enough)


OPT_OUT = "`governance sandbox off`, or install with --no-sandbox, leaves it out"


def choose(project: str, asked: bool | None, installed: bool, checked: Probe | None) -> Choice:
    """``asked``: ``--sandbox`` (True), ``--no-sandbox`` (False) or neither (None);
    ``installed``: our hooks were registered before this install; ``checked``: the probe's verdict
    when ``--sandbox`` already ran it."""
    if asked:
        return Choice(True, checked, "")
    if asked is False:
        return Choice(False, None, "Sandbox: left out (--no-sandbox), so governance is "
                                   "tamper-evident only here; `governance sandbox on` confines "
                                   "every Bash command.")
    if installed:
        if load_manifest(project) is not None:
            return Choice(False, None, "")
        return Choice(False, None, "Sandbox: not part of governance here, kept as installed; "
                                   "`governance sandbox on` confines every Bash command.")
    verdict = probe()
    if verdict.ok:
        return Choice(True, verdict, f"Sandbox: on by default where it can start; {OPT_OUT}.")
    return Choice(False, verdict,
                  "Sandbox: NOT turned on, because Claude Code's sandbox cannot start on this "
                  f"machine: {'; '.join(verdict.problems)}. To get it: {'; '.join(verdict.fixes)};"
                  " then run `governance sandbox on`. Until then governance is tamper-evident "
                  "only: a script run by Bash can rewrite governance's files and ledger; "
                  "governance notices and reports it, but cannot prevent it.")
