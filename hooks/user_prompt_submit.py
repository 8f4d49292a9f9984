"""UserPromptSubmit hook: one line of context when the cycle state changed since the last prompt.

Run as `<venv python> -I -S hooks/user_prompt_submit.py` with the hook JSON on stdin. Never blocks.
"""

import sys

sys.path.insert(0, __file__.rpartition("/")[0])  # this script's folder: __file__ is absolute
import bootstrap  # beside this script: finds the package, reports a broken installation


def main(argv: "list[str] | None" = None) -> int:
    return bootstrap.run("governance.session.briefing", "user_prompt_submit", argv, event="UserPromptSubmit")


if __name__ == "__main__":
    bootstrap.leave(main())
