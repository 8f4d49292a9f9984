"""Python code that deletes every file of a tree one at a time: a loop over
``os.walk(ROOT)`` (also ``os.fwalk``, ``Path(ROOT).rglob('*')``, ``.walk()``,
``glob.glob('ROOT/**', recursive=True)``) whose body deletes what it visits with no condition
in between deletes what ``shutil.rmtree(ROOT)`` deletes, so it is ``destructive`` with ROOT as
its target. A name pattern other than ``*`` (``rglob('*.pyc')``) or an ``if`` around the
delete (``if name.endswith('.pyc')``) narrows it: each delete stays a ``file-delete``, and so
does a loop over one level (``os.listdir``, ``.iterdir()``), as ``rm DIR/*`` is. Read by
``shell.python_code`` on the tree it has already parsed.
"""

from __future__ import annotations

from governance.shell.finding import Finding

TYPE_CHECKING = False
if TYPE_CHECKING:
    import ast
    from typing import Any

_WALKERS = ("os.walk", "os.fwalk", "glob.glob", "glob.iglob")
_PATH_WALKERS = ("rglob", "glob", "walk")
_DELETES = ("os.remove", "os.unlink", "os.rmdir", "shutil.rmtree", "os.removedirs")
_PATH_DELETES = ("unlink", "rmdir")


def walks(py: Any, nodes: list[ast.AST], syntax: Any) -> list[Finding]:
    """The trees ``py``'s code deletes file by file (module docstring)."""
    found: list[Finding] = []
    for node in nodes:
        if isinstance(node, (syntax.For, syntax.AsyncFor)):
            loops = [(node.iter, node.body)]
        elif isinstance(node, (syntax.ListComp, syntax.SetComp, syntax.GeneratorExp,
                               syntax.DictComp)):
            gen = node.generators[0]
            loops = [] if gen.ifs else [(gen.iter, [node])]
        else:
            continue
        for iterable, body in loops:
            whole, root = _walker(py, iterable, syntax)
            if whole and any(_deletes(py, part, syntax) for part in body):
                found.append(Finding("destructive", f"the Python code deletes every file it "
                                     f"walks below {root or 'a folder known only at run time'}",
                                     path=root))
    return found


def _walker(py: Any, node: ast.AST, syntax: Any) -> tuple[bool, str | None]:
    """(True, ROOT) when ``node`` lists every file below ROOT, else (False, None)."""
    if not isinstance(node, syntax.Call):
        return False, None
    func = node.func
    q = py.qual(func)
    q = q.replace("posix.", "os.") if q else q
    args = list(node.args)
    if q in _WALKERS:
        first = py.text(args[0]) if args else "." if q != "glob.glob" else None
        return _pattern(first) if q.startswith("glob.") else (True, first)
    if isinstance(func, syntax.Attribute) and func.attr in _PATH_WALKERS and py.pathish(func.value):
        root = py.text(func.value)
        if func.attr in ("rglob", "glob"):
            pattern = py.text(args[0]) if args else None
            if pattern is None or pattern.replace("*", "").strip("/") or (
                    func.attr == "glob" and "**" not in pattern):
                return False, None
        return True, root
    return False, None


def _pattern(pattern: str | None) -> tuple[bool, str | None]:
    if pattern is None:
        return False, None
    head, _, last = pattern.rstrip("/").rpartition("/")
    if last.replace("*", "") or any(c in head.replace("**", "") for c in "*?[") or \
            "**" not in pattern:
        return False, None                  # glob("DIR/*"): one level, as rm DIR/*
    return True, head.replace("/**", "") or "."


def _deletes(py: Any, node: ast.AST, syntax: Any) -> bool:
    """Whether ``node`` deletes something on every pass, under no condition."""
    todo = [node]
    for item in todo:
        if isinstance(item, (syntax.If, syntax.IfExp, syntax.While, syntax.Try)):
            continue
        if isinstance(item, (syntax.ListComp, syntax.SetComp, syntax.GeneratorExp)) and any(
                g.ifs for g in item.generators):
            continue
        if isinstance(item, syntax.Call):
            q = py.qual(item.func)
            if q in _DELETES or (isinstance(item.func, syntax.Attribute) and
                                 item.func.attr in _PATH_DELETES):
                return True
        todo.extend(py.children(item))
    return False
