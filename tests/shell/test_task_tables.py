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
    (project / "Taskfile.yml").write_text(
        "version: '3'\ntasks:\n  default:\n    cmds:\n      - task: lint\n"
        "  tidy:\n    deps: [lint]\n    cmds:\n      - rm -rf ~/notes\n"
        "  lint:\n    cmds:\n      - ruff check . {{.CLI_ARGS}}\n"
        "  ship: git push --force origin main\n  odd: {cmd: ls}\n")
    (project / "lefthook.yml").write_text(
        "pre-commit:\n  commands:\n    lint:\n      run: ruff check {staged_files}\n"
        "pre-push:\n  commands:\n    tidy:\n      run: rm -rf ~/notes\n"
        "post-merge:\n  scripts:\n    \"sync.sh\":\n      runner: bash\n")
    (project / ".lefthook" / "post-merge").mkdir(parents=True)
    (project / ".lefthook" / "post-merge" / "sync.sh").write_text("git push --force origin main\n")
    (project / ".pre-commit-config.yaml").write_text(
        "repos:\n-   repo: local\n    hooks:\n    -   id: tidy\n        name: tidy\n"
        "        entry: rm -rf ~/notes\n        language: system\n        pass_filenames: false\n"
        "    -   id: fmt\n        name: fmt\n        entry: ruff format\n        language: system\n"
        "-   repo: https://github.com/astral-sh/ruff-pre-commit\n    rev: v0.4.0\n    hooks:\n"
        "      - id: ruff\n")
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
    "task tidy", "go-task tidy", "task -t Taskfile.yml tidy", "lefthook run pre-push",
    "pre-commit run --all-files", "pre-commit run tidy",
])
def test_a_task_that_deletes_a_tree_is_destructive(layer: GovernanceLayer, command: str) -> None:
    assert "destructive" in primitives(layer, command)


@pytest.mark.parametrize("command", [
    "poe ship", "pdm run test", "hatch run docs:publish", "task ship",
    "lefthook run post-merge",
])
def test_a_task_that_pushes_is_vcs_push(layer: GovernanceLayer, command: str) -> None:
    assert "vcs-push" in primitives(layer, command)


@pytest.mark.parametrize("command", [
    "deno task serve", "composer lint", "composer install --no-scripts", "poe lint",
    "pdm run check", "hatch run check", "hatch run pytest -x", "pdm run pytest -x",
    "composer require --no-scripts foo/bar", "deno task missing", "poe missing",
    "task", "task lint", "task lint -- --fix", "lefthook run pre-commit",
    "pre-commit run fmt --all-files", "pre-commit run ruff",
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


def test_a_yaml_task_file_it_cannot_read_is_unknown(layer: GovernanceLayer) -> None:
    project = Path(layer.project_dir)
    text = (project / "Taskfile.yml").read_text()
    try:
        (project / "Taskfile.yml").write_text(text.replace("  odd: {cmd: ls}\n",
                                                           "  odd: &x ls\n  odder: *x\n"))
        assert "shell-unknown" in primitives(layer, "task lint")
    finally:
        (project / "Taskfile.yml").write_text(text)
