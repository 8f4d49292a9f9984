"""``GET /report``: the page ``governance report`` writes, built for each request with the filters
of the query string: ``agent``, ``state``, ``since``, ``until`` (as the command takes them) and
``project``.

Without ``project``, or with the served project's folder or folder name, the page is the served
project's, from its ledger, trace and decision store. With the id of a project shipped to this
server (``governance ledger ship``), it is that project's, from the server's central copy of
ledgers; with ``project=*``, every shipped project's together, with a table per project
(``governance.report.team``). Any other project is a 404. A token scoped to a project
(``scoped``: its id) reports that project only: another is a 403, and ``*`` is its own.

The token is checked before this handler runs, like every route but ``/healthz``. The page is
built on a worker thread, one request at a time (a second waits for the first): a report over a
million records takes seconds, and hook answers keep coming from the event loop meanwhile.
"""

from __future__ import annotations

import json
import os
import threading
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

if TYPE_CHECKING:
    from governance.report.selection import Selection

FILTERS = ("project", "agent", "state", "since", "until")
EVERY = "*"       # every shipped project (governance.report.team.EVERY)
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


def _own_id(project: str) -> str | None:
    from governance.errors import GovernanceError
    from governance.storage.database import project_id

    try:
        return project_id(project)
    except GovernanceError:
        return None


def answer(project: str, method: str, query_string: bytes, scoped: str | None = None
           ) -> Answer:
    """The status, body and headers of a ``/report`` request (run it off the event loop);
    ``scoped``: the project id the caller's token acts in (None: the project's own token, an
    admin token, a team-wide one)."""
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
    named = values.get("project", "").strip()
    local = named != EVERY and _serves(project, named) and (
        scoped is None or scoped == _own_id(project))
    if not local and scoped is not None and named not in ("", EVERY, scoped):
        return _error(403, f"this token acts in project {scoped}; it may report that project "
                           f"only, not {named}")
    from governance.errors import GovernanceError
    from governance.report import selection

    try:
        chosen = selection.parse(values.get("since"), values.get("until"), values.get("state"),
                                 values.get("agent"))
    except GovernanceError as exc:
        return _error(400, exc.render())
    from governance.report.page import POLICY, render

    with _ONE_AT_A_TIME:
        try:
            if local:
                from governance.report.figures import build

                figures = build(project, chosen, show_progress=False)
            else:
                figures_or_error = _central(project, named or str(scoped), scoped, chosen)
                if not isinstance(figures_or_error, dict):
                    return figures_or_error
                figures = figures_or_error
        except GovernanceError as exc:
            return _error(500, exc.render())
        page = render(figures, live={"action": "/report", "values": values})
    return 200, page.encode("utf-8"), [(b"content-type", b"text/html; charset=utf-8"),
                                       (b"content-security-policy", POLICY.encode())]


def _central(project: str, named: str, scoped: str | None, chosen: Selection
             ) -> dict[str, Any] | Answer:
    """The figures of the shipped project ``named`` (``*``: of every one the caller may see)
    from the server's central copy, or the 404 that says why there are none."""
    from governance.project import governance_dir
    from governance.report import team
    from governance.storage.central import FILE
    from governance.storage.database import database_url

    wanted = scoped if named == EVERY else named
    missing = f"no project {wanted} here" if wanted else "no project shipped here"
    served = f"this server serves {os.path.basename(project)} ({project})"
    ship = "(`governance ledger ship --server URL` sends one)"
    if database_url() is None and not os.path.exists(os.path.join(governance_dir(project), FILE)):
        return _error(404, f"{missing}: {served}, and no ledger was shipped to it {ship}")
    from governance.server.audit import copy_for

    copy = copy_for(project)
    held = copy.projects()
    if (wanted is not None and wanted not in held) or not held:
        return _error(404, f"{missing}: {served}, and its central copy holds no ledger of "
                           f"{'that id' if wanted else 'any project'} yet {ship}")
    return team.build(copy.iter_lines(wanted), chosen, team.EVERY if wanted is None else wanted)
