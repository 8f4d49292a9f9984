"""The docs say what the code does: the README names every command, recipe and hook script, and
the reference pages (docs/reference) are what the code generates now."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from governance.commands.cli import COMMANDS, main
from tests.helpers import REPO

README = (REPO / "README.md").read_text()
REFERENCE = REPO / "docs" / "reference"


def mentioned(words: str, text: str) -> bool:
    """``words`` as a whole (``governance status`` is not in ``governance statusline``)."""
    return re.search(rf"{re.escape(words)}(?![\w-])", text) is not None


def test_every_cli_command_is_in_the_readme() -> None:
    missing = [name for name in COMMANDS if not mentioned(f"governance {name}", README)]
    assert not missing, f"README.md does not mention: {missing}"


def test_every_user_facing_just_recipe_is_in_the_readme() -> None:
    lines = [line for line in (REPO / "justfile").read_text().splitlines() if ":=" not in line]
    recipes = [m.group(1) for line in lines if (m := re.match(r"([a-z][a-z-]*)[^:]*:", line))]
    internal = {"default", "setup", "lint", "ci", "test", "docs"}   # for working on this repository
    missing = [r for r in recipes if r not in internal and not mentioned(f"just {r}", README)]
    assert not missing, f"README.md does not mention: {missing}"


def test_every_hook_script_is_documented() -> None:
    for script in sorted((REPO / "hooks").glob("*.py")):
        assert script.name in README, script.name


def test_the_reference_pages_are_current(tmp_path: Path) -> None:
    assert main(["reference", "--write", str(tmp_path)]) == 0
    written = sorted(p.name for p in tmp_path.iterdir())
    assert written == ["cli.md", "matrix.md"]
    stale = [name for name in written
             if not (REFERENCE / name).exists()
             or (REFERENCE / name).read_text() != (tmp_path / name).read_text()]
    assert not stale, (f"docs/reference/{', '.join(stale)} is not what the code generates now: "
                       "regenerate with `just docs` (or `governance reference --write "
                       "docs/reference`) and commit the result")


def test_reference_check_says_how_to_regenerate(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["reference", "--write", str(tmp_path)]) == 0
    (tmp_path / "cli.md").write_text("old\n")
    assert main(["reference", "--check", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "cli.md is not current" in err and "just docs" in err and "matrix.md" not in err


def test_the_reference_describes_every_key_primitive_and_command() -> None:
    from governance.commands.reference import _packaged, undocumented
    from governance.policy.schema import MatrixFile, Settings

    assert undocumented() == []
    matrix = (REFERENCE / "matrix.md").read_text()
    for name in [*MatrixFile.model_fields, *Settings.model_fields]:
        assert f"| `{name}` |" in matrix, name
    for primitive in _packaged()["rules"]:
        assert f"| `{primitive}` |" in matrix, primitive
    cli = (REFERENCE / "cli.md").read_text()
    for name in COMMANDS:
        assert f"## `governance {name}`" in cli, name
    assert "| `--project PROJECT` |" in cli and "### `governance state set`" in cli


def test_the_reference_depends_on_nothing_of_this_machine() -> None:
    for page in REFERENCE.glob("*.md"):
        text = page.read_text()
        for local in (str(REPO), str(Path.home()), "/tmp/"):
            assert local not in text, (page.name, local)


def test_the_docs_do_not_promise_a_fail_open_for_a_changed_matrix() -> None:
    """A matrix written behind governance's back is not used (the accepted one stays in force);
    only an accepted matrix that cannot be read makes the hook fail open."""
    texts = {p.name: p.read_text() for p in (REPO / "docs").glob("*.md")}
    texts["README.md"] = README
    wrong = [name for name, text in texts.items() if "fails open *loudly*" in text
             or "fail-open, loudly" in text]
    assert not wrong, wrong
