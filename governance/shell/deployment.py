"""Deploys: which environment a deploy command names, so the matrix can decide each one.

Hot path: no imports; loaded only when a pattern with ``deploy: true`` matches (``helm upgrade``,
``kubectl apply``, ``terraform apply``, ``pulumi up``, ``fly deploy``, ``vercel --prod``,
``serverless deploy``, ``docker --context X compose up``). The act's primitive is
``deploy-ENV`` for the first environment of ``shell.deploy_environments`` one of whose words is a
word of the command (its arguments split at every character that is not a letter or a digit:
``-n api-staging``, ``--stack org/prod``, ``-var-file=prod.tfvars``, ``--prod``, and the values of
variables set before it, ``TF_WORKSPACE=prod``), else the pattern's ``environment``, else plain
``deploy``: the environment is not known. List the most restrictive environment first.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def words(values: list[str | None]) -> list[str]:
    out: list[str] = []
    for value in values:
        token = ""
        for ch in (value or "").lower():
            if ch.isalnum():
                token += ch
            elif token:
                out.append(token)
                token = ""
        if token:
            out.append(token)
    return out


def primitive(shell: dict[str, Any], rule: dict[str, Any], values: list[str | None]
              ) -> tuple[str, str]:
    """The act's primitive and what the reason adds: ``("deploy-staging", "the environment is
    staging (the word 'staging')")``."""
    found = set(words(values))
    for env, names in shell.get("deploy_environments", {}).items():
        hit = next((n for n in names if n in found), None)
        if hit is not None:
            return f"deploy-{env}", f"the environment is {env} (the word {hit!r})"
    default = rule.get("environment")
    if default:
        return f"deploy-{default}", f"the environment is {default} (the command names no other)"
    return "deploy", "the environment is not named (shell.deploy_environments)"
