"""Run one of governance's modules as a program, isolated from the project it serves.

Run as `<venv python> -I hooks/launch.py MODULE [ARGS...]`: the MCP servers in `.mcp.json`, the
slash commands' CLI and the detached server. `-I` keeps the working folder (the project), the
`PYTHON*` variables and the user site off `sys.path`; unlike `-I -m MODULE`, the package this script
sits beside is the one imported, never another copy.
"""

import sys

sys.path.insert(0, __file__.rpartition("/")[0])  # this script's folder: __file__ is absolute
import bootstrap  # beside this script: finds the package


def main(argv: "list[str] | None" = None) -> int:
    return bootstrap.launch(list(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
