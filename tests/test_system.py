"""governance.system behaves as os and os.path do, for the paths a hook process meets."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from governance import system

PART = st.sampled_from(["", ".", "..", "a", "b", "src", "~", "~root", "x.py", " ", "é", "-"])
PATH = st.builds(lambda lead, parts, tail: lead + "/".join(parts) + tail,
                 st.sampled_from(["", "/", "//", "///", "./", "../", "~/", "~"]),
                 st.lists(PART, max_size=6), st.sampled_from(["", "/", "//"]))


@settings(max_examples=400, deadline=None)
@given(PATH, st.lists(PATH, max_size=3))
def test_pure_path_functions_match_os_path(path: str, more: list[str]) -> None:
    assert system.join(path, *more) == os.path.join(path, *more)
    assert system.split(path) == os.path.split(path)
    assert system.dirname(path) == os.path.dirname(path)
    assert system.basename(path) == os.path.basename(path)
    assert system.normpath(path) == os.path.normpath(path)
    assert system.abspath(path) == os.path.abspath(path)
    assert system.isabs(path) == os.path.isabs(path)
    assert system.expanduser(path) == os.path.expanduser(path)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """Folders, files and links of every kind: relative, absolute, chained, dangling, looping."""
    (tmp_path / "real" / "deep").mkdir(parents=True)
    (tmp_path / "real" / "file.txt").write_text("x")
    (tmp_path / "rel").symlink_to("real")
    (tmp_path / "abs").symlink_to(tmp_path / "real")
    (tmp_path / "chain").symlink_to("rel/deep")
    (tmp_path / "up").symlink_to("real/deep/..")
    (tmp_path / "dangling").symlink_to("nowhere/at/all")
    (tmp_path / "loop1").symlink_to("loop2")
    (tmp_path / "loop2").symlink_to("loop1")
    (tmp_path / "self").symlink_to("self")
    (tmp_path / "real" / "deep" / "back").symlink_to("../../abs/file.txt")
    return tmp_path


NAMES = st.sampled_from(["real", "deep", "file.txt", "rel", "abs", "chain", "up", "dangling",
                         "loop1", "loop2", "self", "back", "..", ".", "", "missing"])


@settings(max_examples=400, deadline=None,  # the tree is only read: one for every example
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(NAMES, min_size=1, max_size=5))
def test_realpath_and_tests_match_os_path_on_real_links(tree: Path, names: list[str]) -> None:
    path = str(tree) + "/" + "/".join(names)
    assert system.realpath(path) == os.path.realpath(path)
    for test in ("exists", "lexists", "isfile", "isdir", "islink"):
        assert getattr(system, test)(path) == getattr(os.path, test)(path), (test, path)


def test_realpath_of_a_relative_path_starts_at_the_working_folder(
        tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tree)
    for path in ("rel/file.txt", "chain/../file.txt", "../" + tree.name + "/abs", "dangling/x"):
        assert system.realpath(path) == os.path.realpath(path)


def test_the_environment_is_os_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GOVERNANCE_SYSTEM_PROBE", "välue")
    assert system.environ_get("GOVERNANCE_SYSTEM_PROBE") == "välue"
    monkeypatch.delenv("GOVERNANCE_SYSTEM_PROBE")
    assert system.environ_get("GOVERNANCE_SYSTEM_PROBE", "gone") == "gone"


def test_expanduser_without_home_asks_the_password_database(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HOME")
    for path in ("~", "~/x", "~root/x", "~no-such-user-here/x"):
        assert system.expanduser(path) == os.path.expanduser(path)


def test_makedirs_makes_every_missing_folder_and_keeps_what_is_there(tmp_path: Path) -> None:
    target = str(tmp_path / "a" / "b" / "c")
    system.makedirs(target, 0o700)
    assert os.path.isdir(target)
    system.makedirs(target + "/", exist_ok=True)
    with pytest.raises(FileExistsError):
        system.makedirs(target)
    (tmp_path / "file").write_text("")
    with pytest.raises(FileExistsError):
        system.makedirs(str(tmp_path / "file"), exist_ok=True)
    with pytest.raises(NotADirectoryError):
        system.makedirs(str(tmp_path / "file" / "below"), exist_ok=True)


def test_importing_it_does_not_import_os() -> None:
    root = str(Path(system.__file__).parents[1])
    code = f"import sys; sys.path.insert(0, {root!r}); import governance.system; print('os' in sys.modules)"
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "False"


@pytest.mark.parametrize(("path", "expected"), [
    ("/proc/self/cwd/.claude/settings.json", "/srv/app/.claude/settings.json"),
    ("/proc/thread-self/cwd", "/srv/app"),
    ("/proc/4242/cwd/../x", "/srv/app/../x"),
    ("/proc/4242/task/4243/cwd/a", "/srv/app/a"),
    ("/proc/self/root/etc/passwd", "/etc/passwd"),
    ("/proc/1/root", "/"),
    ("/proc/self/environ", "/proc/self/environ"),
    ("/proc/self/fd/3", "/proc/self/fd/3"),
    ("/proc/cpuinfo", "/proc/cpuinfo"),
    ("notes/a.md", "/srv/app/notes/a.md"),
    ("/etc/hosts", "/etc/hosts"),
])
def test_located_reads_a_process_folder_link_as_the_callers(path: str, expected: str) -> None:
    # the hook or server resolving /proc/self/cwd would read its own folder, not the agent's
    assert system.located("/srv/app", path) == expected
