"""``governance report``: one self-contained HTML page of what governance decided and saw
(decisions over time, denials, asks, knowledge, intents, decision memory, tamper evidence), to
read in any browser or attach to a review. ``--json`` prints the figures instead. ``--server URL``
fetches the page a server answers at ``/report`` instead: a shipped project's (``--project ID``)
or every shipped project's together (``--project '*'``), from the server's central copy."""

from __future__ import annotations

import argparse
from typing import Any

DEFAULT_OUT = "report.html"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--project", help="project folder (default: found from the current one); "
                                          "with --server, a shipped project's id, or '*' for "
                                          "every shipped project")
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
    parser.add_argument("--server", metavar="URL",
                        help="fetch the report from a server's /report (its central copy of "
                             "shipped ledgers) instead of reading a local project")
    parser.add_argument("--token", help="with --server: the server's token (default: "
                                        "$GOVERNANCE_SERVER_TOKEN)")


FIGURES = '<script type="application/json" id="figures">'


def fetched(server: str, token: str | None, query: dict[str, str | None]) -> tuple[str, dict[str, Any]]:
    """The page a server answers at ``/report`` for ``query``, and its figures; a refusal or an
    unreachable server is a GovernanceError saying which."""
    import json
    from urllib.parse import urlencode

    from governance.errors import GovernanceError, LedgerError
    from governance.ledger import client

    parts = client.address(server, LedgerError)
    central = client.Client(parts, client.token(token, LedgerError), GovernanceError)
    path = "/report?" + urlencode({name: value for name, value in query.items() if value})
    try:
        answer = central.send("GET", path, content_type=None)
    finally:
        central.close()
    raw = answer.raw
    if answer.status != 200:
        found = answer.document()
        said = str(found.get("error")) if raw and isinstance(found, dict) else \
            raw[:200].decode("utf-8", "replace")
        raise GovernanceError(f"the server {central.url} answered {answer.status} to {path}: "
                              f"{said}", fix="pass the server's token with --token or "
                              f"${client.TOKEN_ENV}" if answer.status == 401 else None)
    page = raw.decode("utf-8")
    try:
        figures: dict[str, Any] = json.loads(page.split(FIGURES, 1)[1].split("</script>", 1)[0])
    except (IndexError, ValueError):
        raise GovernanceError(f"the server {central.url} answered a page without its figures",
                              fix="check that --server names a governance server") from None
    return page, figures


def _holds(figures: dict[str, Any]) -> bool | None:
    """Whether the chain holds: the local ledger's verification, or each shipped project's
    copy; None when it was not checked."""
    if "team" in figures:
        return all(row["head"]["links"] == "hold" for row in figures["team"]["projects"])
    chain = figures["tamper"]["chain"]
    return None if chain is None else bool(chain["ok"])


def run(args: argparse.Namespace) -> int:
    import json
    import os

    from governance.errors import GovernanceError
    from governance.project import project_from_cli, replace_file
    from governance.report import selection
    from governance.report.figures import build

    page = None
    if args.server:
        page, figures = fetched(args.server, args.token, {
            "project": args.project, "since": args.since, "until": args.until,
            "state": args.state, "agent": args.agent})
    else:
        project = project_from_cli(args.project)
        chosen = selection.parse(args.since, args.until, args.state, args.agent)
        figures = build(project, chosen, fork=True)   # a command has no threads: it may fork
    if args.as_json:
        print(json.dumps(figures, indent=2, ensure_ascii=False))
        return 0
    from governance.report.page import render

    out = os.path.abspath(args.out)
    try:
        replace_file(out, (page if page is not None else render(figures)).encode("utf-8"))
    except OSError as exc:
        raise GovernanceError(f"the report could not be written to {out}: {exc.strerror or exc}",
                              file=out, fix="give --out a file in a folder you can write to"
                              ) from None
    holds = _holds(figures)
    status = "the chain is not verified" if holds is None else \
        "the chain verifies" if holds else "THE CHAIN IS BROKEN"
    print(f"Wrote {out}: {figures['activity']['records']:,} records, {status} "
          f"({figures['timing']['total_s']:.2f} s).")
    if args.open:
        import webbrowser
        from pathlib import Path

        if not webbrowser.open(Path(out).as_uri()):
            print("No browser could be started; open the file yourself.")
    return 0 if holds is not False else 1
