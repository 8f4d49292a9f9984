"""The house keeps its shape: one-way arrows between the parts of ``governance/``, and no circles.

Imports are read with ``ast`` from the source, wherever they stand: at the top, inside a function,
under ``TYPE_CHECKING``, or as a literal ``importlib.import_module("governance....")``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "governance"
ROOT_MODULES = {"errors", "project", "jsoncodec", "layering", "system", "detached"}
# Lowest first. A part may import its own modules and those of parts on a lower layer, nothing else.
LAYERS: list[set[str]] = [
    {"<root>"},
    {"storage"},
    {"shell", "ledger"},
    {"policy"},
    {"intent"},
    {"decisions"},
    {"knowledge"},
    {"hook"},
    {"organisation", "telemetry"},
    {"session", "install"},
    {"report"},
    {"server"},
    {"sandbox"},
    {"commands"},
    {"bench"},
]
RANK = {part: rank for rank, parts in enumerate(LAYERS) for part in parts}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def part_of(module: str) -> str:
    """``governance.policy.matrix`` -> ``policy``; a module at the root -> ``<root>``."""
    words = module.split(".")
    if len(words) == 1:
        return "<root>"
    return "<root>" if words[1] in ROOT_MODULES else words[1]


def imported(path: Path) -> Iterator[tuple[str, int]]:
    """Every ``governance`` module ``path`` imports, with its line."""
    module = module_name(path)
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                candidate = f"{source}.{alias.name}"
                yield (candidate if _exists(candidate) else source), node.lineno
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "import_module" and node.args
              and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            yield node.args[0].value, node.lineno


def _exists(module: str) -> bool:
    relative = Path(*module.split("."))
    return (REPO / relative.with_suffix(".py")).is_file() or (REPO / relative / "__init__.py").is_file()


def graph() -> dict[str, dict[str, int]]:
    edges: dict[str, dict[str, int]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        targets = edges.setdefault(module_name(path), {})
        for target, line in imported(path):
            if target == "governance" or not target.startswith("governance."):
                continue
            targets.setdefault(target, line)
    return edges


def _cycles(edges: dict[str, dict[str, int]]) -> list[list[str]]:
    """Strongly connected groups of more than one module, or a module importing itself (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in edges.get(node, {}):
            if nxt not in edges:
                continue
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1 or node in edges.get(node, {}):
                found.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_every_import_names_a_real_module() -> None:
    missing = [f"{source} imports {target} (line {line})" for source, targets in graph().items()
               for target, line in targets.items() if not _exists(target)]
    assert not missing, missing


def test_no_import_circles() -> None:
    assert _cycles(graph()) == []


def test_arrows_point_one_way() -> None:
    upward = []
    for source, targets in graph().items():
        mine = part_of(source)
        for target, line in targets.items():
            theirs = part_of(target)
            if theirs != mine and RANK[theirs] >= RANK[mine]:
                upward.append(f"{source} (line {line}) imports {target}: {mine} may not use {theirs}")
    assert not upward, "\n".join(upward)


def test_every_part_is_placed_on_a_layer() -> None:
    parts = {part_of(module_name(path)) for path in PACKAGE.rglob("*.py")}
    assert parts <= set(RANK), sorted(parts - set(RANK))


def test_the_root_holds_only_what_every_part_uses() -> None:
    at_root = {path.stem for path in PACKAGE.glob("*.py")} - {"__init__"}
    assert at_root == ROOT_MODULES


def test_every_part_says_what_it_is_and_what_it_may_use() -> None:
    for init in PACKAGE.glob("*/__init__.py"):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert doc and "May use" in doc, f"{init} must open with what it is and what it may use"


@pytest.mark.parametrize("edges, circle", [
    ({"a": {"b": 1}, "b": {"a": 1}}, [["a", "b"]]),
    ({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}}, [["a", "b", "c"]]),
    ({"a": {"a": 1}}, [["a"]]),
    ({"a": {"b": 1}, "b": {}}, []),
])
def test_the_circle_finder_finds_circles(edges: dict[str, dict[str, int]], circle: list[list[str]]) -> None:
    assert _cycles(edges) == circle


def test_upward_imports_are_seen_wherever_they_stand(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "governance" / "shell" / "x.py"
    source.parent.mkdir(parents=True)
    source.write_text("TYPE_CHECKING = False\n"
                      "if TYPE_CHECKING:\n"
                      "    from governance.policy import matrix\n"
                      "def f():\n"
                      "    import importlib\n"
                      "    importlib.import_module('governance.ledger.chain')\n"
                      "    from . import y\n")
    (source.parent / "y.py").write_text("")
    monkeypatch.setitem(globals(), "REPO", tmp_path)
    assert sorted(imported(source)) == [("governance.ledger.chain", 6), ("governance.policy", 3),
                                        ("governance.shell.y", 7), ("importlib", 5)]


def test_every_subpackage_is_installed() -> None:
    """``pip install .`` installs what pyproject.toml lists: a folder left out is missing for every
    user of an installed copy (the MCP server, the CLI outside the checkout)."""
    import tomllib

    listed = set(tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())["tool"]
                 ["setuptools"]["packages"])
    folders = {"governance." + p.parent.relative_to(PACKAGE).as_posix().replace("/", ".")
               for p in PACKAGE.rglob("__init__.py") if p.parent != PACKAGE}
    assert folders - listed == set()
