"""HTTP methods that delete: a request whose method is ``DELETE`` is ``destructive`` on any host.

Hot path: imports only our ``shell.endpoint`` and ``shell.lexicon``; loaded for a command whose
``requests`` spec names its method options (``methods: [-X, --request]``) or takes the method as
its first word (httpie, xh). A request to this machine is ``local-request`` (``shell.endpoint``),
but a loopback address often serves a service's data (an Elasticsearch index, a Meilisearch index,
a Kong route): ``curl -X DELETE localhost:9200/logs`` deletes it, as ``DELETE`` to any other host
does. A ``POST``, ``PUT`` or ``PATCH`` (named, or implied by a body option: ``body_options``) to a
URL one of whose path segments starts with a destructive verb of ``shell.lexicon.verbs``
(``_delete_by_query``, ``admin/tsdb/delete_series``, ``/users/42/destroy``) is destructive too.
A method known only at run time (``-X "$METHOD"``) is ``shell-unknown``. ``GET``, ``HEAD`` and
``OPTIONS`` are what they were: reads of the host.
"""

from __future__ import annotations

from governance.shell.endpoint import METHODS, host_of
from governance.shell.lexicon import parts

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from governance.shell.rules import Argv
    from governance.shell.walk import Walk

_DELETING = ("DELETE",)
_WRITING = ("POST", "PUT", "PATCH")
# destructive verbs that in a URL path usually name an ordinary action (/reset-password)
_NOT_IN_PATHS = ("reset", "fresh", "rollback", "downgrade", "release", "rm", "del")


def named(spec: dict[str, Any], argv: Argv) -> tuple[str, str | None]:
    """The method the request names (upper case; ``""`` when none is named) and, when it is known
    only at run time, ``(option, None)``."""
    found = ""
    for option in spec.get("methods") or ():
        for value, _raw in argv.values.get(option, ()):
            if value is None:
                return option, None
            found = value.upper()
    if _method_word(spec, argv):
        found = str(argv.positionals[0][0]).upper()
    if not found and any(argv.values.get(o) for o in spec.get("body_options") or ()):
        found = "POST"
    return "", found


def urls(spec: dict[str, Any], argv: Argv) -> list[str]:
    out = [v for o in spec.get("url_options") or () for v, _ in argv.values.get(o, ()) if v]
    values = [v for v, _ in argv.positionals if v]
    return out + (values[1:] if _method_word(spec, argv) else values)


def _method_word(spec: dict[str, Any], argv: Argv) -> bool:
    """httpie and xh: ``[METHOD] URL``, the method in any case (``xh delete URL``)."""
    if spec.get("urls") != "httpie" or len(argv.positionals) < 2:
        return False
    first = argv.positionals[0][0]
    return first is not None and first.upper() in METHODS


def _deleting_path(url: str, verbs: dict[str, str]) -> str | None:
    """The path segment of ``url`` that starts with a destructive verb, or None."""
    if host_of(url) is None:
        return None
    rest = url.partition("://")[2] or url
    path = rest.partition("/")[2].split("?", 1)[0].split("#", 1)[0]
    for segment in path.split("/"):
        pieces = parts(segment)
        if pieces and verbs.get(pieces[0]) == "destructive" and pieces[0] not in _NOT_IN_PATHS:
            return segment
    return None


def check(an: Walk, base: str, spec: dict[str, Any], argv: Argv, seg: str) -> None:
    """Add ``destructive`` for a deleting request (``shell-unknown`` for a method known only at
    run time)."""
    option, method = named(spec, argv)
    if method is None:
        an.unknown(seg, f"{base} {option} names an HTTP method known only at run time")
        return
    targets = urls(spec, argv)
    if method in _DELETING:
        an.add("destructive", seg, f"{base} sends an HTTP {method} request: it deletes what it "
               "names, on this machine or any other")
        return
    if method not in _WRITING:
        return
    verbs = (an.shell.get("lexicon") or {}).get("verbs") or {}
    for url in targets:
        segment = _deleting_path(url, verbs)
        if segment is not None:
            an.add("destructive", seg, f"{base} sends an HTTP {method} to {url}: its path "
                   f"{segment!r} reads as a deletion (shell.lexicon)")
            return
