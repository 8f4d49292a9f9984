"""What a project's matrix cannot change under an organisation's layer (cold path, the compiler).

The organisation's locked rule cells are a floor (``policy.composition``). A project could still
loosen them without touching a rule: by mapping a tool to another primitive, by teaching the shell
analysis that a command is harmless, by giving a secret another owner host, or by settings such as
``on_error`` and ``grant_on_allow``. So, with an organisation's layer present:

- the organisation's tool mappings hold; a project maps a tool to another primitive only where the
  lower layers' primitive has no locked cell;
- a project's ``shell:`` section adds commands, wrappers, interpreters ... and never redefines one
  the packaged default or the organisation defines (nor lists one as read-only); its
  ``safe_targets``, ``harmless_flags``, ``local_hosts`` and ``lexicon`` are not read;
- a project's ``secrets.owners`` names new secrets only;
- a setting the organisation writes holds, except that a project may make ``on_error``,
  ``grant_on_allow`` and ``require_intent`` stricter.

Everything ignored is reported as a warning naming the project's file and key and the
organisation's rule (``governance validate``, ``governance doctor``).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from governance.policy.composition import Cell, Overruled
from governance.policy.problem import Layer, Problem

# Shell tables whose entries a project may add but not redefine, and lists it may not extend.
SHELL_TABLES = ("commands", "wrappers", "interpreters", "finders", "evaluators", "modules",
                "outputs", "task_files")
SHELL_IGNORED = ("safe_targets", "harmless_flags", "local_hosts", "lexicon")
# Settings a project may make stricter than the organisation's: their values, loosest first.
STRICTER_SETTINGS: dict[str, list[Any]] = {"on_error": ["allow", "block"],
                                           "grant_on_allow": [True, False],
                                           "require_intent": [False, True]}
FIX = "remove it from the project's matrix, or ask the organisation's administrator to change " \
      "the organisation's layer"


class Confined(NamedTuple):
    """The layers to stack (the organisation's defaults under the confined project) and the
    organisation's locked cells (primitive -> state -> cell)."""

    layers: list[Layer]
    floor: dict[str, dict[str, Cell]]
    open: dict[str, frozenset[str]]    # primitive -> states the organisation leaves unlocked


def confine(layers: list[Layer], org: Layer, problems: list[Problem]) -> Confined:
    floor: dict[str, dict[str, Cell]] = {}
    unlocked: dict[str, dict[str, Any]] = {}
    for prim, per_state in org.model.rules.items():
        for state, rule in per_state.items():
            if rule.locked is False:
                unlocked.setdefault(prim, {})[state] = rule
            else:
                floor.setdefault(prim, {})[state] = (rule.action, rule.message or "",
                                                     rule.redirect_to or "", org.path,
                                                     f"rules.{prim}.{state}")
    defaults = Layer(org.path, org.model.model_copy(update={"rules": unlocked}))
    open_states = {prim: frozenset(by_state) for prim, by_state in unlocked.items()}
    if len(layers) < 2:     # no project matrix: the packaged default, then the organisation
        return Confined([*layers, defaults], floor, open_states)
    lower, project = [*layers[:-1], org], layers[-1]
    update: dict[str, Any] = {}
    tools = _tools(project, lower, org, set(floor), problems)
    if tools is not None:
        update["tools"] = tools
    shell = _shell(project, lower, org, problems)
    if shell is not None:
        update["shell"] = shell
    owners = _owners(project, lower, org, problems)
    if owners is not None:
        update["secrets"] = project.model.secrets.model_copy(  # type: ignore[union-attr]
            update={"owners": owners})
    confined = Layer(project.path, project.model.model_copy(update=update) if update
                     else project.model)
    return Confined([*layers[:-1], defaults, confined], floor, open_states)


def _tools(project: Layer, lower: list[Layer], org: Layer, locked: set[str],
           problems: list[Problem]) -> dict[str, str] | None:
    own = project.model.tools
    if not own:
        return None
    below: dict[str, tuple[str, str]] = {}
    for ly in lower:
        for name, prim in (ly.model.tools or {}).items():
            below[name] = (prim, ly.path)
    kept: dict[str, str] = {}
    for name, prim in own.items():
        was = below.get(name)
        if was is not None and was[0] != prim and (was[1] == org.path or was[0] in locked):
            why = ("the organisation maps it" if was[1] == org.path else
                   f"the organisation locks rules for {was[0]}")
            problems.append(Problem(
                "warning", project.path, f"tools.{name}",
                f"maps {name} to {prim} instead of {was[0]}, but {why} ({org.path}); governance "
                f"keeps {was[0]}", FIX))
            continue
        kept[name] = prim
    return kept if len(kept) != len(own) else None


def _shell(project: Layer, lower: list[Layer], org: Layer,
           problems: list[Problem]) -> dict[str, Any] | None:
    own = project.model.shell
    if not own:
        return None
    defined: set[str] = set()
    for ly in lower:
        section = ly.model.shell or {}
        for table in SHELL_TABLES:
            defined.update(section.get(table) or ())
    out = dict(own)
    changed = False
    for table in SHELL_TABLES:
        entries = own.get(table)
        if not isinstance(entries, dict):
            continue
        clash = sorted(name for name in entries if name in defined)
        if clash:
            problems.append(Problem(
                "warning", project.path, f"shell.{table}",
                f"redefines {', '.join(clash)}, which governance or the organisation defines; "
                f"under the organisation's layer ({org.path}) a project adds commands and never "
                "redefines them, so governance ignores these entries", FIX))
            out[table] = {k: v for k, v in entries.items() if k not in defined}
            changed = True
    listed = own.get("read_only")
    if isinstance(listed, list):
        clash = sorted(str(n) for n in listed if n in defined)
        if clash:
            problems.append(Problem(
                "warning", project.path, "shell.read_only",
                f"lists {', '.join(clash)} as read-only, which governance or the organisation "
                f"defines otherwise ({org.path}); governance ignores these items", FIX))
            out["read_only"] = [n for n in listed if n not in defined]
            changed = True
    for key in SHELL_IGNORED:
        if own.get(key):
            problems.append(Problem(
                "warning", project.path, f"shell.{key}",
                f"would make the shell analysis find less, which the organisation's layer "
                f"({org.path}) does not let a project do; governance ignores it", FIX))
            out.pop(key)
            changed = True
    return out if changed else None


def _owners(project: Layer, lower: list[Layer], org: Layer,
            problems: list[Problem]) -> dict[str, list[str]] | None:
    secrets = project.model.secrets
    own = secrets.owners if secrets is not None else None
    if not own:
        return None
    named = {name for ly in lower if ly.model.secrets is not None
             for name in (ly.model.secrets.owners or {})}
    clash = sorted(name for name in own if name in named)
    if not clash:
        return None
    problems.append(Problem(
        "warning", project.path, "secrets.owners",
        f"gives {', '.join(clash)} other owner hosts than governance or the organisation "
        f"({org.path}); governance keeps theirs", FIX))
    return {k: v for k, v in own.items() if k not in named}


def hold_settings(merged: dict[str, Any], org: Layer, project: Layer | None,
                  problems: list[Problem]) -> None:
    """The organisation's settings over the stacked ones (``merged["settings"]``, changed in
    place), a project's stricter choice kept where ``STRICTER_SETTINGS`` allows one."""
    if org.model.settings is None:
        return
    settings = merged["settings"]
    for key in sorted(org.model.settings.model_fields_set):
        want = getattr(org.model.settings, key)
        found = settings.get(key)
        order = STRICTER_SETTINGS.get(key)
        if order is not None and found in order and order.index(found) > order.index(want):
            continue
        own = project.model.settings if project is not None else None
        if found != want and own is not None and key in own.model_fields_set:
            problems.append(Problem(
                "warning", project.path, f"settings.{key}",  # type: ignore[union-attr]
                f"{found!r} is not allowed by the organisation's settings.{key} {want!r} "
                f"({org.path}); governance uses the organisation's", FIX))
        settings[key] = want


def report(overruled: list[Overruled], foreign: list[tuple[str, str]], states: list[str],
           problems: list[Problem]) -> None:
    """Warnings for the project cells a floor overruled and for floor cells of unknown states."""
    grouped: dict[tuple[str, str, str, str], list[str]] = {}
    for item in overruled:
        if item.written:
            group = (item.lower[3], item.lower[4], item.lower[0], f"{item.floor[4]} "
                     f"({item.floor[0]}) in {item.floor[3]}")
            grouped.setdefault(group, []).append(item.state)
    for (file, key, action, rule), where in grouped.items():
        problems.append(Problem(
            "warning", file, key,
            f"{action} is looser than the organisation's rule {rule} in "
            f"{', '.join(where)}; governance ignores this cell there", FIX))
    for file, cell_key in dict.fromkeys(foreign):
        problems.append(Problem(
            "warning", file, cell_key,
            f"names a state this project does not have (its states: {', '.join(states)}), so "
            "the organisation's rule applies in every state",
            "name one of the project's states, or leave it: it holds everywhere"))
