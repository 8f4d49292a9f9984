"""PreToolUse hook: decide the tool call in the current cycle state and tell the model.

Run as `<venv python> -I -S hooks/pre_tool_use.py [--on-error block]` with the hook JSON on stdin.
"""

import os
import sys

# The folder that holds the governance package: the checkout (hooks/x.py) or, for the installed
# copy (governance/hookscripts/x.py), site-packages, which -S leaves off sys.path.
_PARENT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for _root in (_PARENT, os.path.dirname(_PARENT)):
    if os.path.isfile(os.path.join(_root, "governance", "__init__.py")):
        sys.path.insert(0, _root)
        break


def main(argv: "list[str] | None" = None) -> int:
    try:
        from governance.hook import pre_tool_use
    except Exception as exc:  # a broken installation must say so, never fail silently
        import json

        closed = "block" in (argv if argv is not None else sys.argv[1:])
        text = f"governance hook could not start ({type(exc).__name__}: {exc}); reinstall it."
        answer: dict[str, object] = {"systemMessage": text}
        if closed and "PreToolUse":
            answer["hookSpecificOutput"] = {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                            "permissionDecisionReason": text}
        print(json.dumps(answer))
        return 0
    return pre_tool_use(argv)


if __name__ == "__main__":
    sys.exit(main())
