"""How the layers of an activity matrix compose into the rules in force.

Cold path (the compiler). One rule for every layer, so the packaged default under a project and an
organisation over both cannot drift apart:

- An **override** layer (the packaged default, the project, an organisation's unlocked cells)
  replaces the cells it writes: ``rules.PRIMITIVE.STATE`` (or ``_all_states``) is one unit.
- A **floor** layer (an organisation's locked cells) cannot be loosened: in each state the action in
  force is the strictest of the floor's and what the layers below it decided. The strictness
  lattice: allow < warn < ask < block = redirect. A lower cell at least as strict as the floor stays
  (a project may tighten freely, with its own message); a looser one is overruled, and when it was
  written by a layer (not the default) the overruling is reported, naming the file, key and rule.

A floor cell for a state the matrix lacks applies to every state (``compose`` reports it).
"""

from __future__ import annotations

from typing import Any, NamedTuple

ALL_STATES = "_all_states"
STRICTNESS = {"allow": 0, "warn": 1, "ask": 2, "block": 3, "redirect": 3}

# One cell in force: (action, message, redirect_to, file, key).
Cell = tuple[str, str, str, str, str]


def stricter(first: str, second: str) -> bool:
    """Whether action ``first`` is strictly stricter than ``second``."""
    return STRICTNESS[first] > STRICTNESS[second]


def strictest(first: str, second: str) -> str:
    """The stricter of two actions (``first`` on a tie)."""
    return second if stricter(second, first) else first


class RuleLayer(NamedTuple):
    """The rules one layer writes: primitive -> state (or ``_all_states``) -> cell."""

    path: str
    rules: dict[str, dict[str, Cell]]
    floor: bool = False
    # a floor's ``_all_states`` cell does not hold in these states of a primitive (the same
    # layer writes an unlocked cell for them: a default the lower layers may override)
    open: dict[str, frozenset[str]] | None = None


class Overruled(NamedTuple):
    """A cell a floor overruled: what the lower layer said, and the floor that holds instead."""

    state: str
    primitive: str
    lower: Cell
    floor: Cell
    written: bool     # the lower cell was written by a layer above the packaged default


def compose(layers: list[RuleLayer], states: list[str], default: Cell,
            written_by: frozenset[str] = frozenset()
            ) -> tuple[dict[str, dict[str, Cell]], list[Overruled], list[tuple[str, str]]]:
    """The cells in force per state, lowest layer first.

    ``default`` is the cell of a primitive no layer writes (``default_action``); ``written_by``
    the files whose overruled cells are reported as loosening attempts. Returns the table
    ``state -> primitive -> cell``, the overruled cells, and ``(file, key)`` of floor cells for
    states the matrix lacks (applied to every state)."""
    keyed: dict[str, dict[str, Cell]] = {}
    table: dict[str, dict[str, Cell]] = {s: {} for s in states}
    overruled: list[Overruled] = []
    foreign: list[tuple[str, str]] = []

    def expand() -> None:
        for state in states:
            row = table[state]
            for prim, by_state in keyed.items():
                cell = by_state.get(state) or by_state.get(ALL_STATES)
                if cell is not None:
                    row[prim] = cell

    pending = False
    for layer in layers:
        if not layer.floor:
            for prim, by_state in layer.rules.items():
                keyed.setdefault(prim, {}).update(by_state)
            pending = True
            continue
        if pending:
            expand()
            keyed, pending = {}, False
        for prim, by_state in layer.rules.items():
            for state_key, cell in by_state.items():
                if state_key == ALL_STATES or state_key in states:
                    targets = states if state_key == ALL_STATES else [state_key]
                else:
                    foreign.append((cell[3], cell[4]))
                    targets = states
                for state in targets:
                    # an explicit state's cell is more specific than the floor's _all_states one
                    if state_key == ALL_STATES and (state in by_state
                                                    or state in (layer.open or {}).get(prim, ())):
                        continue
                    lower = table[state].get(prim, default)
                    if stricter(cell[0], lower[0]):
                        table[state][prim] = cell
                        overruled.append(Overruled(state, prim, lower, cell,
                                                   lower[3] in written_by))
    if pending:
        expand()
    return table, overruled, foreign


def layers_of(table: dict[str, dict[str, Cell]], floors: list[RuleLayer],
              overruled: list[Overruled], states: list[str]) -> dict[str, dict[str, Any]]:
    """For ``explain``: per state, each primitive a floor writes with the floor's cell, the lower
    layers' cell and which one is in force."""
    under = {(o.state, o.primitive): o.lower for o in overruled}
    out: dict[str, dict[str, Any]] = {}
    for layer in floors:
        for prim, by_state in layer.rules.items():
            for state in states:
                cell = by_state.get(state) or by_state.get(ALL_STATES)
                if cell is None:
                    cell = next((c for k, c in by_state.items()
                                 if k != ALL_STATES and k not in states), None)
                if cell is None:
                    continue
                in_force = table[state].get(prim)
                lower = under.get((state, prim), in_force)
                out.setdefault(state, {})[prim] = {"floor": cell, "lower": lower,
                                                   "in_force": in_force}
    return out
