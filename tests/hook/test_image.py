"""The hook image (hooks/bootstrap.py, governance.hook.image): a hook process's modules from one
file, only while their sources are unchanged; anything else is imported the usual way."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO, install, recorded, set_state

PROBE = """
import sys
sys.path.insert(0, {hooks!r})
import bootstrap
image = bootstrap._image(bootstrap._put_package_on_path())
import governance.hook.run, governance.policy.decision as decision
print(type(decision.__loader__).__name__, decision.__file__, getattr(decision, "PROBE", None),
      type(governance.hook.run.__loader__).__name__)
"""


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """The package, its hook scripts and its configs, copied without any compiled file."""
    root = tmp_path / "installed"
    skip = shutil.ignore_patterns("__pycache__")
    for folder in ("governance", "hooks", "config"):
        shutil.copytree(REPO / folder, root / folder, ignore=skip)
    return root


def image_file(copy: Path) -> Path:
    return copy / "governance" / "__pycache__" / f"hook-image.{sys.implementation.cache_tag}.marshal"


def hook(copy: Path, project: Path, name: str = "PreToolUse-Bash.json",
         env: dict[str, str] | None = None) -> dict[str, object]:
    script = copy / "hooks" / ("pre_tool_use.py" if name.startswith("Pre") else "post_tool_use.py")
    done = subprocess.run([sys.executable, "-I", "-S", str(script)],
                          input=json.dumps(recorded(name, project)).encode(), capture_output=True,
                          check=True, env={"HOME": str(project.parent / "home"), **(env or {})})
    assert done.stderr == b""
    answer: dict[str, object] = json.loads(done.stdout or b"{}")
    return answer


def probe(copy: Path) -> list[str]:
    done = subprocess.run([sys.executable, "-I", "-S", "-c", PROBE.format(hooks=str(copy / "hooks"))],
                          capture_output=True, text=True, check=True)
    return done.stdout.split()


@pytest.fixture
def installed(copy: Path, project: Path) -> Path:
    install(project)
    set_state(project, "implementation-cycle/DO")
    # The copy's first call compiles the project's caches anew (yaml, pydantic): a call on that
    # cold path leaves the image unwritten, so that its modules never weigh on the warm calls.
    hook(copy, project)
    assert not image_file(copy).exists()
    return project


def test_a_call_writes_the_image_and_the_next_is_served_from_it(copy: Path,
                                                                installed: Path) -> None:
    assert probe(copy)[0] == "SourceFileLoader"   # no image yet
    first = hook(copy, installed)
    assert image_file(copy).is_file()
    loader, origin, _, run_loader = probe(copy)
    assert (loader, run_loader) == ("Image", "Image")
    assert origin == str(copy / "governance" / "policy" / "decision.py")   # __file__: the source
    assert hook(copy, installed) == first   # the same answer from the image


def test_a_changed_source_is_imported_from_itself_and_the_image_follows(copy: Path,
                                                                       installed: Path) -> None:
    hook(copy, installed)
    decision = copy / "governance" / "policy" / "decision.py"
    decision.write_text(decision.read_text() + "\nPROBE = 'changed'\n")
    assert probe(copy)[0::2] == ["SourceFileLoader", "changed"]
    hook(copy, installed)   # rewrites the image with the changed module
    assert probe(copy)[0::2] == ["Image", "changed"]


def test_a_broken_image_is_written_anew_and_never_fails_a_call(copy: Path,
                                                               installed: Path) -> None:
    expected = hook(copy, installed)
    for garbage in (b"", b"not marshal at all", b"\xe9" * 64):
        image_file(copy).write_bytes(garbage)
        assert hook(copy, installed) == expected
        assert image_file(copy).read_bytes() != garbage
    assert probe(copy)[0] == "Image"


def test_modules_of_other_paths_stay_in_the_image(copy: Path, installed: Path) -> None:
    import marshal

    hook(copy, installed)
    hook(copy, installed, "PostToolUse-Read.json")
    data = image_file(copy).read_bytes()
    length = int.from_bytes(data[8:16], "little")
    _, table = marshal.loads(data[16:16 + length])
    assert {"governance.shell.analysis", "governance.hook.run", "governance.system"} <= set(table)
    body = data[16 + length:]
    for _origin, _package, _mtime, _size, offset, size in table.values():
        if size >= 0:
            marshal.loads(body[offset:offset + size])  # each module's code, where the table says
    assert len(body) == sum(entry[5] for entry in table.values() if entry[5] >= 0)


def test_the_standard_library_modules_a_call_imports_are_held_by_their_files(
        copy: Path, installed: Path) -> None:
    """``__future__`` (named by every module of ours) is held as code, the compiled ``_json``
    as its file; a module of the standard library is held only while its file is unchanged."""
    import marshal

    hook(copy, installed)
    data = image_file(copy).read_bytes()
    length = int.from_bytes(data[8:16], "little")
    _, table = marshal.loads(data[16:16 + length])
    stdlib = Path(json.__file__).parent.parent      # .../lib/python3.X
    foreign = {name: entry for name, entry in table.items() if not name.startswith("governance")}
    assert "__future__" in foreign
    for name, (origin, _package, mtime, size, _offset, length_) in foreign.items():
        assert Path(origin).is_relative_to(stdlib) and "site-packages" not in origin, name
        info = Path(origin).stat()
        assert (info.st_mtime_ns, info.st_size) == (mtime, size)
        assert (length_ < 0) == origin.endswith(".so"), name
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", PROBE.format(hooks=str(copy / "hooks"))
         + "import __future__, _json\n"
           "print(type(__future__.__loader__).__name__, type(_json.__loader__).__name__, "
           "__future__.__file__ == __future__.__spec__.origin)"],
        capture_output=True, text=True, check=True)
    served = done.stdout.split()[-3:]
    assert served[0] == "Image" and served[2] == "True"
    assert served[1] in ("ExtensionFileLoader", "BuiltinImporter")  # _json built in elsewhere


def test_the_image_can_be_turned_off(copy: Path, installed: Path) -> None:
    hook(copy, installed, env={"GOVERNANCE_HOOK_IMAGE": "off"})
    assert not image_file(copy).exists()
