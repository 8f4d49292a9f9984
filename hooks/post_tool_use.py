"""PostToolUse and PostToolUseFailure hook: record the completed call in the ledger. Never blocks.

Run as `<venv python> -I -S hooks/post_tool_use.py` with the hook JSON on stdin.
"""

import sys

sys.path.insert(0, __file__.rpartition("/")[0])  # this script's folder: __file__ is absolute
import bootstrap  # beside this script: finds the package, reports a broken installation


def main(argv: "list[str] | None" = None) -> int:
    return bootstrap.run("governance.hook.run", "post_tool_use", argv, event="PostToolUse")


if __name__ == "__main__":
    bootstrap.leave(main())
