"""PostToolUse and PostToolUseFailure hook: record the completed call in the ledger. Never blocks.

Run as `<venv python> -I -S hooks/post_tool_use.py` with the hook JSON on stdin.
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
        from governance.hook import post_tool_use
    except Exception as exc:  # a broken installation must say so, never fail silently
        import json

        text = f"governance hook could not start ({type(exc).__name__}: {exc}); reinstall it."
        print(json.dumps({"systemMessage": text}))
        return 0
    return post_tool_use(argv)


if __name__ == "__main__":
    sys.exit(main())
