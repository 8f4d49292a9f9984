"""SessionStart hook: brief the model on the cycle state (startup, resume, clear, compact).

Run as `<venv python> -I -S hooks/session_start.py` with the hook JSON on stdin. Never blocks.
"""

import sys

sys.path.insert(0, __file__.rpartition("/")[0])  # this script's folder: __file__ is absolute
import bootstrap  # beside this script: finds the package, reports a broken installation


def main(argv: "list[str] | None" = None) -> int:
    return bootstrap.run("governance.session.briefing", "session_start", argv, event="SessionStart")


if __name__ == "__main__":
    bootstrap.leave(main())
