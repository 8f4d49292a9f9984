from __future__ import annotations

import json
from pathlib import Path

import pytest

from governance.bench.decisions import main


def test_bench_runs_small(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert main(["--sizes", "100,300", "--queries", "5", "--cli-runs", "1", "--no-ranking",
                 "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["decisions"] == 300
    assert set(report["query"]) == {"100", "300"}
    assert report["query"]["300"]["p95_ms"] >= report["query"]["300"]["p50_ms"] > 0
    assert report["pre_action_cli_process"]["n"] == 1
    assert set(report["evaluate_tool_call"]) == {"no_tool_guardrails", "one_tool_guardrail"}
    assert set(report["pre_action_in_process"]) == {"auto_record_false", "auto_record_true"}
