"""What decides a preAction when its guardrails cannot: the deployment's fail mode
(``settings.fail_mode`` in guardrails.yaml: ``open``, the default, or ``closed``), read leniently
when the guardrail files do not validate, so a broken file cannot turn a fail-closed deployment
open; the answer an internal error gets under it; and how ``governance doctor`` says which is in
force.
"""

from __future__ import annotations

import os
from typing import Any

from governance.decisions.guardrails import load_compiled, timestamp
from governance.errors import GovernanceError


def fail_mode(project_dir: str) -> str:
    """``settings.fail_mode`` (open|closed). When the guardrail files do not validate, the mode
    is read from them leniently (the project's file first), so a broken file cannot turn a
    fail-closed deployment open; then ``GOVERNANCE_FAIL_MODE``; then open."""
    try:
        return str(load_compiled(project_dir)["settings"].get("fail_mode") or "open")
    except GovernanceError:
        pass
    from governance.project import default_guardrails_path, override_guardrails_path

    for path in (override_guardrails_path(project_dir), default_guardrails_path()):
        try:
            import yaml

            with open(path, encoding="utf-8") as handle:
                raw = yaml.safe_load(handle)
            mode = raw["settings"]["fail_mode"]
        except Exception:  # a file that cannot tell is skipped
            continue
        if mode in ("open", "closed"):
            return str(mode)
    chosen = os.environ.get("GOVERNANCE_FAIL_MODE", "open")
    return chosen if chosen in ("open", "closed") else "open"


def internal_error(project_dir: str, exc: BaseException) -> dict[str, Any]:
    """The answer of a preAction that could not be evaluated: allowed with a warning when the
    deployment fails open, blocked with the reason when it fails closed."""
    mode = fail_mode(project_dir)
    text = f"governance could not evaluate this decision ({type(exc).__name__}: {exc})."
    closed = mode == "closed"
    response: dict[str, Any] = {
        "allowed": not closed, "decision_id": None, "relevant_decisions": [],
        "guardrail_results": [], "calibration_context": None, "block_reasons": [],
        "violations": [], "warnings": [], "evaluated": 0, "evaluatedAt": timestamp(),
        "patterns_summary": [], "patterns": [], "fail_mode": mode, "decided_by": "fail_mode",
        "internal_error": text,
    }
    if closed:
        response["block_reasons"] = [{
            "guardrail": "governance-evaluation",
            "message": text + " The deployment is configured fail-closed.",
            "suggestion": "Fix the cause (errors.log and `governance doctor` name it), then "
                          "retry."}]
    else:
        response["warnings"] = [text + " Proceeding because the deployment is fail-open."]
    return response


def deployment_summary(project_dir: str) -> tuple[bool, str, str]:
    """(ok, what, fix) for ``governance doctor``: the fail mode and the quality rule in force and
    where they are set, or the guardrail file that does not validate."""
    try:
        settings = load_compiled(project_dir)["settings"]
    except GovernanceError as exc:
        return (False, f"guardrails do not validate, so pre_action runs fail-{fail_mode(project_dir)}"
                       f": {exc.render()}", "correct the file named, then run `governance "
                                            "guardrails list`")
    mode = "closed" if settings.get("fail_mode") == "closed" else "open"
    effect = ("a guardrail warning or an evaluation failure blocks" if mode == "closed"
              else "a guardrail warning or an evaluation failure warns and allows")
    strict = [name for name in ("tags", "pattern") if settings.get(f"require_{name}")]
    quality = (f"refuses a decision without {' or '.join(strict)}" if strict
               else "derives missing tags and pattern")
    return (True, f"pre_action is fail-{mode} ({effect}; guardrails.yaml settings.fail_mode); "
                  f"quality rule {quality}", "")
