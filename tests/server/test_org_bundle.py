"""The organisation's bundle on a real server: `governance org publish` with an admin token,
`GET /org/bundle` without one (exactly the bytes published), `governance org pull` from it into a
private /etc, and the refusals: an agent's token (403), an older version (409), a bundle the
served project's key does not verify (422), nothing published (404). Stored in the served
project's folder, or in the team database's org_bundles table."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from governance.organisation import bundle
from governance.server import org_bundle
from governance.server.identity import Caller
from governance.storage import bundles
from tests import managed_root
from tests.helpers import REPO, install
from tests.managed_root import ManagedRoot
from tests.server.conftest import Served, start_server, stop_server
from tests.storage.conftest import cluster  # noqa: F401  (the PostgreSQL fixture)

V2 = {"activity_matrix.yaml": b"extends: default\nrules: {}\n",
      "sops/deploy.ai.sop": b"# Deploy\nAsk before deploying.\n"}
V3 = {"activity_matrix.yaml": b"extends: default\ndefault_action: block\n",
      "guardrails.yaml": b"guardrails: []\n"}


@pytest.fixture(scope="module")
def org_key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.generate()


@pytest.fixture
def server(project: Path) -> Iterator[Served]:
    install(project)
    served = start_server(project)
    try:
        yield served
    finally:
        assert stop_server(served) == 0


def signed(key: Ed25519PrivateKey, version: int, files: dict[str, bytes]) -> bytes:
    return bundle.dumps(bundle.sign(bundle.build(files, version), key))


def public_pem(key: Ed25519PrivateKey) -> bytes:
    return key.public_key().public_bytes(serialization.Encoding.PEM,
                                         serialization.PublicFormat.SubjectPublicKeyInfo)


def gov(*args: str, token: str | None = None, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("GOVERNANCE_SERVER_TOKEN", None)
    env.pop("GOVERNANCE_DATABASE_URL", None)
    if token:
        env["GOVERNANCE_SERVER_TOKEN"] = token
    return subprocess.run([sys.executable, "-m", "governance.commands", *args], cwd=str(cwd),
                          env=env, capture_output=True, text=True, timeout=120)


def publish(served: Served, tmp_path: Path, data: bytes, token: str | None
            ) -> subprocess.CompletedProcess[str]:
    path = tmp_path / f"bundle-{hashlib.sha256(data).hexdigest()[:12]}.json"
    path.write_bytes(data)
    return gov("org", "publish", str(path), "--server", f"http://127.0.0.1:{served.port}",
               token=token)


def agent_token(project: Path, role: str) -> str:
    done = gov("token", "add", "--agent", f"ci-{role}", "--role", role, "--project",
               str(project), cwd=project)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_nothing_published_is_a_404_without_a_token(server: Served) -> None:
    status, headers, body = server.request("GET", "/org/bundle", token=None)
    assert status == 404 and headers["content-type"] == "application/json"
    found = json.loads(body)
    assert found["error"] == "no organisation bundle is published on this server"
    assert "governance org publish" in found["fix"]
    assert not (server.project / ".claude" / "governance" / bundles.FILE).exists()


def test_publish_then_get_the_exact_bytes_then_refusals(
        server: Served, tmp_path: Path, org_key: Ed25519PrivateKey) -> None:
    v2 = signed(org_key, 2, V2)
    done = publish(server, tmp_path, v2, server.token)
    assert done.returncode == 0, done.stderr
    endpoint = f"http://127.0.0.1:{server.port}/org/bundle"
    assert "Published the organisation bundle version 2 (issued " in done.stdout
    assert f"sudo governance org pull {endpoint}" in done.stdout

    status, headers, body = server.request("GET", "/org/bundle", token=None)
    assert status == 200 and body == v2
    etag = f'"{hashlib.sha256(v2).hexdigest()}"'
    assert headers["etag"] == etag and headers["x-governance-bundle-version"] == "2"
    assert server.request("GET", "/org/bundle", token=None,
                          headers={"If-None-Match": etag})[0] == 304
    stored = server.project / ".claude" / "governance" / bundles.FILE
    assert stored.read_bytes() == v2

    # publishing the same again changes nothing
    again = publish(server, tmp_path, v2, server.token)
    assert again.returncode == 0 and "was already published" in again.stdout

    # an agent's token, and a reviewer's, may not publish; no token at all is a 401
    for role in ("agent", "reviewer"):
        refused = publish(server, tmp_path, signed(org_key, 3, V3), agent_token(server.project,
                                                                                 role))
        assert refused.returncode == 1
        assert "refused to publish (403" in refused.stderr and refused.stderr.count("\n") == 1
    status, _, _ = server.request("PUT", "/org/bundle", signed(org_key, 3, V3), token=None)
    assert status == 401
    assert "no token for the server" in publish(server, tmp_path, v2, None).stderr

    # never backwards: an older version, or the same version with other content
    older = publish(server, tmp_path, signed(org_key, 1, V3), server.token)
    assert older.returncode == 1 and older.stderr.count("\n") == 1
    assert "(409: the bundle is version 1, older than the published version 2" in older.stderr
    assert "--version 3" in older.stderr
    status, _, raw = server.request("PUT", "/org/bundle", signed(org_key, 2, V3))
    found = json.loads(raw)
    assert status == 409 and (found["version"], found["published"]) == (2, 2)
    assert "published already with other content" in found["error"]

    # not a bundle at all, and an unsigned one
    status, _, raw = server.request("PUT", "/org/bundle", b"[1, 2]")
    assert status == 400 and "not a JSON object" in json.loads(raw)["error"]
    unsigned = json.loads(signed(org_key, 4, V3))
    unsigned.pop("signature")
    status, _, raw = server.request("PUT", "/org/bundle", json.dumps(unsigned).encode())
    assert status == 400 and "unsigned" in json.loads(raw)["error"]
    assert server.request("DELETE", "/org/bundle")[0] == 405
    assert stored.read_bytes() == v2

    # a newer version replaces it
    v3 = signed(org_key, 3, V3)
    assert publish(server, tmp_path, v3, server.token).returncode == 0
    status, headers, body = server.request("GET", "/org/bundle", token=None)
    assert status == 200 and body == v3 and headers["x-governance-bundle-version"] == "3"


def test_with_the_organisation_key_a_bad_signature_is_refused(
        server: Served, tmp_path: Path, org_key: Ed25519PrivateKey) -> None:
    (server.project / ".claude" / "governance" / org_bundle.KEY_FILE).write_bytes(
        public_pem(org_key))
    forged = publish(server, tmp_path, signed(Ed25519PrivateKey.generate(), 5, V2), server.token)
    assert forged.returncode == 1
    assert "(422: the bundle's signature does not verify" in forged.stderr
    assert bundle.fingerprint(org_key.public_key()) in forged.stderr
    document = json.loads(signed(org_key, 5, V2))
    document["files"]["activity_matrix.yaml"] = "ZXh0ZW5kczogZGVmYXVsdAo="
    status, _, raw = server.request("PUT", "/org/bundle", json.dumps(document).encode())
    assert status == 422 and "does not verify" in json.loads(raw)["error"]
    assert server.request("GET", "/org/bundle", token=None)[0] == 404
    assert publish(server, tmp_path, signed(org_key, 5, V2), server.token).returncode == 0
    assert server.request("GET", "/org/bundle", token=None)[0] == 200


def test_a_project_scoped_admin_token_may_not_publish(
        tmp_path: Path, org_key: Ed25519PrivateKey, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOVERNANCE_DATABASE_URL", raising=False)
    scoped = Caller("agent:lead", role="admin", project="shop-api", agent="lead")
    status, body, _ = org_bundle.answer(str(tmp_path), "PUT", signed(org_key, 1, V2), {}, scoped)
    assert status == 403 and "acts in project shop-api only" in json.loads(body)["error"]
    team = Caller("agent:lead", role="admin", agent="lead")
    assert org_bundle.answer(str(tmp_path), "PUT", signed(org_key, 1, V2), {}, team)[0] == 200


def test_the_checks_of_a_bundle(org_key: Ed25519PrivateKey) -> None:
    found, _ = org_bundle.check(signed(org_key, 4, {"guardrails.yaml": b""}), public_pem(org_key))
    assert (found.version, found.document) == (4, signed(org_key, 4, {"guardrails.yaml": b""}))
    document = json.loads(signed(org_key, 4, V2))
    for change, says in ((("format", 2), "its format is 2"), (("version", True), "its version"),
                         (("extra", 1), "unknown field(s) extra"),
                         (("files", {"../x": ""}), "not a file of the organisation layer"),
                         (("files", {"guardrails.yaml": "%%"}), "is not base64"),
                         (("signature", "AAAA"), "64-byte Ed25519 signature")):
        with pytest.raises(org_bundle.Refused, match=re.escape(says)) as refused:
            org_bundle.check(json.dumps({**document, change[0]: change[1]}).encode(), None)
        assert refused.value.status == 400


def test_publish_says_so_when_the_server_is_down(tmp_path: Path,
                                                 org_key: Ed25519PrivateKey) -> None:
    path = tmp_path / "bundle.json"
    path.write_bytes(signed(org_key, 1, V2))
    done = gov("org", "publish", str(path), "--server", "http://127.0.0.1:9", token="t")
    assert done.returncode == 1 and done.stderr.count("\n") == 1
    assert "cannot reach the server http://127.0.0.1:9/org/bundle" in done.stderr
    assert "nothing was published" in done.stderr


def test_org_pull_installs_what_the_server_serves(
        server: Served, tmp_path: Path, org_key: Ed25519PrivateKey) -> None:
    managed_root.require()
    root = ManagedRoot(tmp_path / "machine")
    root.org.mkdir(parents=True, mode=0o755)
    (root.org / "org-key.pub").write_bytes(public_pem(org_key))
    (root.org / "org-key.pub").chmod(0o644)
    assert publish(server, tmp_path, signed(org_key, 2, V2), server.token).returncode == 0
    url = f"http://127.0.0.1:{server.port}/org/bundle"
    home = tmp_path / "home"
    home.mkdir()
    done = root.run([sys.executable, "-m", "governance.commands", "org", "pull", url],
                    env={"PATH": "/usr/bin:/bin", "HOME": str(home), "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    assert "Installed the organisation bundle version 2 (the first bundle here)" in done.stdout
    assert {name: (root.org / name).read_bytes() for name in V2} == V2
    assert json.loads((root.org / "bundle.json").read_text())["source"] == url


def test_bundles_in_the_team_database(project: Path, tmp_path: Path,
                                      request: pytest.FixtureRequest,
                                      org_key: Ed25519PrivateKey) -> None:
    """With --database the bundles are rows of org_bundles (migration 0004), the highest served;
    nothing is written in the project's folder."""
    team = request.getfixturevalue("cluster").new_database()   # skips without PostgreSQL
    from governance.storage import migration
    from governance.storage.pool import connect

    migration.migrate(team)
    install(project)
    served = start_server(project, "--database", team)
    try:
        assert served.request("GET", "/org/bundle", token=None)[0] == 404
        v2, v3 = signed(org_key, 2, V2), signed(org_key, 3, V3)
        assert publish(served, tmp_path, v2, served.token).returncode == 0
        assert publish(served, tmp_path, v3, served.token).returncode == 0
        older = publish(served, tmp_path, v2, served.token)
        assert older.returncode == 1
        assert "version 2, older than the published version 3" in older.stderr
        status, headers, body = served.request("GET", "/org/bundle", token=None)
        assert status == 200 and body == v3 and headers["x-governance-bundle-version"] == "3"
        with connect(team) as conn:
            rows = conn.execute("SELECT version, issued, document, published_by "
                                "FROM org_bundles ORDER BY version").fetchall()
        assert [(r[0], bytes(r[2])) for r in rows] == [(2, v2), (3, v3)]
        assert rows[1][1] == json.loads(v3)["issued"] and rows[1][3].startswith("bearer:")
        assert not (project / ".claude" / "governance" / bundles.FILE).exists()
    finally:
        stop_server(served)
