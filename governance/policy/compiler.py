"""Validate activity matrix files and compile them into the form the hook reads.

Cold path only: imports yaml and pydantic. ``compile_matrix`` takes the raw bytes of the packaged
default and of the project's override (if any), validates them fully and returns a plain dict
(marshal-serialisable) plus the list of problems found. Errors make the matrix unusable; warnings are
reported by ``governance validate`` but do not stop governance.
"""

from __future__ import annotations

import fnmatch
import re
from typing import Any

import yaml
from pydantic import ValidationError

from governance.layering import APPEND, REPLACE, stack, written
from governance.policy import confinement
from governance.policy.composition import STRICTNESS, RuleLayer, compose, layers_of, stricter
from governance.policy.problem import Layer, Problem
from governance.policy.schema import (
    ACTIONS,
    ALL_STATES,
    DEFAULT_STATES,
    FORMAT_VERSION,
    MatrixFile,
    Settings,
    SkillRestriction,
    describe_validation_error,
    format_major,
)
from governance.project import org_matrix_path

BLOCKING = ("block", "redirect")
# How the matrix's layers combine (governance.layering): a rule (one primitive in one state) and a
# cycle's phase order are each one unit; everything else merges key by key. Sections with entries
# of their own origin (rules, tools, protected paths, shell patterns) are also read layer by layer
# below, so each entry names the file it came from.
MATRIX_LAYERING = {("rules", "*", "*"): REPLACE, ("cycles", "*"): REPLACE,
                   ("secrets", "paths"): APPEND, ("secrets", "not_paths"): APPEND,
                   ("secrets", "variables"): APPEND, ("secrets", "not_variables"): APPEND,
                   ("secrets", "owners", "*"): REPLACE, ("egress", "allow"): APPEND}
# The bottom layer: the schema's defaults, under every file.
_SCHEMA_DEFAULTS = {**MatrixFile().model_dump(exclude={"shell"}), "settings": Settings().model_dump()}


def _parse(path: str, data: bytes, problems: list[Problem]) -> MatrixFile | None:
    try:
        raw = yaml.safe_load(data.decode("utf-8")) if data.strip() else {}
    except UnicodeDecodeError as exc:
        problems.append(Problem("error", path, "(file)", f"not UTF-8 text ({exc.reason})",
                                "save the file as UTF-8"))
        return None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "(file)"
        problems.append(Problem("error", path, where, f"YAML syntax error: {exc}".replace("\n", " "),
                                "correct the YAML at that line"))
        return None
    if not isinstance(raw, dict):
        problems.append(Problem("error", path, "(top level)",
                                f"expected a mapping of sections, got {type(raw).__name__}",
                                "start the file with keys such as version:, rules:"))
        return None
    try:
        model = MatrixFile.model_validate(raw)
    except ValidationError as exc:
        for key, text in describe_validation_error(exc):
            problems.append(Problem("error", path, key, text, "see the matrix format in README.md"))
        return None
    major = format_major(model.version)
    if major is None:
        problems.append(Problem("error", path, "version",
                                f"expected a format version such as 1 or \"1.0\", got "
                                f"{model.version!r}", f"write version: {FORMAT_VERSION}"))
        return None
    if major > FORMAT_VERSION:
        problems.append(Problem(
            "error", path, "version",
            f"the file is in matrix format {major}, newer than this claude-governance reads "
            f"(format {FORMAT_VERSION})",
            "upgrade claude-governance (`uv tool upgrade claude-governance`, `pipx upgrade "
            f"claude-governance` or `pip install -U`), or write version: {FORMAT_VERSION} if the "
            f"file uses only format {FORMAT_VERSION} keys"))
        return None
    return model


def _glob_ok(pattern: str) -> bool:
    if not pattern:
        return False
    try:
        re.compile(fnmatch.translate(pattern))
    except re.error:
        return False
    return True


_Layer = Layer


def compile_matrix(default: tuple[str, bytes], override: tuple[str, bytes] | None,
                   config_hash: str, org: tuple[str, bytes] | None = None
                   ) -> tuple[dict[str, Any] | None, list[Problem]]:
    """The compiled matrix of the packaged default, the project's override and the
    organisation's layer (``docs/organisation.md``), with every problem found."""
    problems: list[Problem] = []
    layers: list[_Layer] = []
    org_layer = None
    if org is not None:
        org_model = _parse(org[0], org[1], problems)
        if org_model is None:
            return None, problems
        org_layer = _Layer(org[0], org_model)
    base = _parse(default[0], default[1], problems)
    if override is not None:
        top = _parse(override[0], override[1], problems)
        if top is None:
            return None, problems
        if top.extends == "default":
            if base is None:
                return None, problems
            layers = [_Layer(default[0], base), _Layer(override[0], top)]
        else:
            layers = [_Layer(override[0], top)]
            if base is not None:
                # the override may omit tools/protected and exec-config paths: inherit those from
                # the default
                layers.insert(0, _Layer(default[0], base))
                layers[0].model = MatrixFile(tools=base.tools, protected_paths=base.protected_paths,
                                             exec_config_paths=base.exec_config_paths,
                                             secrets=base.secrets, egress=base.egress,
                                             sandbox_network=base.sandbox_network,
                                             mcp_paths=base.mcp_paths, shell=base.shell)
    elif base is not None:
        layers = [_Layer(default[0], base)]
    if not layers or problems:
        return None, problems
    return _build(layers, config_hash, problems, org_layer), problems


def _build(layers: list[_Layer], config_hash: str, problems: list[Problem],
           org: _Layer | None = None) -> dict[str, Any] | None:
    written_by = frozenset(ly.path for ly in layers[1:])
    floors: list[RuleLayer] = []
    if org is not None:
        # the organisation's unlocked cells and its other sections lie under the project, as
        # defaults; its locked cells are a floor over everything (policy.composition)
        confined = confinement.confine(layers, org, problems)
        layers, floor_rules, floor_open = confined.layers, confined.floor, confined.open
    top = layers[-1]
    main = top.path
    # what each layer writes, laid over the ones below (an unset key keeps the lower value)
    merged = stack([_SCHEMA_DEFAULTS, *(written(ly.model) for ly in layers)], MATRIX_LAYERING)
    states = list(merged.get("states") or DEFAULT_STATES)
    if org is not None:
        confinement.hold_settings(merged, org, top if top.path != org.path else None, problems)
    settings = Settings.model_validate(merged["settings"])
    default_action = merged["default_action"]
    default_file = next((ly.path for ly in reversed(layers)
                         if "default_action" in ly.model.model_fields_set), main)
    if org is not None and "default_action" in org.model.model_fields_set \
            and stricter(org.model.default_action, default_action):
        if default_file in written_by:
            problems.append(Problem(
                "warning", default_file, "default_action",
                f"{default_action} is looser than the organisation's default_action "
                f"{org.model.default_action} ({org.path}); governance uses the organisation's",
                "remove the key, or write an action at least as strict"))
        default_action, default_file = org.model.default_action, org.path
    # rules: primitive -> state -> (action, message, redirect_to, file, key)
    rules: dict[str, dict[str, tuple[str, str, str, str, str]]] = {}
    rule_layers: list[RuleLayer] = []
    for ly in layers:
        own: dict[str, dict[str, tuple[str, str, str, str, str]]] = {}
        for prim, per_state in ly.model.rules.items():
            slot = rules.setdefault(prim, {})
            for state, rule in per_state.items():
                key = f"rules.{prim}.{state}"
                if rule.locked is not None and (org is None or ly.path != org.path):
                    problems.append(Problem(
                        "warning", ly.path, f"{key}.locked",
                        "locked means something only in the organisation's matrix "
                        f"({org_matrix_path()}); here it changes nothing", "remove the key"))
                if state != ALL_STATES and state not in states:
                    if org is not None and ly.path == org.path:
                        problems.append(Problem(
                            "warning", ly.path, key,
                            f"state {state!r} is not one of the project's states "
                            f"({', '.join(states)}), so this unlocked default applies nowhere",
                            "name a state the projects have, or lock the rule"))
                        continue
                    problems.append(Problem(
                        "error", ly.path, key, f"unknown state {state!r}",
                        f"use one of {', '.join(states)} or {ALL_STATES}, or add it to states:"))
                if rule.action == "redirect" and not rule.redirect_to:
                    problems.append(Problem("error", ly.path, key, "action redirect needs redirect_to",
                                            "name the tool or agent to use instead"))
                cell = (rule.action, rule.message or "", rule.redirect_to or "", ly.path, key)
                slot[state] = own.setdefault(prim, {})[state] = cell
        rule_layers.append(RuleLayer(ly.path, own))
    if org is not None:
        for prim, floor_cells in floor_rules.items():
            rules.setdefault(prim, {}).update(floor_cells)
            for floor_cell in floor_cells.values():
                if floor_cell[0] == "redirect" and not floor_cell[2]:
                    problems.append(Problem("error", org.path, floor_cell[4],
                                            "action redirect needs redirect_to",
                                            "name the tool or agent to use instead"))
        floors = [RuleLayer(org.path, floor_rules, floor=True, open=floor_open)]
    if settings.fallback_state not in states:
        problems.append(Problem("error", main, "settings.fallback_state",
                                f"unknown state {settings.fallback_state!r}",
                                f"use one of {', '.join(states)}"))
    decide, overruled, foreign = compose(
        [*rule_layers, *floors], states, (default_action, "", "", default_file, "default_action"),
        written_by)
    confinement.report(overruled, foreign, states, problems)
    tools_exact: dict[str, tuple[str, str, str]] = {}
    tools_glob: list[tuple[str, str, str, str]] = []
    own_tools = top.model.tools is not None
    for ly in reversed(layers):  # top layer's entries are tried first
        for name, prim in (ly.model.tools or {}).items():
            key = f"tools.{name}"
            if not name.strip():
                problems.append(Problem("error", ly.path, key, "empty tool name",
                                        "write the tool's name, e.g. WebFetch or mcp__memory__*"))
                continue
            if any(ch in name for ch in "*?["):
                if not _glob_ok(name):
                    problems.append(Problem("error", ly.path, key, f"bad glob {name!r}",
                                            "use fnmatch syntax such as mcp__memory__*"))
                    continue
                tools_glob.append((name, prim, ly.path, key))
            elif name not in tools_exact:
                tools_exact[name] = (prim, ly.path, key)
            if prim not in rules:
                level = "error" if (own_tools and ly is top) else "warning"
                problems.append(Problem(
                    level, ly.path, key, f"tool {name!r} maps to primitive {prim!r}, which has no rules",
                    f"add rules.{prim} or map the tool to a primitive that has rules"
                    + ("" if level == "error" else f" (calls get default_action {default_action})")))
    protected: list[str] = []
    for ly in reversed(layers):
        for i, pattern in enumerate(ly.model.protected_paths or []):
            if not _glob_ok(pattern):
                problems.append(Problem("error", ly.path, f"protected_paths[{i}]",
                                        f"bad glob {pattern!r}", "use fnmatch syntax"))
            elif pattern not in protected:
                protected.append(pattern)
    exec_config: list[str] = []       # every layer's entries, joined (as protected_paths)
    for ly in layers:
        for i, pattern in enumerate(ly.model.exec_config_paths or []):
            if not _glob_ok(pattern) or (pattern.startswith("$") and "/" not in pattern):
                problems.append(Problem("error", ly.path, f"exec_config_paths[{i}]",
                                        f"bad path pattern {pattern!r}",
                                        "use an fnmatch glob: a file name, a path relative to "
                                        "the project, ~/PATH, /PATH or $XDG_CONFIG_HOME/PATH"))
            elif pattern.lower() not in exec_config:
                exec_config.append(pattern.lower())
    secrets = _secrets(merged, layers, problems)
    network = _sandbox_network(layers, merged.get("sandbox_network") or {}, decide, states,
                               default_action, problems)
    mcp_paths: dict[str, Any] = {"keys": [], "servers": {}}
    for ly in layers:
        if ly.model.mcp_paths is not None:
            for key in ly.model.mcp_paths.keys:
                if key not in mcp_paths["keys"]:
                    mcp_paths["keys"].append(key)
            mcp_paths["servers"].update(ly.model.mcp_paths.servers)
    phase_to_state: dict[str, str] = {}
    for ly in layers:
        for phase, state in (ly.model.phase_to_state or {}).items():
            key = f"phase_to_state.{phase}"
            if phase.count("/") != 1 or not all(phase.split("/")):
                problems.append(Problem("error", ly.path, key, "expected a key of the form cycle/PHASE",
                                        "write e.g. implementation-cycle/DO: DO"))
            if state not in states:
                problems.append(Problem("error", ly.path, key, f"unknown state {state!r}",
                                        f"use one of {', '.join(states)}"))
            phase_to_state[phase] = state
    cycles: dict[str, list[str]] = {}
    for phase in phase_to_state:
        cycle, _, name = phase.partition("/")
        cycles.setdefault(cycle, []).append(name)
    for ly in layers:
        for cycle, phases in (ly.model.cycles or {}).items():
            for i, name in enumerate(phases):
                if f"{cycle}/{name}" not in phase_to_state and name not in states:
                    problems.append(Problem(
                        "error", ly.path, f"cycles.{cycle}[{i}]",
                        f"phase {name!r} of {cycle} maps to no state",
                        f"add phase_to_state.{cycle}/{name}: STATE"))
            cycles[cycle] = list(phases)
    skills: dict[str, dict[str, Any]] = {}
    for ly in layers:
        for state, restriction in (ly.model.skill_restrictions or {}).items():
            key = f"skill_restrictions.{state}"
            if state not in states:
                problems.append(Problem("error", ly.path, key, f"unknown state {state!r}",
                                        f"use one of {', '.join(states)}"))
            for pattern in [*(restriction.allowed or []), *restriction.blocked]:
                if not _glob_ok(pattern):
                    problems.append(Problem("error", ly.path, key, f"bad glob {pattern!r}",
                                            "use fnmatch syntax such as new-*"))
            whole = SkillRestriction.model_validate(merged["skill_restrictions"][state])
            skills[state] = {"allowed": whole.allowed, "blocked": list(whole.blocked),
                             "message": whole.block_message, "file": ly.path, "key": key}
    shell = _compile_shell(layers, problems)
    mapped = {entry[0] for entry in tools_exact.values()} | {g[1] for g in tools_glob}
    mapped |= set(shell.get("primitives", ())) if shell else set()
    mapped |= {"shell-execute", "shell-unlisted", "shell-background", "skill-invoke",
               "governance-admin", "sandbox-escape", "unknown", "exec-config",
               "secret-read", "exfiltration"}
    for prim in rules:
        if prim not in mapped:
            origin = next(ly.path for ly in reversed(layers) if prim in ly.model.rules)
            problems.append(Problem("warning", origin, f"rules.{prim}",
                                    f"no tool or shell pattern maps to primitive {prim!r}",
                                    "map a tool to it under tools:, or remove the rules"))
    if any(p.level == "error" for p in problems):
        return None
    summary = _summary(decide)
    return {
        "config_hash": config_hash,
        "files": [ly.path for ly in layers],
        "states": states,
        "default_action": default_action,
        "default_file": default_file,
        # the organisation's layer (docs/organisation.md): its file, and per state the cells it
        # writes with the lower layers' cell and the one in force (``governance explain``)
        "org_file": org.path if org is not None else "",
        "org_cells": layers_of(decide, floors, overruled, states) if floors else {},
        # on_error_set: the project's own matrix says on_error (require_intent fails closed
        # unless it says allow)
        "settings": {**settings.model_dump(), "on_error_set": any(
            ly.model.settings is not None and "on_error" in ly.model.settings.model_fields_set
            for ly in layers[1:])},
        "decide": decide,
        "summary": summary,
        "strictest": _strictest(states, summary),
        "allowed_in": {p: [s for s in states if decide[s].get(p, ("?",))[0] not in BLOCKING]
                       for p in rules},
        "tools_exact": tools_exact,
        "tools_glob": tools_glob,
        "protected": protected,
        "exec_config": exec_config,
        "exec_config_kinds": exec_kinds(exec_config),
        "secrets": secrets,
        "sandbox_network": network,
        "mcp_paths": mcp_paths,
        "skills": skills,
        "phase_to_state": phase_to_state,
        "cycles": cycles,
        "shell": shell,
    }


# A host a state may open to sandboxed commands: a name or ``*.name`` (no scheme, path or port).
_HOST = re.compile(r"^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$")
OPENING = ("allow", "warn")


def _sandbox_network(layers: list[_Layer], acts: dict[str, list[str]],
                     decide: dict[str, dict[str, tuple[str, str, str, str, str]]],
                     states: list[str], default_action: str,
                     problems: list[Problem]) -> dict[str, dict[str, Any]]:
    """Per state, what the sandbox does with Bash's network: ``closed`` where the state blocks,
    asks or redirects any act of ``sandbox_network`` (``closed_by``), and then open only to the
    hosts of the acts it still allows (``allow``, ``opened_by``). An act listed without hosts
    needs hosts that cannot be listed (any web page; the git host, which push and fetch share),
    so it opens nothing: the hook keeps deciding it, and the WebFetch tool is not sandboxed."""
    for ly in layers:
        for prim, hosts in (ly.model.sandbox_network or {}).items():
            for i, host in enumerate(hosts):
                if not _HOST.match(host):
                    problems.append(Problem(
                        "error", ly.path, f"sandbox_network.{prim}[{i}]", f"bad host {host!r}",
                        "write a lower-case host name such as pypi.org or *.npmjs.org (no "
                        "scheme, path or port; `*` alone would open every host)"))
    out: dict[str, dict[str, Any]] = {}
    for state in states:
        action = {p: decide[state][p][0] if p in decide[state] else default_action for p in acts}
        closed_by = [p for p in acts if action[p] not in OPENING]
        opened_by = [p for p in acts if closed_by and acts[p] and action[p] in OPENING]
        allow = list(dict.fromkeys(h for p in opened_by for h in acts[p]))
        out[state] = {"closed": bool(closed_by), "closed_by": closed_by, "allow": allow,
                      "opened_by": opened_by}
    return out


def loosened(base: dict[str, Any], compiled: dict[str, Any]) -> list[str]:
    """Where ``compiled`` answers a call less strictly than ``base`` (the packaged default alone):
    ``rules.PRIMITIVE.STATE (block -> warn)`` for each such cell of the states both know, and
    ``default_action (warn -> allow)``. ``governance validate`` shows them, so a change that
    loosens the policy is seen, never silent."""
    out: list[str] = []
    old_default, new_default = base["default_action"], compiled["default_action"]
    if STRICTNESS[new_default] < STRICTNESS[old_default]:
        out.append(f"default_action ({old_default} -> {new_default})")
    for state in (s for s in base["states"] if s in compiled["states"]):
        old_table, new_table = base["decide"][state], compiled["decide"][state]
        for prim in sorted(set(old_table) | set(new_table)):
            old = old_table[prim][0] if prim in old_table else old_default
            new = new_table[prim][0] if prim in new_table else new_default
            if STRICTNESS[new] < STRICTNESS[old]:
                out.append(f"rules.{prim}.{state} ({old} -> {new})")
    return out


def _strictest(states: list[str], summary: dict[str, Any]) -> str:
    """The most restrictive state: the most primitives blocked, then the most asked; the first of
    equals in the matrix's order. Governance falls back to it when a state file it did not write
    has no accepted version."""
    return max(states, key=lambda s: (len(summary[s]["blocked"]), len(summary[s]["asked"])))


def _summary(decide: dict[str, dict[str, tuple[str, str, str, str, str]]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for state, table in decide.items():
        by_action: dict[str, list[str]] = {a: [] for a in ACTIONS}
        for prim, entry in table.items():
            by_action[entry[0]].append(prim)
        blocked = sorted(by_action["block"] + by_action["redirect"])
        out[state] = {"blocked": blocked, "warned": sorted(by_action["warn"]),
                      "asked": sorted(by_action["ask"]), "allowed": sorted(by_action["allow"])}
    return out


def _compile_shell(layers: list[_Layer], problems: list[Problem]) -> dict[str, Any] | None:
    sections = [(ly.path, ly.model.shell) for ly in layers if ly.model.shell]
    if not sections:
        return None
    try:
        from governance.shell import schema as shell_schema
    except ImportError:  # shell analysis not installed: Bash stays shell-execute
        return None
    found = len(problems)
    for path, section in sections:   # each file on its own, so every error names its file
        try:
            shell_schema.validate_section(section, path)
        except Exception as exc:  # the shell schema reports its own errors as GovernanceError
            problems.append(_shell_problem(path, exc))
    if len(problems) > found:
        return None
    try:
        return shell_schema.compile_layers(sections)
    except Exception as exc:
        problems.append(_shell_problem(sections[-1][0], exc))
        return None


def _shell_problem(path: str, exc: Exception) -> Problem:
    key = getattr(exc, "key", None) or "shell"
    return Problem("error", path, str(key), getattr(exc, "message", str(exc)),
                   getattr(exc, "fix", "") or "")


def exec_kinds(patterns: list[str]) -> tuple[frozenset[str], frozenset[str], tuple[str, ...],
                                             tuple[str, ...], tuple[str, ...]]:
    """``exec_config_paths`` sorted by how a target is compared with them: file names and paths
    in the project without glob characters (looked up), the same with them (matched), and the
    patterns under the home, a variable's folder or an absolute path (matched against the whole
    path, once resolved by the call)."""
    names: set[str] = set()
    rels: set[str] = set()
    name_globs: list[str] = []
    rel_globs: list[str] = []
    elsewhere: list[str] = []
    for pattern in patterns:
        if pattern.startswith(("~/", "$", "/")):
            elsewhere.append(pattern)
            continue
        glob = any(c in pattern for c in "*?[")
        if "/" in pattern:
            (rel_globs.append(pattern) if glob else rels.add(pattern))
        else:
            (name_globs.append(pattern) if glob else names.add(pattern))
    return (frozenset(names), frozenset(rels), tuple(name_globs), tuple(rel_globs),
            tuple(elsewhere))


def secret_hints(compiled: Any) -> tuple[str, ...]:
    """The longest literal part of each pattern in a compiled ``secrets`` list (nested tuples,
    sets and strings), a leading ``~/`` or ``$VAR/`` dropped; ``""`` for a pattern with none. A
    name or path that holds none of them matches no pattern: the hook's path guard asks the
    matcher only about one that holds one (``PathGuard.secret_path``)."""
    found: set[str] = set()
    stack = [compiled]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if item[:1] in ("~", "$") and "/" in item:
                item = item.split("/", 1)[1]
            pieces, piece, k = [], "", 0
            while k < len(item):
                c = item[k]
                if c == "[" and "]" in item[k + 2:]:
                    k = item.index("]", k + 2)
                    c = "*"
                if c in "*?":
                    pieces.append(piece)
                    piece = ""
                else:
                    piece += c
                k += 1
            found.add(max([*pieces, piece], key=len))
        elif isinstance(item, (list, tuple, set, frozenset)):
            stack.extend(item)
    return tuple(sorted(found))


def _secrets(merged: dict[str, Any], layers: list[_Layer], problems: list[Problem]
             ) -> dict[str, Any]:
    """``secrets`` and ``egress`` as the hook reads them: path patterns sorted as ``exec_kinds``
    sorts them (lower case), variable patterns (upper case) as names looked up and globs
    matched, owners as (pattern, hosts) pairs tried in order, the taint's lifetime in seconds.
    Each layer's entries are checked where they are written."""
    for ly in layers:
        written_secrets = ly.model.secrets
        for key in ("paths", "not_paths"):
            for i, pattern in enumerate(getattr(written_secrets, key, None) or []):
                if not pattern or not _glob_ok(pattern) or (pattern.startswith("$")
                                                            and "/" not in pattern):
                    problems.append(Problem(
                        "error", ly.path, f"secrets.{key}[{i}]", f"bad path pattern {pattern!r}",
                        "use an fnmatch glob: a file name, a path relative to the project, "
                        "~/PATH, /PATH or $XDG_CONFIG_HOME/PATH"))
        for key in ("variables", "not_variables"):
            for i, pattern in enumerate(getattr(written_secrets, key, None) or []):
                if not pattern.strip() or not _glob_ok(pattern) or " " in pattern:
                    problems.append(Problem("error", ly.path, f"secrets.{key}[{i}]",
                                            f"bad variable pattern {pattern!r}",
                                            "use a name or an fnmatch glob such as *_TOKEN"))
        hosts = [(f"secrets.owners.{name}[{i}]", host)
                 for name, listed in ((written_secrets.owners if written_secrets else None)
                                      or {}).items()
                 for i, host in enumerate(listed)]
        hosts += [(f"egress.allow[{i}]", host) for i, host in
                  enumerate((ly.model.egress.allow if ly.model.egress else None) or [])]
        for key, host in hosts:
            if not host or not _glob_ok(host) or "/" in host or " " in host:
                problems.append(Problem("error", ly.path, key, f"bad host pattern {host!r}",
                                        "write a host name or a glob such as *.example.com"))
    spec: dict[str, Any] = merged.get("secrets") or {}

    def paths(key: str) -> tuple[Any, ...]:
        return exec_kinds(list(dict.fromkeys(p.lower() for p in spec.get(key) or [] if p)))

    def names(key: str) -> tuple[frozenset[str], tuple[str, ...]]:
        upper = [p.upper() for p in spec.get(key) or [] if p.strip()]
        return (frozenset(p for p in upper if not any(c in p for c in "*?[")),
                tuple(dict.fromkeys(p for p in upper if any(c in p for c in "*?["))))

    owners = [(secret.lower() if secret.startswith(("~", "/", ".", "$", "*.")) or "/" in secret
               else secret.upper(), tuple(h.lower() for h in hosts))
              for secret, hosts in (spec.get("owners") or {}).items()]
    allow = (merged.get("egress") or {}).get("allow") or []
    compiled = {"paths": paths("paths"), "variables": names("variables")}
    return {"paths": compiled["paths"], "not_paths": paths("not_paths"),
            "variables": compiled["variables"], "not_variables": names("not_variables"),
            "hints": {key: secret_hints(value) for key, value in compiled.items()},
            "owners": owners, "egress": tuple(h.lower() for h in allow),
            "taint_seconds": float(spec.get("taint_minutes") or 60) * 60.0}
