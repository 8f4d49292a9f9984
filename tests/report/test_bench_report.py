"""The report benchmark of ``just bench`` runs (small), and says its figures."""

from __future__ import annotations

import json

import pytest

from governance.bench.report import main


def test_the_report_bench_runs_small(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--records", "3000", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert found["records"] == 3000 and found["small"]["records"] == 300
    for run in ("small", "first", "verified"):
        assert found[run]["seconds"] > 0 and found[run]["peak_rss_mib"] > 0
        assert found[run]["html_bytes"] > 10_000
    assert found["targets"]["met"]
