"""The knowledge configuration: the packaged ``config/knowledge.yaml`` and the project's
``.claude/governance/knowledge.yaml`` (same keys). The project's file changes only what it
writes (``governance.layering``): mappings merge key by key at every depth, detectors are added.

Cold path (``yaml``): read when the knowledge index is built and by ``governance validate``.
Every error names the file and the key, and says how to fix it.
"""

from __future__ import annotations

from typing import Any

from governance.errors import ConfigError
from governance.knowledge.lookup import SETTINGS_NAME, settings_paths
from governance.layering import APPEND, overlay

NAME = SETTINGS_NAME
LEVELS = ("strict", "advisory", "category", "disabled")
CATEGORIES = ("process", "technical", "security", "gotchas", "credentials")
KINDS = ("project", "service", "fleet", "technology")
RISKS = ("critical", "experimental", "routine")
DETECTOR_KEYS = ("kind", "name", "words", "ports", "hosts", "paths")
LAYERING: dict[tuple[str, ...], str] = {("detectors",): APPEND}


def default_path() -> str:
    return settings_paths("")[0]


def override_path(project_dir: str) -> str:
    return settings_paths(project_dir)[1]


def load(project_dir: str) -> dict[str, Any]:
    """The merged, validated settings; raises ConfigError on the first problem."""
    default = _read(default_path(), required=True)
    override = _read(override_path(project_dir), required=False)
    merged = overlay(default, override, LAYERING)
    where = override_path(project_dir) if override else default_path()
    return validate(merged, where)


def _read(path: str, required: bool) -> dict[str, Any]:
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        if required:
            raise ConfigError("the packaged knowledge configuration is missing", file=path,
                              fix="reinstall claude-governance") from None
        return {}
    import yaml

    try:
        data = yaml.safe_load(raw) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise ConfigError(f"not valid YAML{where}", file=path, fix="correct the YAML") from None
    if not isinstance(data, dict):
        raise ConfigError("the file must be a mapping", file=path,
                          fix="write keys enforcement:, risk:, detectors:")
    unknown = sorted(str(k) for k in data if k not in ("enforcement", "risk", "detectors"))
    if unknown:
        raise ConfigError(f"unknown key {unknown[0]!r}", file=path, key=unknown[0],
                          fix="use enforcement, risk or detectors")
    return data


def validate(data: dict[str, Any], path: str) -> dict[str, Any]:
    """Check the merged settings and return them in the compiled form the index stores."""
    enforcement = _mapping(data.get("enforcement", {}), path, "enforcement")
    level = enforcement.get("level", "advisory")
    if level not in LEVELS:
        raise ConfigError(f"expected one of {', '.join(LEVELS)}, got {level!r}", file=path,
                          key="enforcement.level", fix="pick one of the levels")
    categories = _mapping(enforcement.get("categories", {}), path, "enforcement.categories")
    for category, value in categories.items():
        if category not in CATEGORIES or value not in ("strict", "advisory"):
            raise ConfigError(f"{category}: {value!r} is not a category level", file=path,
                              key=f"enforcement.categories.{category}",
                              fix=f"categories are {', '.join(CATEGORIES)}; levels strict or "
                                  "advisory")
    numbers = {}
    for key, default, low, high in (("cooldown_minutes", 5, 0.1, 24 * 60), ("max_memories", 5, 0, 50),
                                    ("max_chars", 4000, 200, 20000)):
        value = enforcement.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
            raise ConfigError(f"expected a number from {low} to {high}, got {value!r}", file=path,
                              key=f"enforcement.{key}", fix="give a number in that range")
        numbers[key] = value
    risk = _mapping(data.get("risk", {}), path, "risk")
    compiled_risk = {}
    for name in RISKS:
        entry = _mapping(risk.get(name, {}), path, f"risk.{name}")
        threshold = entry.get("threshold", {"critical": 0.8, "experimental": 0.2}.get(name, 0.5))
        if isinstance(threshold, bool) or not isinstance(threshold, int | float) or \
                not 0 <= threshold <= 1:
            raise ConfigError(f"expected a confidence from 0 to 1, got {threshold!r}", file=path,
                              key=f"risk.{name}.threshold", fix="give a number from 0 to 1")
        compiled_risk[name] = {"threshold": float(threshold),
                               **{k: _names(entry.get(k, []), path, f"risk.{name}.{k}")
                                  for k in ("primitives", "words", "states")}}
    detectors = data.get("detectors", [])
    if not isinstance(detectors, list):
        raise ConfigError("detectors must be a list", file=path, key="detectors",
                          fix="write a list of {kind, name, words|ports|hosts|paths}")
    return {"level": level, "categories": dict(categories), **numbers, "risk": compiled_risk,
            "detectors": [_detector(d, path, f"detectors[{i}]") for i, d in enumerate(detectors)]}


def _detector(value: object, path: str, key: str) -> dict[str, Any]:
    entry = _mapping(value, path, key)
    unknown = sorted(str(k) for k in entry if k not in DETECTOR_KEYS)
    if unknown:
        raise ConfigError(f"unknown detector key {unknown[0]!r}", file=path,
                          key=f"{key}.{unknown[0]}", fix=f"use {', '.join(DETECTOR_KEYS)}")
    if entry.get("kind") not in KINDS:
        raise ConfigError(f"kind must be one of {', '.join(KINDS)}", file=path, key=f"{key}.kind",
                          fix="set kind: project, service, fleet or technology")
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ConfigError("a detector needs a name", file=path, key=f"{key}.name",
                          fix="set name: the name SOPs and memories are found by")
    out = {"kind": entry["kind"], "name": name.strip().lower()}
    for field in ("words", "ports", "hosts", "paths"):
        out[field] = [w.lower() for w in _names(entry.get(field, []), path, f"{key}.{field}")]
    if not any(out[f] for f in ("words", "ports", "hosts", "paths")):
        raise ConfigError("a detector needs words, ports, hosts or paths", file=path, key=key,
                          fix="say what in a call names it")
    if "{name}" in out["name"] and not any("{name}" in p for p in out["paths"]):
        raise ConfigError("name {name} needs a path with {name}", file=path, key=f"{key}.paths",
                          fix="add a path such as */Projects/{name}/*")
    return out


def _mapping(value: object, path: str, key: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ConfigError("expected a mapping", file=path, key=key, fix="write key: value lines")
    return value


def _names(value: object, path: str, key: str) -> list[str]:
    listed = [value] if isinstance(value, str | int) and not isinstance(value, bool) else value
    if not isinstance(listed, list) or not all(
            isinstance(v, str | int) and not isinstance(v, bool) for v in listed):
        raise ConfigError("expected a list of names", file=path, key=key,
                          fix="write a list such as [docker, compose]")
    return [str(v).strip() for v in listed if str(v).strip()]
