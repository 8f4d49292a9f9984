"""``governance.knowledge.sop``: SOP files, their front matter and the sections the model sees."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from governance.errors import ConfigError
from governance.knowledge.sop import load_all, parse, sop_dirs

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "sops"

DEPLOY = """---
title: Deploying with docker compose
match:
  technologies: [docker]
  commands: [docker compose, docker-compose]
  hosts: ["10.0.0.*"]
---
# Docker deploys

Some background the model does not need.

## Preflight
- Run `docker compose config` first.

## Gotchas
Never `docker compose down -v` on the shared box: it deletes the volumes.

## Credentials
The registry token is in 1Password, vault "infra", item "registry".

## History
Not injected.
"""


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    return path


def test_front_matter_and_only_the_three_sections(tmp_path: Path) -> None:
    sop = parse(str(write(tmp_path, "docker-deploy.ai.sop", DEPLOY)))
    assert sop.name == "docker-deploy"
    assert sop.title == "Deploying with docker compose"
    assert sop.match == {"technologies": ["docker"], "commands": ["docker compose", "docker-compose"],
                         "hosts": ["10.0.0.*"]}
    assert set(sop.sections) == {"preflight", "gotchas", "credentials"}
    assert "down -v" in sop.sections["gotchas"]
    assert "Not injected" not in " ".join(sop.sections.values())
    assert "background" not in " ".join(sop.sections.values())


def test_without_front_matter_the_file_name_decides(tmp_path: Path) -> None:
    sop = parse(str(write(tmp_path, "shop-api.ai.sop", "# Shop API\n\n## Pre-flight checks\nRun the"
                                                        " smoke tests.\n\n## Gotcha\nPort 8080.\n")))
    assert sop.match is None
    assert sop.title == "Shop API"
    assert sop.sections == {"preflight": "Run the smoke tests.", "gotchas": "Port 8080."}


def test_a_heading_inside_a_code_fence_is_text(tmp_path: Path) -> None:
    sop = parse(str(write(tmp_path, "x.ai.sop", "## Gotchas\n```\n## Credentials\nnot a section\n```\n")))
    assert set(sop.sections) == {"gotchas"}
    assert "not a section" in sop.sections["gotchas"]


@pytest.mark.parametrize(("text", "key", "words"), [
    ("---\nmatch: [docker]\n---\n## Gotchas\nx\n", "match", "mapping"),
    ("---\nmatch:\n  clouds: [aws]\n---\n## Gotchas\nx\n", "match.clouds", "unknown match key"),
    ("---\nmatch:\n  hosts: []\n---\n## Gotchas\nx\n", "match.hosts", "list of names"),
    ("---\nowner: me\n---\n## Gotchas\nx\n", "owner", "unknown front matter key"),
    ("---\nmatch: {a: [\n---\n## Gotchas\nx\n", None, "not valid YAML"),
    ("---\nmatch:\n  hosts: [a]\n## Gotchas\nx\n", None, "closing '---'"),
    ("# Only a title\n\nSome text.\n", None, "no preflight, gotchas or credentials"),
])
def test_malformed_files_name_the_file_and_key(tmp_path: Path, text: str, key: str | None,
                                               words: str) -> None:
    path = write(tmp_path, "bad.ai.sop", text)
    with pytest.raises(ConfigError) as caught:
        parse(str(path))
    assert caught.value.file == str(path)
    assert caught.value.key == key
    assert words in caught.value.message
    assert caught.value.fix


def test_the_project_wins_a_name_clash_and_a_bad_file_does_not_hide_the_rest(project: Path) -> None:
    org_dir, project_dir, user_dir = (Path(d) for d in sop_dirs(str(project)))
    assert org_dir == Path("/etc/claude-code/governance/sops")    # first: it wins a clash
    assert user_dir == Path(os.environ["HOME"]) / ".claude" / "sops"
    write(project_dir, "docker-deploy.ai.sop", DEPLOY)
    write(user_dir, "docker-deploy.ai.sop", "## Gotchas\nthe user's version\n")
    write(user_dir, "fleet.ai.sop", "## Preflight\nCheck the fleet dashboard.\n")
    write(user_dir, "broken.ai.sop", "---\nmatch: [x]\n---\n## Gotchas\nx\n")
    write(user_dir, "notes.md", "## Gotchas\nnot an SOP\n")
    sops, problems = load_all(str(project))
    by_name = {s.name: s for s in sops}
    assert set(by_name) == {"docker-deploy", "fleet"}
    assert by_name["docker-deploy"].path == str(project_dir / "docker-deploy.ai.sop")
    assert [p.file for p in problems] == [str(user_dir / "broken.ai.sop")]


def test_the_shipped_examples_parse() -> None:
    names = sorted(p.name for p in EXAMPLES.glob("*.ai.sop"))
    assert len(names) >= 2
    for name in names:
        sop = parse(str(EXAMPLES / name))
        assert sop.sections, name
