"""`governance log`, `explain`, `stats` and `ledger verify` over records the real hooks wrote."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from governance.commands import cli
from governance.hook import run as hook
from governance.ledger import chain as ledger
from governance.ledger.reader import parse_time
from governance.ledger.verifier import verify
from tests.helpers import PAYLOAD_DIR, REPO
from tests.ledger.records import pre_record


def _payload(name: str, project: Path, **extra: Any) -> io.BytesIO:
    data = json.loads((PAYLOAD_DIR / name).read_text())
    data["cwd"] = str(project)
    data.update(extra)
    return io.BytesIO(json.dumps(data).encode())


@pytest.fixture
def recorded(project: Path) -> Path:
    """A ledger written by the real hooks: a Bash call (Pre + Post) and a failed Read."""
    for name in ("PreToolUse-Bash.json", "PostToolUse-Bash.json", "PreToolUse-Read.json",
                 "PostToolUseFailure-Read.json", "PreToolUse-WebFetch.json"):
        func = hook.pre_tool_use if name.startswith("PreToolUse") else hook.post_tool_use
        out = io.StringIO()
        func(argv=[], stdin=_payload(name, project), stdout=out)
    return project


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = cli.main(list(argv))
    return code, capsys.readouterr().out


def test_hook_records_verify_and_link_pre_and_post(recorded: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _cli(capsys, "ledger", "verify", "--project", str(recorded))
    assert code == 0 and out.startswith("OK: 5 record(s)")
    lines = (recorded / ".claude/governance/ledger.jsonl").read_text().splitlines()
    pre, post = json.loads(lines[0]), json.loads(lines[1])
    assert pre["tool_use_id"] == post["tool_use_id"]
    for field in ("ts", "session", "tool_use_id", "event", "tool", "primitive", "action", "rule",
                  "reason", "state", "config_hash", "input_sha256", "duration_ms", "prev",
                  "hash", "seq"):
        assert field in pre, field
    assert "response_sha256" in post and post["outcome"] == "success"


def test_log_table_and_filters(recorded: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _cli(capsys, "log", "--project", str(recorded))
    assert code == 0
    header, rule, *rows = out.splitlines()
    assert header.split()[:3] == ["time", "(UTC)", "session"] and set(rule) <= {"-", " "}
    assert len(rows) == 5
    code, out = _cli(capsys, "log", "--project", str(recorded), "--tool", "read", "--json")
    recs = [json.loads(line) for line in out.splitlines()]
    assert [r["event"] for r in recs] == ["PreToolUse", "PostToolUseFailure"]
    code, out = _cli(capsys, "log", "--project", str(recorded), "--action", "failure", "--json")
    assert [json.loads(line)["outcome"] for line in out.splitlines()] == ["failure"]
    code, out = _cli(capsys, "log", "--project", str(recorded), "--limit", "2", "--json")
    assert len(out.splitlines()) == 2
    code, out = _cli(capsys, "log", "--project", str(recorded), "--since", "2000-01-01",
                     "--until", "2000-01-02")
    assert out.strip() == "no matching records"
    code, out = _cli(capsys, "log", "--project", str(recorded), "--session", "nope", "--json")
    assert out == ""


def test_explain_shows_decision_rule_state_and_result(recorded: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    tool_use_id = json.loads((PAYLOAD_DIR / "PreToolUse-Bash.json").read_text())["tool_use_id"]
    code, out = _cli(capsys, "explain", tool_use_id, "--project", str(recorded))
    assert code == 0
    for label in ("decision (PreToolUse", "action", "rule", "state", "config hash",
                  "result (PostToolUse", "outcome", "success"):
        assert label in out, label
    code, out = _cli(capsys, "explain", tool_use_id, "--project", str(recorded), "--json")
    data = json.loads(out)
    assert len(data["decisions"]) == 1 and len(data["results"]) == 1
    assert cli.main(["explain", "toolu_missing", "--project", str(recorded)]) == 1


def test_stats_counts_and_percentiles(recorded: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    _code, out = _cli(capsys, "stats", "--project", str(recorded), "--json")
    data = json.loads(out)
    assert data["records"] == 5
    assert data["events"] == {"PreToolUse": 3, "PostToolUse": 1, "PostToolUseFailure": 1}
    assert sum(data["actions"].values()) == 3 and sum(data["primitives"].values()) == 3
    assert data["outcomes"] == {"success": 1, "failure": 1}
    assert data["hook_duration_ms"]["all"]["count"] == 5
    assert data["hook_duration_ms"]["all"]["p50"] <= data["hook_duration_ms"]["all"]["p99"]
    _code, out = _cli(capsys, "stats", "--project", str(recorded))
    assert "hook duration (ms)" in out and "p95" in out


def test_denials_per_session(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gov = str(project / ".claude" / "governance")
    for i in range(6):
        ledger.append(gov, pre_record(i, action="block" if i % 2 else "allow",
                                      session="sA" if i < 4 else "sB"))
    _code, out = _cli(capsys, "stats", "--project", str(project), "--json")
    assert json.loads(out)["denials_per_session"] == {"sA": 2, "sB": 1}


def test_parse_time() -> None:
    assert parse_time("2026-05-01T12:00Z") == "2026-05-01T12:00"
    assert parse_time("90m", now=3600 * 24) == "1970-01-01T22:30:00"
    with pytest.raises(ValueError, match="not a time"):
        parse_time("yesterday")


def test_append_loads_no_heavy_module(tmp_path: Path) -> None:
    """An ordinary record (no secret) costs no ``re``/``json`` import; append and verify work."""
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from governance.ledger import chain\n"
            "from governance.jsoncodec import loads\n"
            "rec = loads(sys.argv[3])\n"
            "chain.append(sys.argv[2], rec); chain.append(sys.argv[2], rec)\n"
            "print(' '.join(sorted(sys.modules)))")
    rec = pre_record(1, permission_mode="bypassPermissions", reason="tokenize the session keys, "
                     "then pass", acts=[{"primitive": "shell-execute", "segment": "pytest -q",
                                         "reason": ""}])
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code, str(REPO), str(tmp_path),
                           json.dumps(rec)], capture_output=True, text=True, check=True)
    loaded = set(done.stdout.split())
    for heavy in ("re", "enum", "json", "typing", "dataclasses", "pathlib", "yaml", "pydantic",
                  "filelock", "argparse", "logging", "subprocess", "hashlib", "contextlib"):
        assert heavy not in loaded, heavy
    assert verify(str(tmp_path)).records == 2
