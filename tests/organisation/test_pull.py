"""``governance org pull URL`` as a machine runs it: a good bundle installs, a forged, older or
misnamed one is refused and the last good one stays in force, an unreachable server changes
nothing. Each run is a subprocess in a private /etc (``tests/managed_root.py``): none touches the
real one. The server is a loopback ``http.server`` thread."""

from __future__ import annotations

import base64
import errno
import hashlib
import json
import os
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from governance import project
from governance.organisation import bundle, pull
from governance.organisation.bundle import BundleError
from tests import managed_root
from tests.helpers import REPO
from tests.managed_root import ManagedRoot

V2 = {"activity_matrix.yaml": b"extends: default\nrules: {}\n",
      "guardrails.yaml": b"guardrails: []\n",
      "sops/deploy.ai.sop": b"# Deploy\nAsk before deploying.\n"}
V3 = {"activity_matrix.yaml": b"extends: default\ndefault_action: block\n",
      "sops/release.ai.sop": b"# Release\n"}


class Server:
    """A loopback HTTP server that serves ``routes`` (path -> bytes), 404 otherwise."""

    def __init__(self) -> None:
        routes: dict[str, bytes] = {}
        self.routes = routes

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = routes.get(self.path)
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(body if body is not None else b"not found")

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def serve(self, path: str, data: bytes) -> str:
        self.routes[path] = data
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"


@pytest.fixture
def server() -> Iterator[Server]:
    found = Server()
    found.thread.start()
    try:
        yield found
    finally:
        found.httpd.shutdown()
        found.httpd.server_close()
        found.thread.join(10)


@pytest.fixture(scope="module")
def org_key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.generate()


@pytest.fixture
def root(tmp_path: Path, org_key: Ed25519PrivateKey) -> ManagedRoot:
    """A private /etc whose organisation folder holds the org's public key (as `install
    --managed --org-key` leaves it)."""
    managed_root.require()
    found = ManagedRoot(tmp_path)
    found.org.mkdir(parents=True, mode=0o755)
    _public_key(found.org, org_key)
    return found


def _public_key(org: Path, key: Ed25519PrivateKey) -> None:
    from cryptography.hazmat.primitives import serialization

    path = org / "org-key.pub"
    path.write_bytes(key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    path.chmod(0o644)


def signed(key: Ed25519PrivateKey, version: int, files: dict[str, bytes]) -> bytes:
    return bundle.dumps(bundle.sign(bundle.build(files, version), key))


def gov(root: ManagedRoot, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return root.run([sys.executable, "-m", "governance.commands", "org", *args],
                    env={"PATH": "/usr/bin:/bin", "HOME": str(home), "PYTHONPATH": str(REPO)})


def installed(root: ManagedRoot) -> dict[str, bytes]:
    """The organisation's files as the wrapped commands see them (key and state aside)."""
    return {path.relative_to(root.org).as_posix(): path.read_bytes()
            for path in sorted(root.org.rglob("*")) if path.is_file()
            and path.name not in ("org-key.pub", "bundle.json")}


def state(root: ManagedRoot) -> dict[str, Any]:
    found: dict[str, Any] = json.loads((root.org / "bundle.json").read_text())
    return found


def test_a_good_bundle_installs_its_files_and_its_state(
        root: ManagedRoot, server: Server, tmp_path: Path, org_key: Ed25519PrivateKey) -> None:
    url = server.serve("/org/bundle.json", signed(org_key, 2, V2))
    done = gov(root, tmp_path, "pull", url)
    assert done.returncode == 0, done.stderr
    assert "Installed the organisation bundle version 2 (the first bundle here)" in done.stdout
    assert installed(root) == V2
    recorded = state(root)
    assert recorded["version"] == 2 and recorded["source"] == url
    assert recorded["files"] == {name: hashlib.sha256(data).hexdigest() for name, data in V2.items()}
    assert recorded["key"] == bundle.fingerprint(org_key.public_key())
    for path in [root.org / name for name in [*V2, "bundle.json"]]:
        assert stat.S_IMODE(path.stat().st_mode) == 0o644, path
    assert stat.S_IMODE((root.org / "sops").stat().st_mode) == 0o755
    assert not [p for p in root.org.rglob("*") if p.suffix in (".tmp", ".kept")]

    shown = gov(root, tmp_path, "status")
    assert shown.returncode == 0, shown.stderr
    assert "Bundle: version 2" in shown.stdout and url in shown.stdout
    assert bundle.fingerprint(org_key.public_key()) in shown.stdout
    assert "  sops/deploy.ai.sop: ok" in shown.stdout

    # the same version again: already current, nothing written
    before = (root.org / "bundle.json").stat().st_mtime_ns
    again = gov(root, tmp_path, "pull", url)
    assert again.returncode == 0, again.stderr
    assert "version 2 from" in again.stdout and "is already current" in again.stdout
    assert (root.org / "bundle.json").stat().st_mtime_ns == before

    # a newer one replaces what changed and removes what it no longer has (the sops/deploy.ai.sop
    # the previous bundle installed; guardrails.yaml too)
    newer = server.serve("/org/bundle-3.json", signed(org_key, 3, V3))
    done = gov(root, tmp_path, "pull", newer)
    assert done.returncode == 0, done.stderr
    assert "version 3 (was version 2)" in done.stdout
    assert "added: sops/release.ai.sop" in done.stdout
    assert "changed: activity_matrix.yaml" in done.stdout
    assert "removed: guardrails.yaml, sops/deploy.ai.sop" in done.stdout
    assert installed(root) == V3 and state(root)["version"] == 3


def test_a_forged_bundle_is_refused_and_the_last_good_one_stays(
        root: ManagedRoot, server: Server, tmp_path: Path, org_key: Ed25519PrivateKey) -> None:
    assert gov(root, tmp_path, "pull", server.serve("/b", signed(org_key, 2, V2))).returncode == 0
    good = state(root)

    other_key = server.serve("/other", signed(Ed25519PrivateKey.generate(), 5, V3))
    document = json.loads(signed(org_key, 5, V3))
    document["files"]["activity_matrix.yaml"] = base64.b64encode(
        b"extends: default\ndefault_action: allow\n").decode()
    changed = server.serve("/changed", json.dumps(document).encode())
    document.pop("signature")
    unsigned = server.serve("/unsigned", json.dumps(document).encode())
    for url, says in ((other_key, "does not verify"), (changed, "does not verify"),
                      (unsigned, "the bundle is unsigned")):
        done = gov(root, tmp_path, "pull", url)
        assert done.returncode == 1, (url, done.stdout)
        assert done.stderr.startswith(f"governance: error: {url}: "), done.stderr
        assert says in done.stderr
        assert "the installed bundle (version 2, issued" in done.stderr
        assert "stays in force" in done.stderr and "Fix:" in done.stderr
        assert installed(root) == V2 and state(root) == good


def test_an_older_bundle_is_refused_and_a_changed_one_under_the_same_version_too(
        root: ManagedRoot, server: Server, tmp_path: Path, org_key: Ed25519PrivateKey) -> None:
    assert gov(root, tmp_path, "pull", server.serve("/v3", signed(org_key, 3, V3))).returncode == 0
    older = gov(root, tmp_path, "pull", server.serve("/v2", signed(org_key, 2, V2)))
    assert older.returncode == 1
    assert "the bundle is version 2, older than the installed version 3" in older.stderr
    assert "never goes backwards" in older.stderr and "--version 4" in older.stderr
    same = gov(root, tmp_path, "pull", server.serve("/v3-other", signed(org_key, 3, V2)))
    assert same.returncode == 1
    assert "version 3, already installed with other content" in same.stderr
    assert installed(root) == V3 and state(root)["version"] == 3


def test_an_unreachable_server_keeps_the_last_bundle_in_force(
        root: ManagedRoot, server: Server, tmp_path: Path, org_key: Ed25519PrivateKey) -> None:
    assert gov(root, tmp_path, "pull", server.serve("/v2", signed(org_key, 2, V2))).returncode == 0
    with socket.socket() as probe:   # a loopback port nobody listens on
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}/bundle.json"
    missing = server.serve("/v2", b"")[: -len("/v2")] + "/nothing-here"
    for url, says in ((closed, "Connection refused"), (missing, "HTTP 404")):
        done = gov(root, tmp_path, "pull", url)
        assert done.returncode == 1
        assert f"{url}: the bundle could not be fetched" in done.stderr and says in done.stderr
        assert "the installed bundle (version 2" in done.stderr
        assert installed(root) == V2 and state(root)["version"] == 2


def test_an_offline_copy_is_pulled_from_a_file_url(
        root: ManagedRoot, tmp_path: Path, org_key: Ed25519PrivateKey) -> None:
    copy = tmp_path / "bundle.json"
    copy.write_bytes(signed(org_key, 4, V2))
    done = gov(root, tmp_path, "pull", copy.as_uri())
    assert done.returncode == 0, done.stderr
    assert installed(root) == V2 and state(root)["version"] == 4


def test_a_bundle_naming_a_path_outside_the_layer_is_refused(
        root: ManagedRoot, server: Server, tmp_path: Path, org_key: Ed25519PrivateKey) -> None:
    for name in ("../x", "/etc/x", "sops/../../x.md"):
        body = {"format": 1, "version": 7, "issued": "2026-11-27T10:00:00Z",
                "files": {"activity_matrix.yaml": base64.b64encode(b"x").decode(),
                          name: base64.b64encode(b"owned\n").decode()}}
        url = server.serve("/evil", bundle.dumps(bundle.sign(body, org_key)))
        done = gov(root, tmp_path, "pull", url)
        assert done.returncode == 1
        assert f"{name!r} is not a file of the organisation layer" in done.stderr
        assert "no bundle was installed before" in done.stderr
    assert not (root.managed / "x").exists() and not (root.etc / "x").exists()
    assert installed(root) == {} and not (root.org / "bundle.json").exists()


def test_without_the_public_key_the_admin_is_told_to_install_it(
        root: ManagedRoot, server: Server, tmp_path: Path, org_key: Ed25519PrivateKey) -> None:
    (root.org / "org-key.pub").unlink()
    done = gov(root, tmp_path, "pull", server.serve("/v2", signed(org_key, 2, V2)))
    assert done.returncode == 1
    assert "no organisation public key is installed" in done.stderr
    assert "governance install --managed --org-key FILE" in done.stderr
    assert installed(root) == {}


def test_a_key_others_may_write_is_not_trusted(
        root: ManagedRoot, server: Server, tmp_path: Path, org_key: Ed25519PrivateKey) -> None:
    (root.org / "org-key.pub").chmod(0o666)
    done = gov(root, tmp_path, "pull", server.serve("/v2", signed(org_key, 2, V2)))
    assert done.returncode == 1
    assert "only root may be able to change it" in done.stderr
    assert "chmod 644" in done.stderr


# --- in process, on a temporary folder: the all-or-nothing install and the need for root ---


@pytest.fixture
def org(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, org_key: Ed25519PrivateKey) -> Path:
    folder = tmp_path / "org"
    folder.mkdir(mode=0o755)
    monkeypatch.setattr(project, "org_dir", lambda: str(folder))
    _public_key(folder, org_key)
    return folder


def _on_disk(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("failing_call", [1, 2, 3])
def test_a_failure_while_installing_puts_every_file_back(
        org: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        org_key: Ed25519PrivateKey, failing_call: int) -> None:
    first = tmp_path / "v2.json"
    first.write_bytes(signed(org_key, 2, V2))
    pull.pull(first.as_uri())
    before = _on_disk(org)

    real = os.replace
    calls = []

    def replace(src: str, dst: str) -> None:
        calls.append(dst)
        if len(calls) == failing_call:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    second = tmp_path / "v3.json"
    second.write_bytes(signed(org_key, 3, V3))
    with pytest.raises(BundleError, match="could not be installed") as caught:
        pull.pull(second.as_uri())
    assert "every file was put back" in caught.value.message
    assert "the installed bundle (version 2" in caught.value.message
    monkeypatch.setattr(os, "replace", real)
    assert _on_disk(org) == before
    assert not (org / "sops" / "release.ai.sop").exists()


def test_a_failure_while_removing_puts_every_file_back(
        org: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        org_key: Ed25519PrivateKey) -> None:
    first = tmp_path / "v2.json"
    first.write_bytes(signed(org_key, 2, V2))
    pull.pull(first.as_uri())
    before = _on_disk(org)
    real = os.unlink

    def unlink(path: str) -> None:
        if path == str(org / "sops" / "deploy.ai.sop"):   # the second file v3 no longer has
            raise OSError(errno.EIO, "Input/output error")
        real(path)

    monkeypatch.setattr(os, "unlink", unlink)
    second = tmp_path / "v3.json"
    second.write_bytes(signed(org_key, 3, V3))
    with pytest.raises(BundleError, match="could not be installed"):
        pull.pull(second.as_uri())
    monkeypatch.setattr(os, "unlink", real)
    assert _on_disk(org) == before


def test_without_write_access_it_says_to_run_it_as_root(
        org: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        org_key: Ed25519PrivateKey) -> None:
    copy = tmp_path / "v2.json"
    copy.write_bytes(signed(org_key, 2, V2))
    monkeypatch.setattr(os, "access", lambda path, mode: False)
    with pytest.raises(BundleError, match="needs root") as caught:
        pull.pull(copy.as_uri())
    assert caught.value.fix == f"run `sudo governance org pull {copy.as_uri()}`"
    assert caught.value.file == str(org)


def test_a_file_changed_on_disk_is_put_back_by_the_same_version(
        org: Path, tmp_path: Path, org_key: Ed25519PrivateKey) -> None:
    copy = tmp_path / "v2.json"
    copy.write_bytes(signed(org_key, 2, V2))
    pull.pull(str(copy))   # a plain path is an offline copy too
    (org / "guardrails.yaml").write_bytes(b"guardrails: [changed]\n")
    (org / "sops" / "deploy.ai.sop").unlink()
    result = pull.pull(copy.as_uri())
    assert result.outcome == "repaired" and result.changed == ["guardrails.yaml", "sops/deploy.ai.sop"]
    assert "had changed on disk: put back" in result.describe(copy.as_uri())
    assert {k: v for k, v in _on_disk(org).items() if k in V2} == V2


def test_only_http_https_and_file_urls_are_pulled(org: Path) -> None:
    with pytest.raises(BundleError, match="is not an http, https or file URL"):
        pull.pull("ftp://team.example/bundle.json")
