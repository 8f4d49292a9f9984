"""`governance install --managed` / `uninstall --managed`: the real CLI run as root in a private
/etc (tests/managed_root.py), so no test touches the machine's managed settings."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests import managed_root
from tests.helpers import install as project_install
from tests.managed_root import ManagedRoot

REPO = Path(__file__).resolve().parents[2]
EVENTS = ("PreToolUse", "PostToolUse", "PostToolUseFailure", "SessionStart", "UserPromptSubmit")
ADMIN = {
    "env": {"HTTPS_PROXY": "http://proxy.corp:3128"},
    "permissions": {"deny": ["Read(/etc/shadow)"]},
    "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "/usr/local/bin/audit.sh"}]}]},
    "sandbox": {"filesystem": {"denyWrite": ["/srv/secrets"]}},
}


@pytest.fixture
def root(tmp_path: Path) -> ManagedRoot:
    managed_root.require()
    return ManagedRoot(tmp_path / "root")


def governance(root: ManagedRoot, *args: str, user: int | None = None
               ) -> subprocess.CompletedProcess[str]:
    """The CLI of this checkout inside the private /etc (as root, or as ``user`` via setpriv)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("CLAUDE_PROJECT_DIR", None)
    prefix = [] if user is None else ["setpriv", f"--reuid={user}", f"--regid={user}",
                                      "--clear-groups"]
    return root.run([*prefix, sys.executable, "-m", "governance.commands", *args], env=env,
                    cwd="/", timeout=120)


def ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def managed_settings(root: ManagedRoot) -> dict[str, object]:
    data: dict[str, object] = json.loads((root.managed / "managed-settings.json").read_text())
    return data


def our_handlers(data: dict[str, object]) -> dict[str, list[dict[str, object]]]:
    from governance.install import settings

    hooks = data.get("hooks")
    assert isinstance(hooks, dict)
    return {event: [h for group in groups for h in group["hooks"] if settings.is_ours(h)]
            for event, groups in hooks.items()}


def test_install_writes_the_project_installs_hooks_a_starter_matrix_and_a_manifest(
        root: ManagedRoot, project: Path) -> None:
    out = ok(governance(root, "install", "--managed", "--no-sandbox"))
    assert "Installed governance's managed layer in /etc/claude-code/managed-settings.json" in out
    data = managed_settings(root)
    ours = our_handlers(data)
    assert sorted(ours) == sorted(EVENTS)
    for event in EVENTS:
        (handler,) = ours[event]
        argv = shlex.split(str(handler["command"]))
        assert argv[0] == os.path.abspath(sys.executable) and argv[1:3] == ["-I", "-S"]
        assert Path(argv[3]).is_file() and argv[3].startswith(str(REPO / "hooks"))
    # exactly the groups a project install writes (same commands, matchers, timeouts, options)
    assert data["hooks"] == project_install(project)["hooks"]
    assert "sandbox" not in data and "allowManagedHooksOnly" not in data
    matrix = root.org / "activity_matrix.yaml"
    assert matrix.read_bytes() == (REPO / "config" / "org_activity_matrix.yaml").read_bytes()
    for path, mode in ((root.managed, 0o755), (root.org, 0o755), (matrix, 0o644),
                       (root.managed / "managed-settings.json", 0o644)):
        info = path.stat()
        assert (info.st_uid, info.st_mode & 0o7777) == (0, mode), path
    manifest = json.loads((root.org / "managed-install.json").read_text())
    assert manifest["hooks"] == sorted(EVENTS) and manifest["created_settings"] is True
    assert list(manifest["files"]) == ["/etc/claude-code/governance/activity_matrix.yaml"]


def test_a_second_install_changes_nothing_and_says_so(root: ManagedRoot) -> None:
    ok(governance(root, "install", "--managed", "--no-sandbox", "--fail-closed"))
    files = {path: path.read_bytes() for path in root.managed.rglob("*") if path.is_file()}
    out = ok(governance(root, "install", "--managed", "--no-sandbox", "--fail-closed"))
    assert "Already installed in /etc/claude-code/managed-settings.json; nothing changed." in out
    assert {path: path.read_bytes() for path in root.managed.rglob("*") if path.is_file()} == files
    pre = our_handlers(managed_settings(root))["PreToolUse"][0]
    assert pre["onFailure"] == "block" and str(pre["command"]).endswith("--on-error block")


def test_managed_only_is_set_kept_and_taken_back_only_when_ours(root: ManagedRoot) -> None:
    out = ok(governance(root, "install", "--managed", "--no-sandbox", "--managed-only"))
    assert "allowManagedHooksOnly: true" in out
    assert managed_settings(root)["allowManagedHooksOnly"] is True
    out = ok(governance(root, "install", "--managed", "--no-sandbox"))
    assert "allowManagedHooksOnly: kept" in out
    assert managed_settings(root)["allowManagedHooksOnly"] is True
    ok(governance(root, "install", "--managed", "--no-sandbox", "--no-managed-only"))
    assert "allowManagedHooksOnly" not in managed_settings(root)
    # the administrator's own true is theirs: uninstall leaves it
    data = managed_settings(root)
    data["allowManagedHooksOnly"] = True
    (root.managed / "managed-settings.json").write_text(json.dumps(data))
    ok(governance(root, "install", "--managed", "--no-sandbox", "--managed-only"))
    ok(governance(root, "uninstall", "--managed"))
    assert managed_settings(root) == {"allowManagedHooksOnly": True}


def test_uninstall_takes_back_exactly_what_install_added(root: ManagedRoot) -> None:
    root.managed.mkdir(parents=True)
    (root.managed / "managed-settings.json").write_text(json.dumps(ADMIN))
    ok(governance(root, "install", "--managed", "--no-sandbox", "--managed-only"))
    data = managed_settings(root)
    assert data["env"] == ADMIN["env"] and data["hooks"]["Stop"] == ADMIN["hooks"]["Stop"]
    out = ok(governance(root, "uninstall", "--managed"))
    assert "Removed 5 governance hook(s)" in out and "Took back allowManagedHooksOnly" in out
    assert managed_settings(root) == ADMIN
    assert not root.org.exists()   # the folder install created, now empty
    out = ok(governance(root, "uninstall", "--managed"))
    assert "Nothing to take back" in out and managed_settings(root) == ADMIN


def test_uninstall_removes_what_it_created_and_keeps_an_edited_matrix(root: ManagedRoot) -> None:
    ok(governance(root, "install", "--managed", "--no-sandbox"))
    ok(governance(root, "uninstall", "--managed"))
    assert not root.managed.exists()   # settings file and folders were all ours
    ok(governance(root, "install", "--managed", "--no-sandbox"))
    matrix = root.org / "activity_matrix.yaml"
    matrix.write_text(matrix.read_text() + "# our own floor\n")
    out = ok(governance(root, "uninstall", "--managed"))
    assert "Kept /etc/claude-code/governance/activity_matrix.yaml" in out
    assert matrix.read_text().endswith("# our own floor\n")
    assert not (root.managed / "managed-settings.json").exists()
    out = ok(governance(root, "install", "--managed", "--no-sandbox"))
    assert "starter organisation matrix" not in out   # never over the administrator's file
    assert matrix.read_text().endswith("# our own floor\n")


def test_the_sandbox_backstop_holds_only_what_needs_no_project(root: ManagedRoot) -> None:
    root.managed.mkdir(parents=True)
    (root.managed / "managed-settings.json").write_text(json.dumps(ADMIN))
    done = governance(root, "install", "--managed", "--sandbox")
    if done.returncode != 0 and "sandbox cannot start" in done.stderr:
        pytest.skip(f"Claude Code's sandbox cannot start here: {done.stderr.strip()[:200]}")
    ok(done)
    sandbox = managed_settings(root)["sandbox"]
    assert isinstance(sandbox, dict)
    assert (sandbox["enabled"], sandbox["allowUnsandboxedCommands"],
            sandbox["failIfUnavailable"]) == (True, False, True)
    assert "network" not in sandbox   # the network rule follows a project's state
    deny = sandbox["filesystem"]["denyWrite"]
    assert deny[0] == "/srv/secrets" and str(REPO / "governance") in deny
    assert "/etc/claude-code" in deny
    ok(governance(root, "uninstall", "--managed"))
    assert managed_settings(root) == ADMIN


def test_without_root_it_names_the_command_to_run(root: ManagedRoot, tmp_path: Path) -> None:
    from governance.install.managed import permission_problem

    assert "uid 1000" in permission_problem(euid=1000)
    assert permission_problem(euid=0, target=str(tmp_path / "etc" / "claude-code")) == ""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("running the CLI as another user needs root and setpriv")
    probe = root.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                      sys.executable, "-c", "import governance.commands, governance; "
                      "print(governance.__file__)"],
                     env={**os.environ, "PYTHONPATH": str(REPO)}, cwd="/")
    if probe.returncode != 0 or not probe.stdout.strip().startswith(str(REPO)):
        # a checkout in a folder only root may enter (a CI clone)
        pytest.skip(f"uid 65534 cannot import this checkout "
                    f"({(probe.stderr or probe.stdout).strip()[-200:]})")
    done = governance(root, "install", "--managed", "--managed-only", user=65534)
    assert done.returncode == 1, done.stdout + done.stderr
    launch = REPO / "hooks" / "launch.py"
    wanted = (f"sudo {os.path.abspath(sys.executable)} -I {launch} governance.commands install "
              "--managed --managed-only")
    assert wanted in done.stderr and "this runs as uid 65534" in done.stderr
    assert "nothing was changed" in done.stderr and not root.managed.exists()
    done = governance(root, "uninstall", "--managed", user=65534)
    assert done.returncode == 1 and "governance.commands uninstall --managed" in done.stderr


def test_the_org_key_is_installed_checked_and_taken_back(root: ManagedRoot, tmp_path: Path) -> None:
    serialization = pytest.importorskip("cryptography.hazmat.primitives.serialization")
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    private = Ed25519PrivateKey.generate()
    public = private.public_key().public_bytes(serialization.Encoding.PEM,
                                               serialization.PublicFormat.SubjectPublicKeyInfo)
    secret = private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                   serialization.NoEncryption())
    (tmp_path / "org.pem").write_bytes(public)
    (tmp_path / "org.key").write_bytes(secret)
    done = governance(root, "install", "--managed", "--no-sandbox", "--org-key",
                      str(tmp_path / "org.key"))
    assert done.returncode == 1 and "not an Ed25519 public key" in done.stderr
    assert not root.managed.exists()
    out = ok(governance(root, "install", "--managed", "--no-sandbox", "--org-key",
                        str(tmp_path / "org.pem")))
    assert "Installed the organisation's public key /etc/claude-code/governance/org-key.pub" in out
    key = root.org / "org-key.pub"
    assert key.read_bytes() == public and key.stat().st_mode & 0o777 == 0o644
    ok(governance(root, "uninstall", "--managed"))
    assert not key.exists()


def test_a_project_install_under_managed_hooks_registers_no_second_copy(
        root: ManagedRoot, project: Path) -> None:
    ok(governance(root, "install", "--project", str(project), "--no-sandbox"))
    settings = project / ".claude" / "settings.json"
    assert our_handlers(json.loads(settings.read_text()))["PreToolUse"]
    ok(governance(root, "install", "--managed", "--no-sandbox"))
    doctor = governance(root, "doctor", "--project", str(project))
    assert "registered both in the managed settings and in the project" in doctor.stdout
    assert "decided and recorded twice" in doctor.stdout
    out = ok(governance(root, "install", "--project", str(project), "--no-sandbox"))
    assert "Not registered in the project: the managed settings" in out
    assert not any(our_handlers(json.loads(settings.read_text())).values())
    assert (project / ".claude" / "governance").is_dir()   # the project's own files stay
    again = ok(governance(root, "install", "--project", str(project), "--no-sandbox"))
    assert "nothing changed" in again and not any(
        our_handlers(json.loads(settings.read_text())).values())


def test_doctor_reports_both_layers(root: ManagedRoot, project: Path) -> None:
    ok(governance(root, "install", "--managed", "--no-sandbox", "--managed-only"))
    ok(governance(root, "install", "--project", str(project), "--no-sandbox"))
    out = governance(root, "doctor", "--project", str(project)).stdout
    python = os.path.abspath(sys.executable)
    assert (f"ok    managed settings (/etc/claude-code/managed-settings.json) run governance's "
            f"hooks for every user (PreToolUse, PostToolUse, PostToolUseFailure, SessionStart, "
            f"UserPromptSubmit) with {python}; installed by root on ") in out
    assert "ok    PreToolUse hook registered in the managed settings: " in out
    assert "ok    allowManagedHooksOnly: true" in out
    assert ("ok    organisation matrix /etc/claude-code/governance/activity_matrix.yaml (owner "
            "root, mode 644)") in out
    assert "note  no organisation key (/etc/claude-code/governance/org-key.pub)" in out
    assert "SessionStart hook registered" in out and "not registered" not in out
    assert "live PreToolUse call answered" in out, out
    (root.org / "activity_matrix.yaml").chmod(0o664)
    out = governance(root, "doctor", "--project", str(project)).stdout
    assert ("FAIL  /etc/claude-code/governance/activity_matrix.yaml is writable by its group or "
            "others (mode 664): the hooks refuse the organisation's files and fail closed for its "
            "rules; fix: sudo chown root:root /etc/claude-code/governance/activity_matrix.yaml && "
            "sudo chmod go-w /etc/claude-code/governance/activity_matrix.yaml") in out


def test_doctor_without_a_managed_layer_says_how_to_add_one(root: ManagedRoot,
                                                           project: Path) -> None:
    ok(governance(root, "install", "--project", str(project), "--no-sandbox"))
    out = governance(root, "doctor", "--project", str(project)).stdout
    assert "note  no managed layer: governance's hooks are not in Claude Code's managed settings" \
        in out
    assert "sudo " in out and "install --managed" in out
