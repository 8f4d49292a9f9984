"""Status line for Claude Code: `◆ DO · WORK-064 · 5 blocked · 2 denials this session`.

Run as `<venv python> -I -S hooks/statusline.py` with Claude Code's status-line JSON on stdin.
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
        from governance.statusline import main as statusline
    except Exception as exc:  # a broken installation must say so, never fail silently
        print(f"◆ governance unavailable ({type(exc).__name__}): reinstall it")
        return 0
    return statusline(argv)


if __name__ == "__main__":
    sys.exit(main())
