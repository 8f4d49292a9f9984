"""A transfer's direction is its destination's: to a bucket or a remote uploads (``vcs-push``),
from one to this machine downloads (``web-fetch``) and writes the destination (``file-write``,
``governance-admin`` when what lands there may be a protected file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from governance.shell.analysis import analyse_command
from governance.shell.schema import load_default_shell
from tests.shell.corpus import is_protected

SHELL = load_default_shell()


def acts(command: str, cwd: str | None = None) -> set[str]:
    return {a.primitive for a in analyse_command(command, SHELL, is_protected=is_protected,
                                                 cwd=cwd)}


@pytest.fixture
def project(tmp_path: Path) -> str:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text("{}")
    return str(tmp_path)


@pytest.mark.parametrize("command", [
    "aws s3 sync s3://bucket/path ./data", "aws s3 cp s3://bucket/report.csv ./",
    "aws s3 cp s3://bucket/report.csv .", "aws s3 cp s3://bucket/x.json - | jq .",
    "aws --profile dev s3 cp s3://bucket/x ./data/", "gsutil cp gs://bucket/x .",
    "gsutil -m rsync -r gs://bucket/d ./d", "rsync host:/srv/data ./", "rsync -av host:/x ./backup/",
    "rclone copy remote:photos ./photos",
])
def test_a_download_is_a_fetch_not_a_push(command: str, project: str) -> None:
    found = acts(command, project)
    assert "web-fetch" in found and not found & {"vcs-push", "governance-admin"}, (command, found)


@pytest.mark.parametrize("command", [
    "aws s3 sync ./data s3://bucket/path", "aws s3 cp ./x s3://bucket/x",
    "aws s3 cp - s3://bucket/x", "aws s3 cp s3://a/x s3://b/x", "aws s3 cp s3://a/x \"$DEST\"",
    "gsutil cp x gs://bucket/", "gsutil rsync -r ./d gs://bucket/d",
    "rclone copy ./dist remote:bucket", "rclone sync ./site s3remote:web",
])
def test_an_upload_is_a_push(command: str) -> None:
    assert "vcs-push" in acts(command), (command, acts(command))


@pytest.mark.parametrize("command", [
    "aws s3 sync s3://bucket/x .", "aws s3 cp --recursive s3://bucket/x .",
    "aws s3 cp s3://bucket/settings.json .claude/", "aws s3 cp s3://bucket/.claude .",
    "gsutil cp -r gs://bucket/x .", "gsutil cp gs://bucket/settings.json .claude/",
    "rclone copy remote: ./", "rclone copy remote:x .claude",
    "rsync -av host:/srv/data/ ./", "rsync -av host:/srv/.claude ./", "rsync -aR host:/x ./",
    "rsync host:'/x/*' ./", "rsync -av host:/srv/x .claude/",
])
def test_a_download_that_may_land_on_a_protected_file_is_governance_admin(
        command: str, tmp_path: Path) -> None:
    from tests.helpers import layer_in_do

    (tmp_path / "p").mkdir()
    with layer_in_do(tmp_path / "p", tmp_path / "home") as layer:
        found, _ = layer.acts_for("Bash", {"command": command}, layer.project_dir)
    assert "governance-admin" in {a.primitive for a in found}, (command, found)
