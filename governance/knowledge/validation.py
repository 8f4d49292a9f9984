"""What ``governance validate`` (and ``governance doctor``) says of the knowledge sources: the
configuration, every SOP that does not parse, and credentials sections that look like secrets
instead of where-to-find notes.

Cold path. Credentials are screened with the ledger's redaction rules: a provider key or token, a
private key, a password in a URL, a bearer or basic credential is a secret, and an SOP should say
where a secret is kept, not hold it. The generic ``name: value`` rule is left out here: a
credentials note says "token: 1Password, vault infra" by design.
"""

from __future__ import annotations

from dataclasses import dataclass

from governance.errors import ConfigError
from governance.knowledge import settings
from governance.knowledge.sop import load_all
from governance.ledger.redaction import redact


@dataclass
class Report:
    """The SOPs that serve, and each problem as a line (``errors`` stop nothing else from serving)."""

    sops: int
    errors: list[str]
    warnings: list[str]


def check(project_dir: str) -> Report:
    errors: list[str] = []
    warnings: list[str] = []
    try:
        settings.load(project_dir)
    except ConfigError as exc:
        errors.append(exc.render())
    sops, problems = load_all(project_dir)
    errors.extend(p.render() for p in problems)
    for sop in sops:
        text = sop.sections.get("credentials", "")
        if text and any(kind != "secret" for kind in _redacted_kinds(redact(text))):
            warnings.append(f"{sop.path} at key credentials: the section looks like it holds a "
                            "secret. Fix: say where the secret is kept (a vault item, a secret "
                            "name), not the secret itself")
    return Report(len(sops), errors, warnings)


def sop_problems(project_dir: str) -> list[tuple[str, str, str]]:
    """Each SOP that does not parse (and so is skipped): its file, the problem (with the key when
    there is one) and the fix. ``governance doctor`` lists them."""
    _sops, problems = load_all(project_dir)
    found = []
    for exc in problems:
        where = f"at key {exc.key}: " if exc.key else ""
        found.append((exc.file or "", where + exc.message,
                      exc.fix or "correct the SOP, or remove it"))
    return found


def _redacted_kinds(text: str) -> list[str]:
    kinds = []
    for piece in text.split("[REDACTED:")[1:]:
        kinds.append(piece.split("]", 1)[0])
    return kinds
