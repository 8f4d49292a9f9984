"""Compare an answer with a printed one by shape: field names, nesting, types, ``null``s and ISO
timestamps. Extra fields in ours are allowed; a printed field renamed or dropped is not.

- A printed object: ours is an object holding every printed key, each of the printed shape.
- A printed list: ours is a list; each of our items has the shape of at least one printed item.
- A printed ``null``: ours is ``null``.
- A printed string that is an ISO date or time: ours is an ISO date or time; any other string:
  ours is a string. A printed integer: ours is an integer; a printed decimal: ours is a number.
- The printed placeholders ``[...]`` and ``{...}`` (the blocked preAction answer) stand for the
  shape of the same field in another printed answer (``fill``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

SPEC = Path(__file__).parent / "data" / "cstp_spec"
ISO = re.compile(r"^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?)?$")
ELLIPSIS_LIST = "\0[...]"
ELLIPSIS_OBJECT = "\0{...}"


def printed(name: str) -> Any:
    """A printed document; ``[...]``/``{...}`` placeholders become markers."""
    text = (SPEC / name).read_text(encoding="utf-8")
    text = text.replace("[...]", json.dumps(ELLIPSIS_LIST)).replace("{...}",
                                                                      json.dumps(ELLIPSIS_OBJECT))
    return json.loads(text)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "ISO time" if ISO.match(value) else "string"
    return "array" if isinstance(value, list) else "object"


def mismatches(spec: Any, ours: Any, where: str = "", fill: dict[str, Any] | None = None
               ) -> list[str]:
    """Every place where ``ours`` does not have the shape of ``spec`` (empty when it does)."""
    name = where.rsplit(".", 1)[-1]
    if spec in (ELLIPSIS_LIST, ELLIPSIS_OBJECT):
        expected = "array" if spec == ELLIPSIS_LIST else "object"
        if _kind(ours) != expected:
            return [f"{where}: printed {expected}, ours {_kind(ours)}"]
        if fill is None or name not in fill:
            return []
        return mismatches(fill[name], ours, where, fill)
    want, got = _kind(spec), _kind(ours)
    if not (want == got or (want == "number" and got == "integer")):
        return [f"{where or '(top)'}: printed {want} {spec!r:.60}, ours {got} {ours!r:.60}"]
    if isinstance(spec, dict):
        problems = []
        for key, value in spec.items():
            if key not in ours:
                problems.append(f"{where}.{key}: printed, missing from ours")
            else:
                problems += mismatches(value, ours[key], f"{where}.{key}", fill)
        return problems
    if isinstance(spec, list) and spec:
        problems = []
        for index, item in enumerate(ours):
            tried = [mismatches(option, item, f"{where}[{index}]", fill) for option in spec]
            if all(tried):
                problems += min(tried, key=len)
        return problems
    return []


def fill_from(answer: Any) -> dict[str, Any]:
    """The fields of a printed answer's ``result``, by name, for the placeholders."""
    result = answer.get("result", answer)
    return dict(result) if isinstance(result, dict) else {}
