"""The ledger's anchor outside the project, against a script that forges the ledger with our own
package: re-chained, truncated, deleted, rotated by hand. Each forgery verifies on its own (the
attack works as the attacker means it); `governance ledger verify` and `governance doctor` report
it against the anchor, and the hooks that run afterwards do not move the anchor over it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from governance.ledger import anchor
from governance.ledger import chain as ledger
from governance.ledger.verifier import verify
from governance.ledger.witness import rebase
from tests.helpers import REPO, hook_command, install, recorded, run_command, set_state
from tests.ledger.records import pre_record

FORGE = r'''"""A script the agent wrote: it rewrites the ledger with governance's own chain functions."""
import json, os, sys
from governance.ledger import chain

gov = os.path.join(".claude", "governance")
live = os.path.join(gov, chain.LEDGER)
records = [json.loads(line) for line in open(live, "rb")]


def write(recs, name):
    prev, out = chain.GENESIS, []
    for rec in recs:
        rec = {k: v for k, v in rec.items() if k != "hash"}
        rec["prev"] = prev
        rec["hash"] = prev = chain.record_hash(rec)
        out.append(rec)
    data = b"".join(chain.canonical(rec) + b"\n" for rec in out)
    with open(os.path.join(gov, name), "wb") as handle:
        handle.write(data)
    return out, len(data)


def head(last, size, segment=0):
    with open(os.path.join(gov, chain.HEAD), "wb") as handle:
        handle.write(chain.canonical({"hash": last["hash"], "seq": last["seq"], "size": size,
                                      "segment": segment}))


mode = sys.argv[1]
if mode == "rechain":      # every deny becomes an allow, every hash computed again
    for rec in records:
        if rec.get("decision") == "deny":
            rec["decision"], rec["action"] = "allow", "allow"
    out, size = write(records, chain.LEDGER)
    head(out[-1], size)
elif mode == "truncate":   # the last two records never happened
    out, size = write(records[:-2], chain.LEDGER)
    head(out[-1], size)
elif mode == "delete":
    os.unlink(live)
    os.unlink(os.path.join(gov, chain.HEAD))
elif mode == "rotate":     # "the ledger was rotated": a segment without the last records
    out, size = write(records[:-2], chain.segment_name(1))
    open(live, "wb").close()
    head(out[-1], 0, segment=1)
print("forged", mode)
'''


def cli(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A command the user runs from a terminal (same HOME, so the same anchor)."""
    return subprocess.run([sys.executable, "-m", "governance.commands.cli", *args, "--project",
                           str(project)], cwd=REPO, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, check=False)


def hooks(project: Path, rounds: int = 2) -> None:
    """Tool calls as Claude Code makes them: a denied WebFetch and a Read, recorded."""
    for _ in range(rounds):
        for name in ("PreToolUse-WebFetch.json", "PostToolUse-Read.json"):
            done = run_command(hook_command(project, name.split("-")[0]),
                               json.dumps(recorded(name, project)))
            assert done.returncode == 0, done.stderr


@pytest.fixture
def governed(project: Path) -> Path:
    install(project)
    set_state(project, "implementation-cycle/DO/WORK-7")
    hooks(project)
    return project


def gov_dir(project: Path) -> str:
    return str(project / ".claude" / "governance")


def forge(project: Path, mode: str) -> None:
    (project / "tools").mkdir(exist_ok=True)
    (project / "tools" / "forge.py").write_text(FORGE)
    done = subprocess.run([sys.executable, "tools/forge.py", mode], cwd=project, text=True,
                          capture_output=True, timeout=60, check=False,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0 and f"forged {mode}" in done.stdout, done.stderr


def records(project: Path) -> list[dict[str, Any]]:
    path = project / ".claude" / "governance" / ledger.LEDGER
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.mark.parametrize(("mode", "kind"), [("rechain", "re-chained"), ("truncate", "truncated"),
                                            ("delete", "deleted"), ("rotate", "rotated")])
def test_a_forged_ledger_verifies_alone_and_is_reported_against_its_anchor(
        governed: Path, mode: str, kind: str) -> None:
    before = records(governed)
    assert any(rec.get("decision") == "deny" for rec in before)
    assert cli(governed, "ledger", "verify").returncode == 0
    forge(governed, mode)
    alone = verify(gov_dir(governed), sources=[])
    assert alone.ok, alone.problem   # the forgery holds together: the chain alone cannot tell
    if mode == "rechain":
        assert not any(rec.get("decision") == "deny" for rec in records(governed))
    done = cli(governed, "ledger", "verify")
    assert done.returncode == 1, done.stdout
    assert f"does not match its anchor (home checkpoint {anchor.path_for(gov_dir(governed))})" \
        in done.stdout and f"{kind}: " in done.stdout, done.stdout
    assert "governance ledger anchor" in done.stdout   # the fix, once the user has looked
    as_json = json.loads(cli(governed, "ledger", "verify", "--json").stdout)
    assert not as_json["ok"] and as_json["anchors"][0]["kind"] == kind
    doctor = cli(governed, "doctor")   # it also makes a live hook call, which appends
    assert doctor.returncode == 1
    assert "FAIL  the ledger does not match its anchor" in doctor.stdout, doctor.stdout
    status = json.loads(cli(governed, "status", "--json").stdout)
    assert status["ledger"]["anchors"][0]["state"] == "differs"
    hooks(governed)   # the next tool calls do not move the anchor over the forgery
    again = cli(governed, "ledger", "verify")
    assert again.returncode == 1 and "does not match its anchor" in again.stdout, again.stdout


def test_the_user_anchors_the_ledger_again_once_they_have_looked(governed: Path) -> None:
    forge(governed, "truncate")
    assert cli(governed, "ledger", "verify").returncode == 1
    done = cli(governed, "ledger", "anchor")
    assert done.returncode == 0 and "Anchored the ledger at seq" in done.stdout, done.stdout
    assert cli(governed, "ledger", "verify").returncode == 0
    hooks(governed)
    assert "matches its anchor" in cli(governed, "ledger", "verify").stdout


def test_the_agent_may_not_anchor_the_ledger_but_may_verify_it(governed: Path) -> None:
    payload = recorded("PreToolUse-Bash.json", governed)
    for command, denied in (("governance ledger anchor", True), ("governance ledger verify", False)):
        payload["tool_input"]["command"] = command
        out = json.loads(run_command(hook_command(governed), json.dumps(payload)).stdout)
        assert (out["hookSpecificOutput"].get("permissionDecision") == "deny") is denied, out


def test_an_honest_ledger_matches_through_rotations_crashes_and_a_lost_anchor(
        gov: Path) -> None:
    for i in range(40):
        ledger.append(str(gov), pre_record(i), max_bytes=2500)
    assert len(ledger.segments(str(gov))) >= 3
    report = verify(str(gov))
    assert report.ok and report.anchors[0].state == "matches", report.anchors[0].line()
    held = anchor.read(str(gov))[1]
    assert held is not None and [end[0] for end in held["sealed"]] == \
        [int(name[7:13]) for name in ledger.segments(str(gov))]
    # a process died after its record, before the anchor: behind, still matching, caught up
    path = Path(anchor.path_for(str(gov)))
    stale = path.read_bytes()
    ledger.append(str(gov), pre_record(40), max_bytes=2500)
    path.write_bytes(stale)
    assert verify(str(gov)).ok
    latest = ledger.append(str(gov), pre_record(41), max_bytes=2500)
    assert anchor.read(str(gov))[1]["seq"] == latest["seq"]  # type: ignore[index]
    # a lost anchor: trust on first use, and said so
    path.unlink()
    lost = verify(str(gov))
    assert lost.ok and "no anchor yet" in lost.anchors[0].line()
    ledger.append(str(gov), pre_record(42), max_bytes=2500)
    assert verify(str(gov)).anchors[0].state == "matches"


def test_an_anchor_that_is_not_one_is_reported_and_kept_until_the_user_anchors_again(
        gov: Path) -> None:
    for i in range(3):
        ledger.append(str(gov), pre_record(i))
    path = Path(anchor.path_for(str(gov)))
    path.write_text("{}")
    ledger.append(str(gov), pre_record(3))
    assert path.read_text() == "{}"
    report = verify(str(gov))
    assert not report.ok and "cannot be read" in report.anchors[0].line()
    assert rebase(str(gov)) is not None and verify(str(gov)).ok


def test_the_anchor_lives_under_the_users_home(gov: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(anchor.ENV)
    ledger.append(str(gov), pre_record(0))
    folder = Path(os.environ["HOME"]) / ".claude" / "governance" / "anchors"
    (held,) = folder.iterdir()
    assert json.loads(held.read_text())["ledger"] == str(gov)
    assert held.stat().st_mode & 0o777 == 0o600


def test_a_home_that_does_not_exist_is_never_made(gov: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Services run with ``HOME=/nonexistent``: the append still succeeds, and no anchor (nor the
    home folder itself) is created there."""
    monkeypatch.delenv(anchor.ENV)
    home = tmp_path / "no-such-home"
    monkeypatch.setenv("HOME", str(home))
    ledger.append(str(gov), pre_record(0))
    assert not home.exists()
    assert (gov / "ledger.jsonl").read_text().count("\n") == 1
