"""The declared intents: ``<project>/.orchestration/active_intents.yaml``, versioned with the code.

Each intent has an ``id`` (``INT-001`` or a work item id such as ``WORK-064``), a ``title``, a
``status`` (``active``, ``done``, ``blocked``), an ``owned_scope`` (gitignore-style globs, see
``intent.scope``), ``constraints`` (text shown to the model) and ``acceptance_criteria`` (a list).
The file is either a list of intents or a mapping with the key ``intents``. Every error names the
file and the key, and says how to fix it. Cold path (``yaml``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from governance.errors import ConfigError
from governance.project import intents_path

STATUSES = ("active", "done", "blocked")
KEYS = ("id", "title", "status", "owned_scope", "constraints", "acceptance_criteria")
ID = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,63}$")


@dataclass
class Intent:
    id: str
    title: str
    status: str
    owned_scope: list[str]
    constraints: str = ""
    acceptance_criteria: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "status": self.status,
                "owned_scope": self.owned_scope, "constraints": self.constraints,
                "acceptance_criteria": self.acceptance_criteria}


def path(project_dir: str) -> str:
    return intents_path(project_dir)


def load(project_dir: str) -> list[Intent]:
    """The declared intents ([] when the file does not exist); ConfigError on the first problem."""
    where = path(project_dir)
    try:
        with open(where, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise ConfigError(f"cannot read it ({exc.strerror})", file=where,
                          fix="check the file's permissions") from None
    import yaml

    try:
        data = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" (line {mark.line + 1})" if mark is not None else ""
        raise ConfigError(f"not valid YAML{line}", file=where, fix="correct the YAML") from None
    return parse(data, where)


def parse(data: object, where: str) -> list[Intent]:
    if data is None:
        return []
    if isinstance(data, dict):
        unknown = sorted(str(k) for k in data if k != "intents")
        if unknown:
            raise ConfigError(f"unknown key {unknown[0]!r}", file=where, key=unknown[0],
                              fix="put the intents in a list under `intents:`")
        data = data.get("intents", [])
        if data is None:
            data = []
    if not isinstance(data, list):
        raise ConfigError("expected a list of intents", file=where, key="intents",
                          fix="write `intents:` followed by `- id: INT-001` entries")
    intents: list[Intent] = []
    seen: set[str] = set()
    for i, entry in enumerate(data):
        intent = _intent(entry, where, f"intents[{i}]")
        if intent.id in seen:
            raise ConfigError(f"the id {intent.id!r} is declared twice", file=where,
                              key=f"intents[{i}].id", fix="give each intent its own id")
        seen.add(intent.id)
        intents.append(intent)
    return intents


def _intent(entry: object, where: str, key: str) -> Intent:
    if not isinstance(entry, dict):
        raise ConfigError("an intent must be a mapping", file=where, key=key,
                          fix=f"write the keys {', '.join(KEYS)}")
    unknown = sorted(str(k) for k in entry if k not in KEYS)
    if unknown:
        raise ConfigError(f"unknown key {unknown[0]!r}", file=where, key=f"{key}.{unknown[0]}",
                          fix=f"use only {', '.join(KEYS)}")
    intent_id = entry.get("id")
    if not isinstance(intent_id, str) or not ID.match(intent_id):
        raise ConfigError(f"the id must be a name such as INT-001 or WORK-064, got {intent_id!r}",
                          file=where, key=f"{key}.id",
                          fix="use letters, digits, '-', '_' or '.', starting with a letter")
    key = f"{key} ({intent_id})"
    title = entry.get("title")
    if not isinstance(title, str) or not title.strip():
        raise ConfigError("an intent needs a title", file=where, key=f"{key}.title",
                          fix="say in a few words what the intent is for")
    status = entry.get("status", "active")
    if status not in STATUSES:
        raise ConfigError(f"status must be one of {', '.join(STATUSES)}, got {status!r}",
                          file=where, key=f"{key}.status", fix="pick one of the statuses")
    scope = entry.get("owned_scope")
    if isinstance(scope, str):
        scope = [scope]
    if not isinstance(scope, list) or not scope or not all(
            isinstance(s, str) and s.strip() for s in scope):
        raise ConfigError("owned_scope must be a list of path globs", file=where,
                          key=f"{key}.owned_scope",
                          fix="list what the intent may change, e.g. [src/auth/, tests/auth/]")
    for glob in scope:
        if glob.strip().lstrip("!").startswith(("..", "~")) or "/../" in glob:
            raise ConfigError(f"{glob!r} reaches outside the project", file=where,
                              key=f"{key}.owned_scope",
                              fix="give globs relative to the project root")
    constraints = entry.get("constraints", "")
    if isinstance(constraints, list) and all(isinstance(c, str) for c in constraints):
        constraints = "\n".join(f"- {c}" for c in constraints)
    if not isinstance(constraints, str):
        raise ConfigError("constraints must be text", file=where, key=f"{key}.constraints",
                          fix="write the constraints as text (or a list of lines)")
    criteria = entry.get("acceptance_criteria", [])
    if isinstance(criteria, str):
        criteria = [criteria]
    if not isinstance(criteria, list) or not all(isinstance(c, str) for c in criteria):
        raise ConfigError("acceptance_criteria must be a list of texts", file=where,
                          key=f"{key}.acceptance_criteria", fix="write one criterion per item")
    return Intent(intent_id, title.strip(), status, [s.strip() for s in scope],
                  constraints.strip(), [c.strip() for c in criteria if c.strip()])


def find(intents: list[Intent], intent_id: str) -> Intent | None:
    return next((i for i in intents if i.id == intent_id), None)
