"""PreToolUse hook: decide the tool call in the current cycle state and tell the model.

Run as `<venv python> -I -S hooks/pre_tool_use.py [--on-error block]` with the hook JSON on stdin.
"""

import sys

sys.path.insert(0, __file__.rpartition("/")[0])  # this script's folder: __file__ is absolute
import bootstrap  # beside this script: finds the package, reports a broken installation


def main(argv: "list[str] | None" = None) -> int:
    return bootstrap.run("governance.hook.run", "pre_tool_use", argv, event="PreToolUse")


if __name__ == "__main__":
    bootstrap.leave(main())
