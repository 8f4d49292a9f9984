"""A file outside the project deleted or emptied is ``destructive`` (docs/shell.md, "Losses outside
the project"): the project's git history cannot give back ``~/.ssh/id_rsa``, ``~/.bashrc`` or
``/etc/hosts``, however the loss is spelled. The project's own files, temporary folders, caches,
other git work trees, appends and files that are not there stay as they were."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from governance.policy.layer import GovernanceLayer
from tests.helpers import layer_in_do
from tests.helpers import layer_primitives as primitives


@pytest.fixture(scope="module")
def layer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GovernanceLayer]:
    root = tmp_path_factory.mktemp("losses")
    project, home = root / "shop-api", root / "home"
    for name, text in [("shop-api/src/app.py", "x = 1\n"), ("home/.ssh/id_rsa", "KEY\n"),
                       ("home/.ssh/authorized_keys", "ssh-ed25519 AAAA\n"),
                       ("home/.bashrc", "export PATH=$PATH:~/bin\n"),
                       ("home/.gitconfig", "[user]\n\tname = A\n"), ("home/.empty", ""),
                       ("home/notes.txt", "plans\n"), ("home/.cache/pip/wheel", "w\n"),
                       ("home/code/lib/x.py", "y = 2\n"), ("scratch/build.log", "log\n")]:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    subprocess.run(["git", "init", "-q"], cwd=home / "code" / "lib", check=True)
    with layer_in_do(project, home) as layer:
        yield layer


@pytest.fixture(autouse=True)
def home_of_layer(layer: GovernanceLayer, monkeypatch: pytest.MonkeyPatch) -> None:
    """The layer's home for the test (the per-test HOME is another folder)."""
    monkeypatch.setenv("HOME", str(Path(layer.project_dir).parent / "home"))


@pytest.mark.parametrize("command", [
    "rm ~/.ssh/id_rsa",
    "rm -f ~/.ssh/*",
    "rm -f ~/*",
    "unlink ~/.gitconfig",
    'rm "$HOME/notes.txt"',
    "cd ~ && rm .bashrc",
    "find ~/.ssh -name id_rsa -delete",
    ": > ~/.ssh/authorized_keys",
    "echo > ~/.ssh/authorized_keys",
    "echo 'export X=1' > ~/.bashrc",
    "cp /dev/null ~/.ssh/id_rsa",
    "install -m600 /dev/null ~/.ssh/id_rsa",
    "cat /dev/null >| ~/notes.txt",
    "rm /etc/hosts",
])
def test_a_loss_outside_the_project_is_destructive(layer: GovernanceLayer, command: str) -> None:
    assert "destructive" in primitives(layer, command), command


@pytest.mark.parametrize("command", [
    "rm src/app.py",
    "rm -f ../scratch/build.log",
    "rm ~/.cache/pip/wheel",
    "echo 'alias ll=\"ls -l\"' >> ~/.bashrc",
    "echo x > ~/.empty",
    "rm -f ~/missing.txt",
    "rm ~/code/lib/x.py",
    "cp src/app.py ~/new-copy.py",
    "cp src/app.py ~/code/",
])
def test_the_project_temporary_folders_caches_and_appends_are_not(layer: GovernanceLayer,
                                                                   command: str) -> None:
    assert "destructive" not in primitives(layer, command), command


def test_the_reason_names_the_file_and_why(layer: GovernanceLayer) -> None:
    acts, _ = layer.acts_for("Bash", {"command": "rm ~/.ssh/id_rsa"}, layer.project_dir)
    reasons = [a.reason for a in acts if a.primitive == "destructive"]
    assert reasons and "id_rsa is outside the project (in the home folder)" in reasons[0]
    assert "git history" in reasons[0]
