"""Tasks a project's configuration file holds as commands (docs/shell.md, "Task files"): deno
tasks, composer scripts, poe tasks, pdm and hatch scripts, and ``git hook run``: the command a
task name stands for is decided as itself."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from governance.policy.layer import GovernanceLayer
from tests.helpers import layer_in_do
from tests.helpers import layer_primitives as primitives

PYPROJECT = """\
[project]
name = "shop-api"

[tool.poe.tasks]
fmt = "rm -rf ~/notes"
lint = "ruff check ."
all = ["lint", "fmt"]
ship = {shell = "git push --force origin main"}
again = {ref = "fmt"}
gen = {script = "shop.tasks:generate"}

[tool.pdm.scripts]
tidy = "rm -rf ~/notes"
pre_test = "git push --force origin main"
test = "pytest -q"
check = {cmd = ["ruff", "check", "."]}
both = {composite = ["check", "tidy"]}
seed = {call = "shop.seed:main"}

[tool.hatch.envs.default.scripts]
tidy = "rm -rf ~/notes"
ci = ["check", "tidy"]
check = ["ruff check .", "mypy ."]

[tool.hatch.envs.docs.scripts]
publish = "git push --force origin gh-pages"
"""


@pytest.fixture(scope="module")
def layer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GovernanceLayer]:
    root = tmp_path_factory.mktemp("tasks")
    project, home = root / "shop-api", root / "home"
    (home / "notes").mkdir(parents=True)
    (home / "notes" / "plan.txt").write_text("keep\n")
    project.mkdir()
    (project / "pyproject.toml").write_text(PYPROJECT)
    (project / "deno.jsonc").write_text(
        '// tasks\n{ "tasks": { "fmt": "rm -rf ~/notes", /* the server */\n'
        '"dev": {"command": "deno run -A main.ts", "dependencies": ["fmt"]},\n'
        '"serve": "deno run -A main.ts" } }\n')
    (project / "composer.json").write_text(json.dumps({"scripts": {
        "tidy": "rm -rf ~/notes", "test": ["phpunit", "@tidy"], "lint": "phpcs src",
        "post-install-cmd": ["@tidy"], "post-update-cmd": "@tidy", "setup": "App\\Setup::run",
        "php-tidy": "@php -r \"echo 1;\""}}))
    with layer_in_do(project, home) as layer:
        hooks = project / ".git" / "hooks"
        (hooks / "pre-commit").write_text("#!/bin/sh\nrm -rf ~/notes\n")
        (hooks / "pre-commit").chmod(0o755)
        yield layer


@pytest.fixture(autouse=True)
def home_of_layer(layer: GovernanceLayer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(Path(layer.project_dir).parent / "home"))


@pytest.mark.parametrize("command", [
    "deno task fmt", "deno task dev", "deno task --quiet dev",
    "composer tidy", "composer run-script tidy", "composer run tidy", "composer test",
    "composer install", "composer update foo/bar",
    "poe fmt", "poe all", "poe again",
    "pdm run tidy", "pdm tidy", "pdm run both",
    "hatch run tidy", "hatch run ci", "hatch run default:tidy", "hatch -e default run tidy",
    "git hook run pre-commit",
])
def test_a_task_that_deletes_a_tree_is_destructive(layer: GovernanceLayer, command: str) -> None:
    assert "destructive" in primitives(layer, command)


@pytest.mark.parametrize("command", [
    "poe ship", "pdm run test", "hatch run docs:publish",
])
def test_a_task_that_pushes_is_vcs_push(layer: GovernanceLayer, command: str) -> None:
    assert "vcs-push" in primitives(layer, command)


@pytest.mark.parametrize("command", [
    "deno task serve", "composer lint", "composer install --no-scripts", "poe lint",
    "pdm run check", "hatch run check", "hatch run pytest -x", "pdm run pytest -x",
    "composer require --no-scripts foo/bar", "deno task missing", "poe missing",
])
def test_everyday_tasks_stay_quiet(layer: GovernanceLayer, command: str) -> None:
    found = primitives(layer, command)
    assert not found & {"destructive", "vcs-push", "shell-unknown", "governance-admin"}, found


def test_code_a_task_names_is_the_projects_own(layer: GovernanceLayer) -> None:
    assert primitives(layer, "poe gen") == {"shell-execute", "shell-unlisted"}
    assert "shell-execute" in primitives(layer, "pdm run seed")
    assert "shell-execute" in primitives(layer, "composer setup")


def test_a_task_named_at_run_time_is_unknown(layer: GovernanceLayer) -> None:
    assert "shell-unknown" in primitives(layer, 'deno task "$TASK"')
    assert "shell-unknown" in primitives(layer, 'poe "$TASK"')
    assert "shell-unknown" in primitives(layer, 'git hook run "$HOOK"')


def test_a_task_file_written_first_is_read_as_written(layer: GovernanceLayer) -> None:
    assert "vcs-push" in primitives(
        layer, "echo '{\"tasks\": {\"x\": \"git push -f\"}}' > deno.json && deno task x")
