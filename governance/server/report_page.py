"""``GET /report``: the page ``governance report`` writes, built for each request from the served
project's ledger, trace and decision store, with the filters of the query string: ``agent``,
``state``, ``since``, ``until`` (as the command takes them) and ``project``.

A server serves one project (``Settings.project``): ``project``, when given, must name it (its
folder or the folder's name), or the answer is 404. A team server that reports across projects
is a later issue.

The token is checked before this handler runs, like every route but ``/healthz``. The page is
built on a worker thread, one request at a time (a second waits for the first): a report over a
million records takes seconds, and hook answers keep coming from the event loop meanwhile.
"""

from __future__ import annotations

import json
import os
import threading
from urllib.parse import parse_qs

FILTERS = ("project", "agent", "state", "since", "until")
_ONE_AT_A_TIME = threading.Lock()
JSON = (b"content-type", b"application/json")

Answer = tuple[int, bytes, list[tuple[bytes, bytes]]]


def _error(status: int, message: str) -> Answer:
    return status, json.dumps({"error": message}).encode(), [JSON]


def _serves(project: str, named: str) -> bool:
    """Whether ``named`` (a folder or a folder's name) is the served project."""
    named = named.strip().rstrip("/")
    if not named:
        return True
    if "/" not in named:
        return named == os.path.basename(project.rstrip("/"))
    return os.path.realpath(named) == os.path.realpath(project)


def answer(project: str, method: str, query_string: bytes) -> Answer:
    """The status, body and headers of a ``/report`` request (run it off the event loop)."""
    if method != "GET":
        return 405, json.dumps({"error": "use GET"}).encode(), [JSON, (b"allow", b"GET")]
    try:
        query = parse_qs(query_string.decode("utf-8"), strict_parsing=False)
    except (UnicodeDecodeError, ValueError):
        return _error(400, "the query string is not UTF-8 text")
    unknown = sorted(set(query) - set(FILTERS))
    if unknown:
        return _error(400, f"unknown filter {unknown[0]!r}: the report takes "
                           f"{', '.join(FILTERS)}")
    values = {name: found[-1] for name, found in query.items() if found and found[-1].strip()}
    if not _serves(project, values.get("project", "")):
        return _error(404, f"this server serves one project, {os.path.basename(project)} "
                           f"({project}); a report across projects needs a team server, which "
                           "is not there yet")
    from governance.errors import GovernanceError
    from governance.report import selection

    try:
        chosen = selection.parse(values.get("since"), values.get("until"), values.get("state"),
                                 values.get("agent"))
    except GovernanceError as exc:
        return _error(400, exc.render())
    from governance.report.figures import build
    from governance.report.page import POLICY, render

    with _ONE_AT_A_TIME:
        try:
            figures = build(project, chosen, show_progress=False)
        except GovernanceError as exc:
            return _error(500, exc.render())
        page = render(figures, live={"action": "/report", "values": values})
    return 200, page.encode("utf-8"), [(b"content-type", b"text/html; charset=utf-8"),
                                       (b"content-security-policy", POLICY.encode())]
