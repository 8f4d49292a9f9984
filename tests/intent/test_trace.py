"""The trace (``intent.trace``, ``intent.provenance``, ``governance trace``): ranges and hashes per
tool, the chain, torn writes, 20 concurrent PostToolUse hooks, and who wrote a line."""

from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from governance.commands.cli import main
from governance.intent import provenance, selection, trace
from tests.helpers import hook_command, install, run_command, set_state
from tests.intent.test_spec_selection import declare


def test_ranges() -> None:
    text = "a\nb\nnew1\nnew2\nc\n"
    (r,) = trace.ranges("Edit", {"new_string": "new1\nnew2"}, text) or []
    assert (r["start_line"], r["end_line"]) == (3, 4)
    assert r["content_hash"] == trace.line_hash(["new1", "new2"])
    assert trace.ranges("Write", {"content": text}, text) == [
        {"start_line": 1, "end_line": 5, "content_hash": trace.line_hash(text.split("\n")[:5])}]
    every = trace.ranges("Edit", {"new_string": "x", "replace_all": True}, "x\ny\nx\n") or []
    assert [(r["start_line"], r["end_line"]) for r in every] == [(1, 1), (3, 3)]
    multi = trace.ranges("MultiEdit", {"edits": [{"new_string": "b"}, {"new_string": "c"}]},
                         text) or []
    assert [r["start_line"] for r in multi] == [2, 5]
    assert trace.ranges("Edit", {"new_string": "gone"}, text) is None
    (cell,) = trace.notebook_ranges({"new_source": "x = 1\ny = 2\n"})
    assert (cell["start_line"], cell["end_line"]) == (1, 2)


def entry(project: Path, name: str = "src/a.py") -> dict[str, Any]:
    return trace.record(str(project), name, [{"start_line": 1, "end_line": 1,
                                              "content_hash": trace.line_hash(["x"])}],
                        intent="WORK-064", session="s1", tool="Write", tool_use_id="t1",
                        ledger_hash="ab" * 32)


def test_records_chain_and_verify(project: Path) -> None:
    for _ in range(3):
        trace.append(str(project), entry(project))
    assert provenance.verify(str(project)) == (3, [])
    first = next(iter(provenance.records(str(project))))
    assert first["version"] == "0.1" and first["files"][0]["path"] == "src/a.py"
    assert first["metadata"]["governance"]["prev"] == trace.GENESIS
    path = Path(trace.path(str(project)))
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], lines[2]]) + "\n")          # one removed
    assert any("does not chain" in p for p in provenance.verify(str(project))[1])
    path.write_text("\n".join([lines[0].replace("WORK-064", "WORK-999"), *lines[1:]]) + "\n")
    assert any("hash does not match" in p for p in provenance.verify(str(project))[1])


def test_a_torn_write_is_set_aside_and_nothing_complete_is_lost(project: Path) -> None:
    trace.append(str(project), entry(project))
    path = Path(trace.path(str(project)))
    with open(path, "ab") as fh:                         # a crash in the middle of a write
        fh.write(b'{"version":"0.1","id":"torn')
    assert "torn write" in provenance.verify(str(project))[1][0]
    trace.append(str(project), entry(project))
    assert provenance.verify(str(project)) == (2, [])
    torn = (path.parent / trace.TORN).read_text()
    assert '"id":"torn' in torn.replace("\\", "")


@pytest.fixture
def post(project: Path) -> str:
    install(project)
    set_state(project, "implementation-cycle/DO")
    declare(project)
    selection.choose(str(project), "WORK-064")
    (project / "src" / "auth").mkdir(parents=True)
    return hook_command(project, "PostToolUse")


def completed(project: Path, tool: str, tool_input: dict[str, Any], use: str = "t1") -> str:
    return json.dumps({"session_id": "s1", "transcript_path": "/dev/null", "cwd": str(project),
                       "hook_event_name": "PostToolUse", "tool_name": tool,
                       "tool_input": tool_input, "tool_response": {"success": True},
                       "tool_use_id": use})


def test_the_hook_traces_and_show_tells_when_lines_changed(
        project: Path, post: str, capsys: pytest.CaptureFixture[str]) -> None:
    source = project / "src" / "auth" / "jwt.py"
    source.write_text("import os\n\ndef sign():\n    return 1\n")
    done = run_command(post, completed(project, "Edit", {
        "file_path": str(source), "old_string": "    return 0", "new_string": "    return 1"}))
    assert done.returncode == 0 and done.stdout == b""
    assert main(["trace", "show", "src/auth/jwt.py:4", "--json", "--project",
                 str(project)]) == 0
    (line,) = json.loads(capsys.readouterr().out)
    assert (line["intent"], line["session"], line["tool"], line["unchanged"]) == (
        "WORK-064", "s1", "Edit", True)
    source.write_text("import os\n\ndef sign():\n    return 2\n")     # a human edit
    assert main(["trace", "show", "src/auth/jwt.py:4", "--project", str(project)]) == 0
    assert "changed since" in capsys.readouterr().out
    assert main(["trace", "intent", "WORK-064", "--json", "--project", str(project)]) == 0
    assert json.loads(capsys.readouterr().out)[0]["path"] == "src/auth/jwt.py"
    assert main(["trace", "verify", "--project", str(project)]) == 0


def test_twenty_concurrent_post_hooks_leave_a_complete_verifiable_trace(
        project: Path, post: str) -> None:
    for i in range(20):
        (project / "src" / "auth" / f"f{i}.py").write_text(f"value = {i}\n")

    def one(i: int) -> int:
        payload = completed(project, "Write", {"file_path": str(project / f"src/auth/f{i}.py"),
                                               "content": f"value = {i}\n"}, use=f"t{i}")
        return run_command(post, payload).returncode

    with ThreadPoolExecutor(20) as pool:
        assert set(pool.map(one, range(20))) == {0}
    good, problems = provenance.verify(str(project))
    assert (good, problems) == (20, [])
    assert {r["files"][0]["path"] for r in provenance.records(str(project))} == {
        f"src/auth/f{i}.py" for i in range(20)}


def test_a_failed_trace_write_is_told_and_never_blocks(project: Path, post: str) -> None:
    folder = project / ".orchestration"
    (folder / trace.NAME).mkdir()                       # cannot be opened as a file
    done = run_command(post, completed(project, "Write", {
        "file_path": str(project / "src/auth/a.py"), "content": "x\n"}))
    assert done.returncode == 0
    said = json.loads(done.stdout)["systemMessage"]
    assert "could not be traced" in said
    assert "trace:" in (project / ".claude/governance/errors.log").read_text()
    assert os.path.isdir(folder / trace.NAME)


def test_kill_9_during_appends_loses_nothing_complete(project: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    from tests.helpers import REPO

    writer = ("import sys; sys.path.insert(0, sys.argv[1])\n"
              "from governance.intent import trace\n"
              "while True:\n"
              "    e = trace.record(sys.argv[2], 'src/a.py', [], intent='W', session='s',\n"
              "                     tool='Write', tool_use_id='t', ledger_hash='')\n"
              "    trace.append(sys.argv[2], e)\n")
    for _ in range(3):
        child = subprocess.Popen([sys.executable, "-c", writer, str(REPO), str(project)])
        time.sleep(0.4)
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    good, problems = provenance.verify(str(project))
    assert good > 0 and all("torn write" in p for p in problems)
    trace.append(str(project), entry(project))
    assert provenance.verify(str(project)) == (good + 1, [])


def test_the_trace_rotates_and_its_readers_go_through_every_segment(project: Path) -> None:
    names = [f"src/f{k}.py" for k in range(40)]
    for name in names:
        trace.append(str(project), entry(project, name), max_bytes=4000)
    files = trace.files(str(project))
    assert len(files) > 3 and files[-1].endswith("/" + trace.NAME)
    assert os.path.basename(files[0]) == trace.segment_name(1)
    assert provenance.verify(str(project)) == (40, [])
    assert [r["files"][0]["path"] for r in provenance.records(str(project))] == names
    assert [r["files"][0]["path"] for r in provenance.newest(str(project))] == names[::-1]
    assert [r["path"] for r in provenance.by_intent(str(project), "WORK-064")] == names
    segment = files[1]
    data = Path(segment).read_bytes()
    Path(segment).write_bytes(data.replace(b"src/f", b"src/g", 1))
    good, problems = provenance.verify(str(project))
    assert good == 39 and problems == [
        f"{os.path.basename(segment)} line 1: its hash does not match its content (edited)"]
