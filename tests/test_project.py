"""The project root module: finding the project, reading small files, and the stat-keyed memo."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from governance.project import find_project, read_bytes, recall, remember, signature


def test_read_bytes_reads_whole_files_of_any_size(tmp_path: Path) -> None:
    for size in (0, 1, 65535, 65536, 200_001):
        path = tmp_path / f"f{size}"
        data = os.urandom(size)
        path.write_bytes(data)
        assert read_bytes(str(path)) == data
    with pytest.raises(FileNotFoundError):
        read_bytes(str(tmp_path / "missing"))


def test_find_project_walks_up_to_claude_but_not_home(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    project = home / "shop-api"
    (project / ".claude").mkdir(parents=True)
    (project / "src" / "deep").mkdir(parents=True)
    assert find_project(str(project / "src" / "deep"), env={}) == str(project.resolve())
    loose = home / "loose"
    loose.mkdir()
    assert find_project(str(loose), env={}) == str(loose.resolve())
    with pytest.raises(ValueError, match="no project folder"):
        find_project(str(tmp_path / "gone"), env={})


def test_signature_names_every_file_and_missing_ones_by_path(tmp_path: Path) -> None:
    present = tmp_path / "a.yaml"
    present.write_text("a: 1\n")
    seen = signature([str(present), str(tmp_path / "b.yaml")])
    assert seen is not None
    assert seen[0][0] == str(present) and seen[0][1] == 5
    assert seen[1] == (str(tmp_path / "b.yaml"),)


def test_recall_returns_what_was_remembered_for_the_same_files(tmp_path: Path) -> None:
    source = tmp_path / "guardrails.yaml"
    source.write_text("version: 1\n")
    memo = str(tmp_path / ".cache" / "memo.marshal")
    seen = signature([str(source)])
    assert recall(memo, seen) is None  # nothing remembered yet
    remember(memo, seen, {"key": "abc", "tool_rules": 0})
    assert recall(memo, signature([str(source)])) == {"key": "abc", "tool_rules": 0}
    assert oct(os.stat(memo).st_mode & 0o777) == "0o600"


def test_any_write_makes_the_memo_stale_even_with_size_and_mtime_kept(tmp_path: Path) -> None:
    source = tmp_path / "guardrails.yaml"
    source.write_text("severity: warn\n")
    memo = str(tmp_path / "memo.marshal")
    remember(memo, signature([str(source)]), "old")
    before = source.stat()
    source.write_text("severity: blk\n\n")  # same length
    os.utime(source, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert source.stat().st_size == before.st_size
    assert recall(memo, signature([str(source)])) is None
    replaced = tmp_path / "new.yaml"
    replaced.write_text("x\n")
    remember(memo, signature([str(source)]), "fresh")
    os.replace(replaced, source)  # a new file in its place
    assert recall(memo, signature([str(source)])) is None


def test_a_source_appearing_or_vanishing_makes_the_memo_stale(tmp_path: Path) -> None:
    override = tmp_path / "override.yaml"
    memo = str(tmp_path / "memo.marshal")
    remember(memo, signature([str(override)]), "none")
    override.write_text("x: 1\n")
    assert recall(memo, signature([str(override)])) is None
    remember(memo, signature([str(override)]), "one")
    override.unlink()
    assert recall(memo, signature([str(override)])) is None


def test_a_broken_or_foreign_memo_is_no_memo(tmp_path: Path) -> None:
    source = tmp_path / "s"
    source.write_text("s")
    memo = tmp_path / "memo.marshal"
    seen = signature([str(source)])
    for junk in (b"", b"\x00garbage", b"N"):  # empty, undecodable, a marshalled None
        memo.write_bytes(junk)
        assert recall(str(memo), seen) is None
    assert recall(str(memo), None) is None


def test_remember_in_a_read_only_place_keeps_no_memo_and_raises_nothing(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    memo = str(blocker / "memo.marshal")
    remember(memo, signature([str(blocker)]), "value")
    assert recall(memo, signature([str(blocker)])) is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["not-a-folder"]


def test_the_installed_version_is_the_distributions_and_a_checkout_falls_back_to_pyproject(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib.metadata
    import tomllib

    from governance.project import installed_version, package_root

    declared = tomllib.loads(Path(package_root(), "pyproject.toml").read_text())["project"]["version"]
    assert installed_version() == importlib.metadata.version("claude-governance") == declared

    def missing(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    assert installed_version() == declared
