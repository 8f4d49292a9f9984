"""One exception family for the whole product.

Every error that reaches a user is a :class:`GovernanceError`: the CLI maps it to an exit code and
prints it; the hooks turn it into a fail-open (or fail-closed) answer. Messages are sentences that say
what is wrong, where (file and key) and how to fix it.
"""

from __future__ import annotations


class GovernanceError(Exception):
    """Base of every error this product raises on purpose."""

    exit_code = 1

    def __init__(self, message: str, *, file: str | None = None, key: str | None = None,
                 fix: str | None = None) -> None:
        self.message = message
        self.file = file
        self.key = key
        self.fix = fix
        super().__init__(self.render())

    def render(self) -> str:
        parts = []
        if self.file:
            parts.append(f"{self.file}")
        if self.key:
            parts.append(f"at key {self.key}")
        where = (": ".join([" ".join(parts), ""]) if parts else "")
        text = f"{where}{self.message}"
        if self.fix:
            text += f" Fix: {self.fix}"
        return text


class ConfigError(GovernanceError):
    """A configuration file is missing, unreadable or invalid."""

    exit_code = 2


class OrgPolicyError(ConfigError):
    """The organisation's layer cannot be trusted or read: governance fails closed, whatever the
    project says about failing (``policy.managed``)."""

    closed = True


class StateError(GovernanceError):
    """The cycle state cannot be read, written or changed as asked."""


class PayloadError(GovernanceError):
    """Hook input on stdin is not what Claude Code sends."""


class InstallError(GovernanceError):
    """Hooks cannot be registered in or removed from a project."""


class LedgerError(GovernanceError):
    """The audit ledger cannot be written or does not verify."""


class ChainError(LedgerError):
    """Shipped ledger records do not continue the central copy of their project's chain (a gap, a
    fork, a rewritten record): ``seq`` names the first record that does not
    (``governance.server.audit``)."""

    def __init__(self, message: str, *, seq: int, fix: str | None = None) -> None:
        self.seq = seq
        super().__init__(message, fix=fix)


class TelemetryError(GovernanceError):
    """The ledger's records cannot be sent to the OpenTelemetry collector (``governance.telemetry``)."""


class StorageError(GovernanceError):
    """The decision store's database cannot be reached or is not at this version's schema
    (``governance.storage``): the message names the URL, its password masked, and the fix."""
