"""``governance report``: one self-contained HTML page of what governance decided and saw
(decisions over time, denials, asks, knowledge, intents, decision memory, tamper evidence), to
read in any browser or attach to a review. ``--json`` prints the figures instead."""

from __future__ import annotations

import argparse

DEFAULT_OUT = "report.html"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--project", help="project folder (default: found from the current one)")
    parser.add_argument("--since", help="from this time: ISO 8601 (UTC) or an age like 7d, 12h")
    parser.add_argument("--until", help="up to this time: ISO 8601 (UTC) or an age")
    parser.add_argument("--state", help="only decisions taken in this state, e.g. DO")
    parser.add_argument("--agent", help="only this agent: a sub-agent's id or type, a CSTP "
                                        "agent, or `main` for the session's own agent")
    parser.add_argument("--out", default=DEFAULT_OUT, metavar="FILE",
                        help=f"where to write the page (default: {DEFAULT_OUT})")
    parser.add_argument("--open", action="store_true", help="open the page in the browser")
    parser.add_argument("--json", dest="as_json", action="store_true",
                        help="print the figures as JSON instead of writing the page")


def run(args: argparse.Namespace) -> int:
    import json
    import os

    from governance.errors import GovernanceError
    from governance.project import project_from_cli, replace_file
    from governance.report import selection
    from governance.report.figures import build

    project = project_from_cli(args.project)
    chosen = selection.parse(args.since, args.until, args.state, args.agent)
    figures = build(project, chosen, fork=True)   # a command has no threads: it may fork
    if args.as_json:
        print(json.dumps(figures, indent=2, ensure_ascii=False))
        return 0
    from governance.report.page import render

    out = os.path.abspath(args.out)
    try:
        replace_file(out, render(figures).encode("utf-8"))
    except OSError as exc:
        raise GovernanceError(f"the report could not be written to {out}: {exc.strerror or exc}",
                              file=out, fix="give --out a file in a folder you can write to"
                              ) from None
    chain = figures["tamper"]["chain"]
    status = "the chain verifies" if chain and chain["ok"] else "THE CHAIN IS BROKEN"
    print(f"Wrote {out}: {figures['activity']['records']:,} records, {status} "
          f"({figures['timing']['total_s']:.2f} s).")
    if args.open:
        import webbrowser
        from pathlib import Path

        if not webbrowser.open(Path(out).as_uri()):
            print("No browser could be started; open the file yourself.")
    return 0 if chain is None or chain["ok"] else 1
