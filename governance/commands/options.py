"""Options several commands share."""

from __future__ import annotations

import argparse


def project_option(*parsers: argparse.ArgumentParser, as_json: bool = False) -> None:
    """``--project`` on each parser, and ``--json`` (``args.as_json``) with ``as_json``."""
    for parser in parsers:
        parser.add_argument("--project", help="project folder (default: found from the "
                                              "current one)")
        if as_json:
            parser.add_argument("--json", dest="as_json", action="store_true",
                                help="print JSON")
