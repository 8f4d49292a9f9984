"""The organisation's signed bundle as a team server serves it: ``GET /org/bundle`` answers the
bundle last published, exactly the bytes the admin sent (``governance org pull URL`` on each
machine), and ``PUT /org/bundle`` publishes one (``governance org publish``, admin only).

``GET`` needs no token: ``org pull`` sends none, and the bundle is signed, not secret (each machine
verifies it against its own installed key). Its ``ETag`` is the SHA-256 of the bytes and
``X-Governance-Bundle-Version`` its version; ``If-None-Match`` with that ETag is a 304.

``PUT`` checks the bundle's shape (format 1, an integer version >= 1, its files the organisation
layer's, base64 throughout), and, when the served project holds the organisation's public key
(``.claude/governance/org-key.pub``, PEM), its signature. A version never goes backwards: one at
or below the stored version is a 409 naming both; the same version with the same signed content
again is answered as already published.

Where it is kept: :mod:`governance.storage.bundles` (the team database's ``org_bundles`` table,
else ``org-bundle.json`` beside the served project's ledger).
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from typing import Any

from governance.errors import GovernanceError
from governance.project import governance_dir
from governance.server.identity import Caller
from governance.storage.bundles import Published, Store, VersionConflict, store_for

KEY_FILE = "org-key.pub"
MAX_BODY = 16 * 1024 * 1024          # what `org pull` accepts
VERSION_HEADER = b"x-governance-bundle-version"
JSON = (b"content-type", b"application/json")
PUBLISH = "governance org publish BUNDLE --server URL"

Answer = tuple[int, bytes, list[tuple[bytes, bytes]]]


class Refused(GovernanceError):
    """A bundle the server does not publish, with the HTTP status that says why."""

    def __init__(self, status: int, message: str, fix: str | None = None, **extra: Any) -> None:
        super().__init__(message, fix=fix)
        self.status = status
        self.extra = extra


def check(data: bytes, key_pem: bytes | None) -> tuple[Published, dict[str, Any]]:
    """The bundle ``data`` holds and its document, once its shape (and, with ``key_pem``, its
    signature) is right; a :class:`Refused` saying what is wrong otherwise."""
    try:
        document = json.loads(data)
    except (ValueError, RecursionError):
        raise Refused(400, "the body is not a bundle (not JSON)",
                      fix="send the file `governance org sign` wrote") from None
    if not isinstance(document, dict):
        raise Refused(400, "the body is not a bundle (not a JSON object)",
                      fix="send the file `governance org sign` wrote")
    _shape(document)
    found = Published(document["version"], document["issued"], data)
    if key_pem is not None:
        _verify(document, key_pem)
    return found, document


def _shape(document: dict[str, Any]) -> None:
    """The bundle's own shape (:func:`governance.organisation.bundle.check_shape`), then what a
    server checks before it keeps one it may not verify: the layer's file names, base64 text and
    a signature of an Ed25519 signature's length."""
    from governance.organisation.bundle import ALLOWED, BundleError, check_shape, is_layer_file

    fix = "send the file `governance org sign` wrote"
    try:
        check_shape(document, "the request's body", "published")
    except BundleError as exc:
        raise Refused(400, exc.message, fix=exc.fix or fix) from None

    def refuse(what: str) -> Refused:
        return Refused(400, f"this is not a signed bundle of format 1: {what}; nothing was "
                            "published", fix=fix)

    for name, text in document["files"].items():
        if not is_layer_file(name):
            raise refuse(f"{name!r} is not a file of the organisation layer (allowed: {ALLOWED})")
        if _base64(text) is None:
            raise refuse(f"its file {name} is not base64 text")
    if len(_base64(document["signature"]) or b"") != 64:
        raise refuse("its signature is not the base64 of a 64-byte Ed25519 signature")


def _base64(text: str) -> bytes | None:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None


def _verify(document: dict[str, Any], key_pem: bytes) -> None:
    from cryptography.exceptions import InvalidSignature

    from governance.organisation.bundle import canonical, fingerprint, load_public_key

    key = load_public_key(key_pem, KEY_FILE)
    try:
        key.verify(base64.b64decode(document["signature"]), canonical(document))
    except InvalidSignature:
        raise Refused(422, "the bundle's signature does not verify against the organisation's "
                           f"public key this server holds ({fingerprint(key)}): it was changed "
                           "after signing, or signed with another key; nothing was published",
                      fix="sign the bundle again with the organisation's private key") from None


def _key(project: str) -> bytes | None:
    """The organisation's public key the served project holds (PEM); None when it holds none."""
    path = os.path.join(governance_dir(project), KEY_FILE)
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def _same(stored: bytes, document: dict[str, Any]) -> bool:
    """Whether ``stored`` holds the same signed content as ``document`` (however indented)."""
    from governance.organisation.bundle import canonical

    try:
        before = json.loads(stored)
    except ValueError:
        return False
    return bool(canonical(before) == canonical(document)
                and before.get("signature") == document.get("signature"))


def answer(project: str, method: str, body: bytes, headers: dict[bytes, bytes],
           caller: Caller | None = None) -> Answer:
    """The HTTP answer to ``/org/bundle`` on the server of ``project``. ``caller`` is who sends a
    ``PUT`` (the app has let only admins through); a token scoped to one project is refused: the
    bundle is the whole organisation's."""
    try:
        if method in ("GET", "HEAD"):
            return _get(store_for(project), headers)
        if method != "PUT":
            return _json(405, {"error": "use GET, or PUT with a signed bundle"},
                         [(b"allow", b"GET, HEAD, PUT")])
        if caller is None or caller.role != "admin":
            return _json(403, {"error": "publishing the organisation's bundle takes an admin token"})
        if caller.project is not None:
            return _json(403, {"error": f"this token acts in project {caller.project} only; the "
                                        "organisation's bundle is every project's",
                               "fix": "publish with a team-wide admin token (`governance token "
                                      "add --agent NAME --role admin`) or the server's own"})
        return _put(project, store_for(project), body, caller.key)
    except Refused as exc:
        return _json(exc.status, {"error": exc.message, "fix": exc.fix, **exc.extra})
    except (OSError, ValueError, KeyError, TypeError, GovernanceError) as exc:
        from governance.ledger.chain import log_error

        log_error(governance_dir(project), f"org bundle: {type(exc).__name__}: {exc}")
        return _json(503, {"error": "the organisation bundle store cannot be used now "
                                    "(errors.log says why)", "fix": "check the server's "
                                    "database or its .claude/governance/ folder, then retry"})


def _get(store: Store, headers: dict[bytes, bytes]) -> Answer:
    found = store.current()
    if found is None:
        return _json(404, {"error": "no organisation bundle is published on this server",
                           "fix": f"an admin publishes one: `{PUBLISH}`"})
    head = [JSON, (b"etag", found.etag.encode()), (VERSION_HEADER, str(found.version).encode())]
    wanted = headers.get(b"if-none-match", b"").decode("latin-1")
    if found.etag in [tag.strip() for tag in wanted.split(",")] or wanted.strip() == "*":
        return 304, b"", head[1:]
    return 200, found.document, head


def _put(project: str, store: Store, body: bytes, by: str) -> Answer:
    try:
        found, document = check(body, _key(project))
    except GovernanceError as exc:
        if isinstance(exc, Refused):
            raise
        raise Refused(503, f"the server's organisation key cannot be used: {exc.message}",
                      fix="put the organisation's Ed25519 public key (PEM) in the served "
                          f"project's .claude/governance/{KEY_FILE}, or remove that file") from None
    have = store.current()
    if have is not None and have.version == found.version and _same(have.document, document):
        return _json(200, _published(have, "already published"),
                     [(b"etag", have.etag.encode())])
    try:
        store.add(found, by)
    except VersionConflict as exc:
        raise Refused(409, exc.message, exc.fix, **exc.extra()) from None
    return _json(200, _published(found, "published"), [(b"etag", found.etag.encode())])


def _published(found: Published, outcome: str) -> dict[str, Any]:
    return {"outcome": outcome, "version": found.version, "issued": found.issued,
            "etag": found.etag}


def _json(status: int, value: Any, headers: list[tuple[bytes, bytes]] | None = None) -> Answer:
    return status, json.dumps(value).encode(), [JSON, *(headers or [])]
