"""Layers of configuration: what a layer writes, laid over the layers below it.

Every place where one configuration file is laid over another (the activity matrix, its shell
patterns, the knowledge settings, the guardrail settings; the organisation layer to come) merges
with :func:`overlay`, so the sites cannot drift apart. The rule: **a layer changes only what it
writes.** A key it leaves out, or writes as null, keeps the value of the layer below; a mapping it
writes is merged key by key, recursively; any other value it writes replaces the one below, except
where the caller names a path (``how``) whose lists are joined or whose value is one unit.

A pydantic model's written keys are ``written(model)`` (``model_dump(exclude_unset=True)``),
never its defaults. Plain data only: no imports, so every part may use it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

# How the value at a path combines with the one below (the default: mappings merge key by key,
# anything else replaces).
REPLACE = "replace"   # the layer's value as a whole, even a mapping (e.g. one rule of the matrix)
APPEND = "append"     # lists joined: the lower layer's items, then the new ones of this layer
PREPEND = "prepend"   # lists joined: this layer's items first (tried before the lower ones)


def written(model: Any, by_alias: bool = False) -> dict[str, Any]:
    """The keys a pydantic model was given (recursively), not the defaults it filled in."""
    return dict(model.model_dump(exclude_unset=True, by_alias=by_alias))


def _strategy(how: Mapping[tuple[str, ...], str] | None, path: tuple[str, ...]) -> str | None:
    if not how:
        return None
    for pattern, strategy in how.items():
        if len(pattern) == len(path) and all(p in ("*", k) for p, k in zip(pattern, path,
                                                                         strict=True)):
            return strategy
    return None


def _without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    return value


def _join(first: list[Any], second: list[Any]) -> list[Any]:
    out: list[Any] = []
    for item in [*first, *second]:
        if item not in out:
            out.append(item)
    return out


def overlay(base: Any, top: Any, how: Mapping[tuple[str, ...], str] | None = None,
            path: tuple[str, ...] = ()) -> Any:
    """``top`` laid over ``base`` (neither is changed). ``how`` maps key paths (``*`` matches any
    key) to ``REPLACE``, ``APPEND`` or ``PREPEND``."""
    if top is None:
        return base
    strategy = _strategy(how, path)
    if base is None or strategy == REPLACE:
        return _without_nulls(top)
    if isinstance(top, dict) and isinstance(base, dict):
        out = dict(base)
        for key, value in top.items():
            if value is not None:
                out[key] = overlay(base.get(key), value, how, (*path, str(key)))
        return out
    if isinstance(top, list) and isinstance(base, list) and strategy in (APPEND, PREPEND):
        return _join(base, top) if strategy == APPEND else _join(top, base)
    return _without_nulls(top)


def stack(layers: Iterable[Any], how: Mapping[tuple[str, ...], str] | None = None) -> Any:
    """The layers, lowest first, each laid over the ones before it."""
    out: Any = None
    for layer in layers:
        out = overlay(out, layer, how)
    return out
