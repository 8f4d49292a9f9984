"""Status line for Claude Code: `◆ DO · WORK-064 · 5 blocked · 2 denials this session`.

Run as `<venv python> -I hooks/statusline.py` with Claude Code's status-line JSON on stdin.
"""

import os
import sys

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if os.path.isfile(os.path.join(_ROOT, "governance", "__init__.py")):  # run from a checkout
    sys.path.insert(0, _ROOT)


def main(argv: "list[str] | None" = None) -> int:
    try:
        from governance.statusline import main as statusline
    except Exception as exc:  # a broken installation must say so, never fail silently
        print(f"◆ governance unavailable ({type(exc).__name__}): reinstall it")
        return 0
    return statusline(argv)


if __name__ == "__main__":
    sys.exit(main())
