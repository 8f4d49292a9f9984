"""Status line for Claude Code: `◆ DO · WORK-064 · 5 blocked · 2 denials this session`.

Run as `<venv python> -I -S hooks/statusline.py` with Claude Code's status-line JSON on stdin.
"""

import sys

sys.path.insert(0, __file__.rpartition("/")[0])  # this script's folder: __file__ is absolute
import bootstrap  # beside this script: finds the package, reports a broken installation


def main(argv: "list[str] | None" = None) -> int:
    return bootstrap.run("governance.session.statusline", "main", argv, text_only=True)


if __name__ == "__main__":
    bootstrap.leave(main())
