"""PostToolUse and PostToolUseFailure hook: record the completed call in the ledger. Never blocks.

Run as `<venv python> -I -S hooks/post_tool_use.py` with the hook JSON on stdin.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bootstrap  # beside this script: finds the package, reports a broken installation


def main(argv: "list[str] | None" = None) -> int:
    return bootstrap.run("governance.hook.run", "post_tool_use", argv, event="PostToolUse")


if __name__ == "__main__":
    sys.exit(main())
