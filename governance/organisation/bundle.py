"""A bundle of the organisation layer: its format, its canonical bytes, its Ed25519 signature.

A bundle is one JSON document (UTF-8)::

    {"format": 1, "version": 7, "issued": "2026-11-27T15:00:00Z",
     "files": {"activity_matrix.yaml": "<base64>", "sops/deploy.ai.sop": "<base64>"},
     "signature": "<base64 of the 64-byte Ed25519 signature>"}

The signature covers the *canonical* JSON of everything but ``signature``: keys sorted, no
whitespace (``","`` and ``":"`` as separators), ASCII only (``json.dumps(body, sort_keys=True,
separators=(",", ":"), ensure_ascii=True)``), so a server may serve the document indented or not.
``version`` is an integer >= 1 that a machine never lets go backwards; ``files`` maps a name of the
layer (``activity_matrix.yaml``, ``guardrails.yaml``, ``sops/<name>.ai.sop``) to its bytes in standard
base64. Keys are PEM: the private key PKCS#8, the public key SubjectPublicKeyInfo.

Cold: the only module that imports ``cryptography``; nothing on the hook's path imports it.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from governance.errors import GovernanceError

FORMAT = 1
MAX_VERSION = 2**63 - 1              # a PostgreSQL bigint (the server keeps it in one)
FIELDS = ("format", "version", "issued", "files")
ALLOWED = "activity_matrix.yaml, guardrails.yaml, sops/<name>.ai.sop"
_NAME = re.compile(r"(?:activity_matrix\.yaml|guardrails\.yaml"
                   r"|sops/[A-Za-z0-9][A-Za-z0-9_.-]{0,99}\.ai\.sop)")


class BundleError(GovernanceError):
    """An organisation bundle or key cannot be read, does not verify, or cannot be installed."""


@dataclass(frozen=True)
class Bundle:
    """A verified bundle: what its signer issued."""

    version: int
    issued: str
    files: dict[str, bytes]


def is_layer_file(name: str) -> bool:
    """Whether ``name`` is a file of the organisation layer (never a path that leaves its folder,
    an absolute path, or the key and state beside them)."""
    return _NAME.fullmatch(name) is not None


def check_name(name: str, source: str) -> str:
    """``name`` when it is a file of the organisation layer; a BundleError otherwise."""
    if not is_layer_file(name):
        raise BundleError(
            f"{name!r} is not a file of the organisation layer (allowed: {ALLOWED})", file=source,
            fix="bundle only the organisation's files (`governance org sign DIR ...` picks them)")
    return name


def build(files: Mapping[str, bytes], version: int, issued: str | None = None) -> dict[str, object]:
    """The unsigned body of a bundle of ``files`` (name -> bytes) as ``version``."""
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise BundleError(f"a bundle's version must be an integer >= 1, not {version!r}",
                          fix="pass --version with the next number (greater than the last one issued)")
    return {"format": FORMAT, "version": version,
            "issued": issued or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "files": {check_name(name, "the bundle"): base64.b64encode(data).decode("ascii")
                      for name, data in sorted(files.items())}}


def canonical(body: Mapping[str, object]) -> bytes:
    """The bytes a signature covers: ``body`` without ``signature``, as canonical JSON."""
    unsigned = {key: value for key, value in body.items() if key != "signature"}
    return json.dumps(unsigned, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def sign(body: Mapping[str, object], key: Ed25519PrivateKey) -> dict[str, object]:
    """``body`` with its signature by ``key``."""
    signature = base64.b64encode(key.sign(canonical(body))).decode("ascii")
    return {**{k: v for k, v in body.items() if k != "signature"}, "signature": signature}


def dumps(document: Mapping[str, object]) -> bytes:
    """A bundle as the file a server serves."""
    return (json.dumps(document, indent=2, sort_keys=True) + "\n").encode()


def verify(data: bytes, key: Ed25519PublicKey, source: str) -> Bundle:
    """The bundle ``data`` holds, once its signature verifies against ``key``; a BundleError
    naming ``source`` (the URL) when it is not a bundle, unsigned, badly signed or holds a file
    that is not the layer's."""
    try:
        document = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BundleError(f"this is not a bundle (not JSON: {exc}); nothing was installed",
                          file=source, fix="check the URL: it must serve the bundle's JSON") from None
    if not isinstance(document, dict):
        raise BundleError("this is not a bundle (not a JSON object); nothing was installed",
                          file=source, fix="check the URL: it must serve the bundle's JSON")
    check_shape(document, source)
    try:
        signature = base64.b64decode(document["signature"], validate=True)
        key.verify(signature, canonical(document))
    except (InvalidSignature, binascii.Error, ValueError):
        raise BundleError(
            "the bundle's signature does not verify against the organisation's public key (it "
            "was changed after signing, or signed with another key), so it is refused; nothing "
            f"was installed (key {fingerprint(key)})", file=source,
            fix="sign the bundle again with the organisation's private key, or, if the "
                "organisation changed its key, have an admin install the new public key with "
                "`governance install --managed --org-key FILE`") from None
    files: dict[str, bytes] = {}
    for name, text in document["files"].items():
        check_name(name, source)
        try:
            files[name] = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            raise BundleError(f"the bundle's file {name} is not base64; nothing was installed",
                              file=source, fix="build the bundle with `governance org sign`") from None
    return Bundle(document["version"], document["issued"], files)


def check_shape(document: dict[str, object], source: str, outcome: str = "installed") -> None:
    """Refuse (a :class:`BundleError` naming ``source``) a document that is unsigned or not of
    the bundle's shape, before its signature is checked; ``outcome``: what did not happen."""
    if "signature" not in document:
        raise BundleError(f"the bundle is unsigned, so it is refused; nothing was {outcome}",
                          file=source, fix="sign it with the organisation's key "
                                           "(`governance org sign DIR --key PRIVATE ...`)")

    def refuse(what: str) -> BundleError:
        return BundleError(f"this is not a bundle of format {FORMAT}: {what}; nothing was "
                           f"{outcome}", file=source,
                           fix="build the bundle with `governance org sign` (or a governance "
                               "as recent as the server's)")

    if document.get("format") != FORMAT:
        raise refuse(f"its format is {document.get('format')!r}")
    unknown = sorted(set(document) - {*FIELDS, "signature"})
    if unknown:
        raise refuse(f"unknown field(s) {', '.join(unknown)}")
    version = document.get("version")
    if isinstance(version, bool) or not isinstance(version, int) or not 1 <= version <= MAX_VERSION:
        raise refuse(f"its version is {version!r}, not an integer from 1 to {MAX_VERSION}")
    issued = document.get("issued")
    if not isinstance(issued, str) or not 0 < len(issued) <= 64 or "\0" in issued:
        raise refuse("its issued time is missing")
    files = document.get("files")
    if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
        raise refuse("its files are not a mapping of names to base64 text")
    if not isinstance(document["signature"], str):
        raise refuse("its signature is not base64 text")


def load_public_key(pem: bytes, source: str) -> Ed25519PublicKey:
    """The Ed25519 public key in ``pem`` (read from ``source``)."""
    try:
        key = serialization.load_pem_public_key(pem)
    except ValueError as exc:
        raise BundleError(f"this is not a PEM public key ({exc})", file=source,
                          fix="install the organisation's public key (`governance org keygen` "
                              "writes one) with `governance install --managed --org-key FILE`") from None
    if not isinstance(key, Ed25519PublicKey):
        raise BundleError(f"the public key is {type(key).__name__}, not Ed25519", file=source,
                          fix="make an Ed25519 key pair with `governance org keygen`")
    return key


def load_private_key(pem: bytes, source: str) -> Ed25519PrivateKey:
    """The Ed25519 private key in ``pem`` (unencrypted PKCS#8, as ``keygen`` writes it)."""
    try:
        key = serialization.load_pem_private_key(pem, password=None)
    except (ValueError, TypeError) as exc:
        raise BundleError(f"this is not an unencrypted PEM private key ({exc})", file=source,
                          fix="pass the private key `governance org keygen --private FILE` wrote") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise BundleError(f"the private key is {type(key).__name__}, not Ed25519", file=source,
                          fix="make an Ed25519 key pair with `governance org keygen`")
    return key


def generate() -> tuple[bytes, bytes]:
    """A new key pair as PEM: (private, public)."""
    key = Ed25519PrivateKey.generate()
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo)
    return private, public


def fingerprint(key: Ed25519PublicKey) -> str:
    """``SHA256:<hex>`` of the raw 32-byte public key: what `org status` shows to compare keys."""
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return "SHA256:" + hashlib.sha256(raw).hexdigest()
