"""Whether the sandbox can start: the real bwrap where it is installed, a PATH without it where not."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from governance.sandbox.probe import probe

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the bubblewrap probe is Linux's")


@linux
def test_without_bubblewrap_on_path_the_probe_refuses_with_the_install_command(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty folder: neither bwrap nor socat
    verdict = probe()
    assert not verdict.ok
    assert "bubblewrap and socat not installed" in verdict.explain()
    assert "apt-get install bubblewrap socat" in verdict.explain()


@linux
def test_a_bwrap_that_cannot_make_a_sandbox_is_named_with_the_namespace_fix(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    socat = shutil.which("socat")
    if socat:
        (tmp_path / "socat").symlink_to(socat)
    else:
        (tmp_path / "socat").write_text("#!/bin/sh\n")
        (tmp_path / "socat").chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    verdict = probe()
    assert not verdict.ok
    assert "No permissions to creating new namespace" in verdict.explain()
    assert "unprivileged_userns_clone" in verdict.explain()


@linux
@pytest.mark.skipif(not (shutil.which("bwrap") and shutil.which("socat")),
                    reason="bubblewrap and socat are not installed here (.ci/run installs them)")
def test_the_real_bubblewrap_starts_a_sandbox_here() -> None:
    verdict = probe()
    assert verdict.ok, verdict.explain()
