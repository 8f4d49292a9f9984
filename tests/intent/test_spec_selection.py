"""``governance.intent.spec`` (the declared intents) and ``intent.selection`` (the active one),
with ``governance intent`` and ``governance validate`` on top."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from governance.commands.cli import main
from governance.errors import ConfigError
from governance.intent import selection, spec

INTENTS = """intents:
  - id: WORK-064
    title: JWT auth
    owned_scope: [src/auth/, tests/auth/]
    constraints: [No new dependencies, Keep the session API]
    acceptance_criteria: [tokens expire, refresh works]
  - id: INT-002
    title: Docs pass
    status: done
    owned_scope: docs/
"""


def declare(project: Path, text: str = INTENTS) -> Path:
    path = Path(spec.path(str(project)))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_load(project: Path) -> None:
    assert spec.load(str(project)) == []
    declare(project)
    first, second = spec.load(str(project))
    assert first.id == "WORK-064" and first.status == "active"
    assert first.owned_scope == ["src/auth/", "tests/auth/"]
    assert first.constraints == "- No new dependencies\n- Keep the session API"
    assert second.status == "done" and second.owned_scope == ["docs/"]


@pytest.mark.parametrize(("text", "key", "said"), [
    ("intents: {}\n", "intents", "expected a list"),
    ("- {id: 1x, title: t, owned_scope: [a]}\n", "intents[0].id", "the id must be"),
    ("- {id: A, owned_scope: [a]}\n", "intents[0] (A).title", "needs a title"),
    ("- {id: A, title: t, status: open, owned_scope: [a]}\n", "intents[0] (A).status", "status"),
    ("- {id: A, title: t}\n", "intents[0] (A).owned_scope", "owned_scope"),
    ("- {id: A, title: t, owned_scope: ['../x']}\n", "intents[0] (A).owned_scope", "outside"),
    ("- {id: A, title: t, owned_scope: [a], owner: me}\n", "intents[0].owner", "unknown key"),
    ("- {id: A, title: t, owned_scope: [a]}\n- {id: A, title: u, owned_scope: [b]}\n",
     "intents[1].id", "declared twice"),
    ("intents: [\n", None, "not valid YAML"),
])
def test_errors_name_the_file_and_key(project: Path, text: str, key: str | None,
                                      said: str) -> None:
    path = declare(project, text)
    with pytest.raises(ConfigError) as caught:
        spec.load(str(project))
    assert caught.value.key == key and said in caught.value.message
    assert caught.value.file == str(path) and caught.value.fix


def test_selection_order_session_then_project_then_work_item(project: Path) -> None:
    p = str(project)
    assert selection.selected(p, "s1") == ("", "")
    assert selection.selected(p, "s1", "WORK-064") == ("WORK-064", "work item")
    selection.choose(p, "INT-002")
    assert selection.selected(p, "s1", "WORK-064") == ("INT-002", "project")
    selection.choose(p, "WORK-064", "s1", by="agent")
    assert selection.selected(p, "s1") == ("WORK-064", "session")
    assert selection.selected(p, "s2") == ("INT-002", "project")
    selection.choose(p, None, "s1")
    selection.choose(p, None)
    assert selection.selected(p, "s1") == ("", "")


def test_the_intent_command(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = ["--project", str(project)]
    assert main(["intent", "list", *p]) == 0
    assert "No intents are declared" in capsys.readouterr().out
    assert main(["intent", "new", "INT-001", "--title", "First", "--scope", "src/", *p]) == 0
    assert main(["intent", "new", "INT-003", "--title", "Third", "--scope", "lib/**",
                 "--criterion", "it builds", *p]) == 0
    capsys.readouterr()
    assert [i.id for i in spec.load(str(project))] == ["INT-001", "INT-003"]
    assert main(["intent", "new", "INT-001", "--title", "Again", "--scope", "x", *p]) == 2
    assert "declared twice" in capsys.readouterr().err
    assert main(["intent", "select", "INT-003", *p]) == 0
    assert main(["intent", "list", "--json", *p]) == 0
    capsys.readouterr()
    assert main(["intent", "show", "--json", *p]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["id"] == "INT-003" and shown["active"] and shown["acceptance_criteria"] == [
        "it builds"]
    assert main(["intent", "select", "NOPE", *p]) == 1
    assert "no intent 'NOPE'" in capsys.readouterr().err
    assert main(["intent", "clear", *p]) == 0
    assert selection.selected(str(project), "") == ("", "")


def test_validate_reports_intents(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    declare(project)
    assert main(["validate", "--project", str(project)]) == 0
    assert "intents: OK: 2 intent(s), 1 active" in capsys.readouterr().out
    declare(project, "- {id: A, title: t}\n")
    assert main(["validate", "--project", str(project)]) == 1
    out = capsys.readouterr().out
    assert "intents: INVALID" in out and "owned_scope" in out
