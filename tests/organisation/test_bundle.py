"""The bundle format: signed bundles verify, anything changed after signing or signed with another
key does not, and only the organisation layer's files may be in one."""

from __future__ import annotations

import base64
import json
import stat
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from governance.errors import GovernanceError
from governance.organisation import bundle
from governance.organisation.bundle import BundleError

URL = "https://team.example/org/bundle.json"
FILES = {"activity_matrix.yaml": b"extends: default\n", "guardrails.yaml": b"guardrails: []\n",
         "sops/deploy.ai.sop": "# Deploy \u2014 carefully\n".encode()}


@pytest.fixture(scope="module")
def keys() -> tuple[Ed25519PrivateKey, Ed25519PrivateKey]:
    private, _ = bundle.generate()
    return bundle.load_private_key(private, "k.pem"), Ed25519PrivateKey.generate()


def signed(key: Ed25519PrivateKey, version: int = 3, files: dict[str, bytes] = FILES) -> bytes:
    return bundle.dumps(bundle.sign(bundle.build(files, version, "2026-11-27T10:00:00Z"), key))


def edited(data: bytes, change: Any) -> bytes:
    document = json.loads(data)
    change(document)
    return json.dumps(document).encode()


def test_a_signed_bundle_verifies_and_gives_back_its_files(keys: Any) -> None:
    key = keys[0]
    found = bundle.verify(signed(key), key.public_key(), URL)
    assert found == bundle.Bundle(3, "2026-11-27T10:00:00Z", FILES)


def test_the_signature_covers_the_canonical_json_so_layout_does_not_matter(keys: Any) -> None:
    key = keys[0]
    document = json.loads(signed(key))
    compact = json.dumps(document, separators=(",", ":")).encode()
    reordered = json.dumps(dict(reversed(list(document.items()))), indent=4).encode()
    for data in (compact, reordered):
        assert bundle.verify(data, key.public_key(), URL).version == 3
    assert bundle.canonical(document) == json.dumps(
        {k: v for k, v in document.items() if k != "signature"}, sort_keys=True,
        separators=(",", ":")).encode()
    key.public_key().verify(base64.b64decode(document["signature"]), bundle.canonical(document))


@pytest.mark.parametrize("change", [
    pytest.param(lambda d: d["files"].update({"activity_matrix.yaml": base64.b64encode(
        b"extends: default\ndefault_action: allow\n").decode()}), id="a file changed"),
    pytest.param(lambda d: d["files"].update({"sops/new.ai.sop": "eA=="}), id="a file added"),
    pytest.param(lambda d: d["files"].pop("guardrails.yaml"), id="a file removed"),
    pytest.param(lambda d: d.update(version=99), id="the version changed"),
    pytest.param(lambda d: d.update(issued="2030-01-01T00:00:00Z"), id="the time changed"),
])
def test_anything_changed_after_signing_is_refused(keys: Any, change: Any) -> None:
    key = keys[0]
    with pytest.raises(BundleError, match="does not verify against the organisation's public key"
                       ) as caught:
        bundle.verify(edited(signed(key), change), key.public_key(), URL)
    assert caught.value.file == URL and "install --managed --org-key FILE" in (caught.value.fix or "")
    assert isinstance(caught.value, GovernanceError)


def test_a_bundle_signed_with_another_key_is_refused(keys: Any) -> None:
    ours, theirs = keys
    with pytest.raises(BundleError, match="does not verify") as caught:
        bundle.verify(signed(theirs), ours.public_key(), URL)
    assert bundle.fingerprint(ours.public_key()) in caught.value.message


@pytest.mark.parametrize("change, message", [
    (lambda d: d.pop("signature"), "the bundle is unsigned"),
    (lambda d: d.update(signature="not base64!"), "does not verify"),
    (lambda d: d.update(signature=base64.b64encode(b"\0" * 64).decode()), "does not verify"),
    (lambda d: d.update(signature=7), "signature is not base64 text"),
    (lambda d: d.update(format=2), "its format is 2"),
    (lambda d: d.update(version="3"), "its version is '3'"),
    (lambda d: d.update(version=True), "its version is True"),
    (lambda d: d.update(version=0), "its version is 0"),
    (lambda d: d.update(files=["activity_matrix.yaml"]), "its files are not a mapping"),
    (lambda d: d.update(extra=1), "unknown field"),
])
def test_an_unsigned_or_malformed_bundle_is_refused(keys: Any, change: Any, message: str) -> None:
    key = keys[0]
    with pytest.raises(BundleError, match=message):
        bundle.verify(edited(signed(key), change), key.public_key(), URL)


@pytest.mark.parametrize("data", [b"<html>not found</html>", b"[1, 2]", b"\xff\xfe"])
def test_what_is_not_a_bundle_at_all_is_refused(keys: Any, data: bytes) -> None:
    with pytest.raises(BundleError, match="this is not a bundle") as caught:
        bundle.verify(data, keys[0].public_key(), URL)
    assert caught.value.file == URL


BAD_NAMES = ["../x", "/etc/passwd", "sops/../../x.md", "sops/../activity_matrix.yaml",
             "org-key.pub", "bundle.json", "sops/deploy.txt", "sops/nested/deploy.md",
             "sops/.hidden.md", "notes.md", "activity_matrix.yml", "./guardrails.yaml", ""]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_only_the_layer_files_may_be_bundled(keys: Any, name: str) -> None:
    with pytest.raises(BundleError, match="is not a file of the organisation layer"):
        bundle.build({name: b"x"}, 1)
    # even when signed with the organisation's own key, a bundle holding it is refused
    body = {"format": 1, "version": 1, "issued": "2026-11-27T10:00:00Z",
            "files": {name: base64.b64encode(b"x").decode()}}
    key = keys[0]
    data = bundle.dumps(bundle.sign(body, key))
    with pytest.raises(BundleError, match="is not a file of the organisation layer") as caught:
        bundle.verify(data, key.public_key(), URL)
    assert "activity_matrix.yaml, guardrails.yaml, sops/<name>.ai.sop" in caught.value.message


@pytest.mark.parametrize("version", [0, -1, True, "2"])
def test_a_version_is_an_integer_from_one(version: Any) -> None:
    with pytest.raises(BundleError, match="integer >= 1"):
        bundle.build(FILES, version)


def test_keys_are_ed25519_pem_and_say_what_is_wrong() -> None:
    private, public = bundle.generate()
    assert private.startswith(b"-----BEGIN PRIVATE KEY-----")
    assert public.startswith(b"-----BEGIN PUBLIC KEY-----")
    key = bundle.load_public_key(public, "org-key.pub")
    assert bundle.fingerprint(key) == bundle.fingerprint(
        bundle.load_private_key(private, "k.pem").public_key())
    assert bundle.fingerprint(key).startswith("SHA256:") and len(bundle.fingerprint(key)) == 71
    with pytest.raises(BundleError, match="not a PEM public key") as caught:
        bundle.load_public_key(b"hello", "org-key.pub")
    assert caught.value.file == "org-key.pub"
    with pytest.raises(BundleError, match="not an unencrypted PEM private key"):
        bundle.load_private_key(public, "k.pem")
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    other = ec.generate_private_key(ec.SECP256R1()).public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    with pytest.raises(BundleError, match="not Ed25519"):
        bundle.load_public_key(other, "org-key.pub")


def test_keygen_and_sign_make_a_bundle_that_verifies(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from governance.commands.cli import main

    private, public = tmp_path / "org.pem", tmp_path / "org.pub"
    assert main(["org", "keygen", "--private", str(private), "--public", str(public)]) == 0
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert stat.S_IMODE(public.stat().st_mode) == 0o644
    assert main(["org", "keygen", "--private", str(private), "--public", str(tmp_path / "b")]) == 1
    assert "a key is never overwritten" in capsys.readouterr().err
    assert not (tmp_path / "b").exists()

    source = tmp_path / "org"
    (source / "sops").mkdir(parents=True)
    for name, data in FILES.items():
        (source / name).write_bytes(data)
    (source / "README.txt").write_text("not bundled\n")
    (source / "sops" / "notes.txt").write_text("not bundled\n")
    out = tmp_path / "bundle.json"
    assert main(["org", "sign", str(source), "--key", str(private), "--version", "4",
                 "-o", str(out)]) == 0
    assert f"Signed version 4 of activity_matrix.yaml, guardrails.yaml, sops/deploy.ai.sop into {out}" \
        in capsys.readouterr().out
    key = bundle.load_public_key(public.read_bytes(), str(public))
    found = bundle.verify(out.read_bytes(), key, str(out))
    assert found.version == 4 and found.files == FILES

    (source / "sops" / "bad name.ai.sop").write_text("x\n")
    assert main(["org", "sign", str(source), "--key", str(private), "--version", "5",
                 "-o", str(out)]) == 1
    assert "'sops/bad name.ai.sop' is not a file of the organisation layer" in capsys.readouterr().err
    assert main(["org", "sign", str(tmp_path / "sops-less"), "--key", str(private),
                 "--version", "5", "-o", str(out)]) == 1
    assert "no organisation file here" in capsys.readouterr().err
