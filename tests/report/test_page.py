"""The page: self-contained (nothing to fetch, no URL at all), every chart beside a table of its
numbers, text escaped, the figures embedded as JSON; and ``governance report`` writing it."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from governance.commands import cli
from governance.ledger import chain
from governance.report.figures import build
from governance.report.page import render
from governance.report.selection import Selection
from tests.report import fixture


class Tables(HTMLParser):
    """Each table's rows as lists of cell texts, by table id; and every attribute seen."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self.attributes: list[tuple[str, str, str]] = []
        self.current: str | None = None
        self.cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        self.attributes += [(tag, k, v or "") for k, v in attrs]
        if tag == "table":
            self.current = found.get("id") or ""
            self.tables[self.current] = []
        elif tag == "tr" and self.current is not None:
            self.tables[self.current].append([])
        elif tag in ("td", "th") and self.current is not None:
            self.cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self.cell is not None and self.current is not None:
            self.tables[self.current][-1].append(" ".join("".join(self.cell).split()))
            self.cell = None
        elif tag == "table":
            self.current = None

    def handle_data(self, data: str) -> None:
        if self.cell is not None:
            self.cell.append(data)


@pytest.fixture
def figures(project: Path) -> dict[str, Any]:
    return build(str(fixture.write(project)), Selection(), show_progress=False)


def _parsed(page: str) -> Tables:
    parser = Tables()
    parser.feed(page)
    return parser


def _rows(parsed: Tables, table: str) -> dict[str, list[str]]:
    return {row[0]: row[1:] for row in parsed.tables[table][1:] if row}


def test_the_page_fetches_nothing_and_names_no_url(figures: dict[str, Any]) -> None:
    page = render(figures)
    assert not re.search(r"(?i)https?:|//[a-z0-9]|<link|@import|url\(|<img|<iframe|<object",
                         page)
    parsed = _parsed(page)
    for tag, name, value in parsed.attributes:
        assert name not in ("src", "srcset", "action", "formaction"), (tag, name, value)
        if name == "href":
            assert value.startswith("#"), value
    policy = next(v for t, k, v in parsed.attributes if t == "meta" and k == "content"
                  and "default-src" in v)
    assert "default-src 'none'" in policy and "script-src" not in policy
    assert "<form" not in page                       # the filter form is the live page's


def test_every_chart_has_its_numbers_in_a_table(figures: dict[str, Any]) -> None:
    parsed = _parsed(render(figures))
    assert _rows(parsed, "t-actions") == {"allow": ["7", "46.7%"], "block": ["5", "33.3%"],
                                          "ask": ["2", "13.3%"], "warn": ["1", "6.7%"]}
    assert _rows(parsed, "t-timeline")["2026-05-01T10"] == ["0", "0", "2", "1", "3"]
    assert _rows(parsed, "t-denials-primitive") == {"file-write": ["3", "60.0%"],
                                                    "vcs-push": ["2", "40.0%"]}
    assert _rows(parsed, "t-denials-state") == {"DO": ["4", "80.0%"], "EXPLORE": ["1", "20.0%"]}
    assert _rows(parsed, "t-asks")["approved, ran"] == ["1", "50.0%"]
    assert _rows(parsed, "t-sops")["k8s"] == ["0", "1", "0", "1", "0.0%"]
    assert _rows(parsed, "t-traced")["share traced"] == ["75.0%"]
    assert _rows(parsed, "t-reliability")["0.8–1.0"] == ["2", "0.850", "0.500", "0.350"]
    assert _rows(parsed, "t-categories")["deploy"][2] == "0.230"
    assert _rows(parsed, "t-verify")["records verified"] == ["24"]
    for chart, table in (("chart-timeline", "t-timeline"), ("chart-actions", "t-actions"),
                         ("chart-denials-primitive", "t-denials-primitive"),
                         ("chart-denials-state", "t-denials-state"), ("chart-asks", "t-asks"),
                         ("chart-ack-rate", "t-sops"), ("chart-traced", "t-traced"),
                         ("chart-reliability", "t-reliability"), ("chart-brier", "t-categories")):
        page = render(figures)
        assert page.index(f'id="{chart}"') < page.index(f'id="{table}"'), chart
        assert 'role="img"' in page and f'id="{chart}-title"' in page


def test_the_figures_are_embedded_as_json_that_cannot_break_out(figures: dict[str, Any]
                                                                ) -> None:
    figures["denials"]["top_commands"][0]["reason"] = "</script><script>alert(1)</script>"
    page = render(figures)
    assert "<script>alert" not in page and "&lt;/script&gt;&lt;script&gt;alert(1)" in page
    data = page.split('<script type="application/json" id="figures">', 1)[1].split("</script>")[0]
    assert json.loads(data) == json.loads(json.dumps(figures))


def test_a_broken_chain_shows_on_the_page(project: Path) -> None:
    fixture.write(project)
    ledger = project / ".claude" / "governance" / "ledger.jsonl"
    ledger.write_text(ledger.read_text().replace('"git status"', '"git stash"'))
    page = render(build(str(project), Selection(), show_progress=False))
    assert "chain BROKEN" in page and "ledger.jsonl:24: edited" in page
    assert 'id="broken-record"' in page and "git stash" in page


def test_an_empty_project_renders(project: Path) -> None:
    page = render(build(str(project), Selection(), show_progress=False))
    assert "no decisions" in page and "has no decision store yet" in page


def test_the_command_writes_the_page(project: Path, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    fixture.write(project)
    out = tmp_path / "out" / "review.html"
    out.parent.mkdir()
    opened: list[str] = []
    monkeypatch.setattr("webbrowser.open", lambda url: opened.append(url) or True)
    code = cli.main(["report", "--project", str(project), "--out", str(out), "--since",
                     fixture.DAY2, "--open"])
    printed = capsys.readouterr()
    assert code == 0 and out.exists() and opened == [out.as_uri()]
    assert f"Wrote {out}: 14 records, the chain verifies" in printed.out
    assert printed.err == ""                          # not a terminal: no progress bar
    assert 'data-filter="since">since 2026-05-02' in out.read_text()
    assert cli.main(["report", "--project", str(project), "--json", "--state", "EXPLORE"]) == 0
    assert json.loads(capsys.readouterr().out)["denials"]["total"] == 1


def test_the_command_names_a_bad_option_and_a_broken_chain(project: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]
                                                           ) -> None:
    assert cli.main(["report", "--project", str(project), "--since", "last week"]) != 0
    assert "since: not a time: 'last week'" in capsys.readouterr().err
    chain.append(str(project / ".claude" / "governance"), {"event": "StateChange"})
    ledger = project / ".claude" / "governance" / "ledger.jsonl"
    ledger.write_text(ledger.read_text().replace("StateChange", "StateChanged"))
    code = cli.main(["report", "--project", str(project), "--out", str(tmp_path / "r.html")])
    assert code == 1 and "THE CHAIN IS BROKEN" in capsys.readouterr().out
    assert (tmp_path / "r.html").exists()


def test_a_shared_decision_database_is_read_and_named_when_down(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``GOVERNANCE_DATABASE_URL`` the section reads the project's rows there (the figures
    on both engines: tests/storage/test_same_answers.py); a database that is down is named, its
    password masked, and the page still builds (never the project's SQLite file instead)."""
    fixture.write(project)
    monkeypatch.setenv("GOVERNANCE_DATABASE_URL",
                       "postgresql://team:s3cret@/governance?host=/nonexistent")
    monkeypatch.setenv("GOVERNANCE_DATABASE_POOL_TIMEOUT", "1")
    found = build(str(project), Selection(), show_progress=False)
    memory = found["memory"]
    assert memory["present"] and "error" in memory and "s3cret" not in str(memory), memory
    assert "team:***@" in memory["path"]
    page = render(found)
    assert "The decision store could not be read" in page and "s3cret" not in page
