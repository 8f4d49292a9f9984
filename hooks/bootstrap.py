"""What every hook entry script does first: find the ``governance`` package and call its entry.

Imports ``os`` and ``sys`` only (``json`` when the package cannot be imported). A package that
cannot be imported is a broken installation: it is said, never swallowed, and a fail-closed
PreToolUse hook (``--on-error block``, ``GOVERNANCE_ON_ERROR=block``) denies the call.
"""

import os
import sys

# The folder that holds the governance package: the checkout (hooks/x.py) or, for the installed
# copy (governance/hookscripts/x.py), site-packages, which -S leaves off sys.path.
_HERE = os.path.dirname(os.path.abspath(__file__))
_PARENT = os.path.dirname(_HERE)


def _foreign_entries() -> "list[str]":
    """``sys.path`` entries the project could have put there: this script folder (put there by the
    entry script only to find this module) and, in an interpreter started without ``-I``, the
    working folder and ``PYTHONPATH``'s folders."""
    foreign = [_HERE]
    if not sys.flags.isolated:
        foreign.append("")
        try:
            foreign.append(os.getcwd())
        except OSError:
            pass   # a working folder that is gone holds nothing to import
        if not sys.flags.ignore_environment:
            foreign += os.environ.get("PYTHONPATH", "").split(os.pathsep)
    return foreign


def _put_package_on_path() -> None:
    """The package's folder goes first on ``sys.path``, and nothing the project could have put
    there stays on it: a ``governance`` (or ``yaml``) the agent wrote in the project is never
    imported in place of ours. Our package already imported from elsewhere (by a
    ``sitecustomize.py`` of an interpreter started without ``-I``) is refused."""
    foreign = {os.path.abspath(entry) if entry else "" for entry in _foreign_entries()}
    sys.path[:] = [entry for entry in sys.path
                   if (os.path.abspath(entry) if entry else "") not in foreign]
    for root in (_PARENT, os.path.dirname(_PARENT)):
        if os.path.isfile(os.path.join(root, "governance", "__init__.py")):
            if root in sys.path:
                sys.path.remove(root)
            sys.path.insert(0, root)
            loaded = sys.modules.get("governance")
            where = os.path.abspath(str(getattr(loaded, "__file__", "") or ""))
            if loaded is not None and not where.startswith(root + os.sep):
                raise ImportError(f"a governance package at {where} was imported before ours "
                                  f"(at {root}): run the hooks with `python -I -S`")
            return


def _fail_closed(argv: "list[str]") -> bool:
    for i, item in enumerate(argv):
        if item == "--on-error" and i + 1 < len(argv):
            return argv[i + 1] == "block"
        if item.startswith("--on-error="):
            return item.split("=", 1)[1] == "block"
    return os.environ.get("GOVERNANCE_ON_ERROR") == "block"


def broken(exc: BaseException, argv: "list[str]", event: "str | None", text_only: bool) -> int:
    """Tell Claude Code that the installation is broken: JSON for a hook, a line for the status line.

    Only a PreToolUse hook can deny, and only when it is configured to fail closed.
    """
    if text_only:
        print(f"◆ governance unavailable ({type(exc).__name__}): reinstall it")
        return 0
    import json

    text = f"governance hook could not start ({type(exc).__name__}: {exc}); reinstall it."
    answer: dict[str, object] = {"systemMessage": text}
    if event == "PreToolUse" and _fail_closed(argv):
        answer["hookSpecificOutput"] = {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                        "permissionDecisionReason": text}
    print(json.dumps(answer))
    return 0


def run(module: str, function: str, argv: "list[str] | None" = None, *,
        event: "str | None" = None, text_only: bool = False) -> int:
    """Import ``module``, call ``function(argv)`` and return its exit code.

    The entry answers its own errors; anything that still escapes it (a module it imports late
    is missing, say) is answered here like a broken installation.
    """
    words = list(sys.argv[1:] if argv is None else argv)
    try:
        _put_package_on_path()
        entry = getattr(__import__(module, fromlist=[function]), function)
        code: int = entry(words)
    except Exception as exc:  # a broken installation must say so, never fail silently
        return broken(exc, words, event, text_only)
    return code


def launch(words: "list[str]") -> int:
    """Run our module ``words[0]`` as ``__main__`` with the arguments ``words[1:]`` (the MCP
    servers, the slash commands' CLI, the detached server): ``python -I hooks/launch.py MODULE``
    is ``python -m MODULE`` without the working folder on ``sys.path``, with our package first."""
    if not words or words[0].split(".")[0] != "governance":
        print("usage: launch.py governance.MODULE [ARGUMENTS...] (one of governance's modules)",
              file=sys.stderr)
        return 2
    _put_package_on_path()
    import runpy

    sys.argv = list(words)
    runpy.run_module(words[0], run_name="__main__", alter_sys=True)
    return 0
