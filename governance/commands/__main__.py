"""``python -m governance.commands ...``: the ``governance`` command without its console script."""

from governance.commands.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
