"""Malformed hook input of every kind gets one sentence that names the problem, never an
exception's name or a traceback: truncations and mutations of recorded payloads, trailing commas,
bad escapes, deep nesting, NaN, lone surrogates, empty input, bytes that are not UTF-8.

In-process, ``json`` is already imported, so the C scanner raises ``JSONDecodeError`` itself; a
hook process has not imported it, which is where the scanner used to fail with a bare
``SystemError``. So the codec is also checked in a fresh ``python -I -S`` process, and a few inputs go
through the exact installed command.
"""

from __future__ import annotations

import io
import json
import marshal
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from governance import jsoncodec
from governance.hook import run as hook
from governance.session import briefing
from tests.helpers import PAYLOAD_DIR, RECORDED_PROJECT, REPO, hook_command, install, run_command

TEXTS = [(PAYLOAD_DIR / name).read_text() for name in (
    "PreToolUse-Bash.json", "PreToolUse-Edit.json", "PreToolUse-Write.json",
    "PostToolUse-Read.json", "PostToolUseFailure-Bash.json")]
# An exception's name (SystemError, JSONDecodeError, StopIteration, ...) or a traceback.
LEAK = re.compile(r"\b[A-Z][A-Za-z]*(Error|Exception|Iteration|Warning)\b|Traceback|Error:")
PROBLEMS = ("hook input is not JSON: ", "hook input is not UTF-8 (byte ",
            "hook input on stdin is empty", "hook input is JSON nested too deep",
            "hook input is a JSON ")

FIXED = [
    "", " ", "\n\t ", "{bad", '{"a":1,}', "[1,]", '{"a": "\\x"}', '{"a": "\\u12"}', '{"a": "\\',
    '{"a" 1}', '{"a": 1 "b": 2}', "{'a': 1}", '{"a": tru}', "nul", "NaN", "-Infinity", '{"a": NaN}',
    '{"a": -Infinity}', "[" * 100_000, '{"a":' * 50_000, '{"a": [' * 30_000, '{"a": 1} x', "}",
    '"\\ud800"', '{"a": "\\udc00\\ud800"}', '{"a": "tab\there"}', '{"a": "\x00"}', "0x10", "01",
    '{"a": 1.}', '{"a": .5}', '{"a": 1e}', '{"a":"unterminated', "\ufeff{}", '{"\\ud800": 1}',
]


def _mutate(text: str, at: int, insert: str, cut: int) -> str:
    at = min(at, len(text))
    return text[:at] + insert + text[at + cut:]


MUTATION = st.sampled_from([*'{}[]",:\\ 0-eE.\x00\n', "\\x", "\\u", ",}", ",]", "NaN", "\\ud800",
                            "'"])
TEXT = st.one_of(
    st.sampled_from(FIXED),
    st.sampled_from(TEXTS).flatmap(lambda t: st.integers(0, len(t)).map(lambda k: t[:k])),
    st.builds(_mutate, st.sampled_from(TEXTS), st.integers(0, 600), MUTATION, st.integers(0, 3)),
    st.builds(lambda t, k: t[:k] + "," + t[k:], st.sampled_from(TEXTS), st.integers(0, 600)),
)
NOT_UTF8 = st.builds(lambda t, k, b: t.encode()[:k] + bytes([b]) + t.encode()[k:],
                     st.sampled_from(TEXTS), st.integers(0, 600), st.integers(0x80, 0xFF))
RAW = st.one_of(TEXT.map(lambda t: t.encode("utf-8", "surrogatepass")), NOT_UTF8)


def _malformed(raw: bytes) -> bool:
    """Whether the standard library refuses the bytes as a JSON object."""
    try:
        return not isinstance(json.loads(raw.decode("utf-8")), dict)
    except (ValueError, RecursionError):
        return True


def _check(raw: bytes, stdout: str) -> None:
    assert not LEAK.search(stdout), stdout
    if not _malformed(raw):
        return
    answer: dict[str, Any] = json.loads(stdout)
    message = answer["systemMessage"]
    assert any(problem in message for problem in PROBLEMS), message


def _in_project(raw: bytes, project: Path) -> bytes:
    return raw.replace(RECORDED_PROJECT.encode(), str(project).encode())


@settings(max_examples=400, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(RAW)
def test_every_malformed_input_gets_a_sentence_in_process(project: Path, raw: bytes) -> None:
    data = _in_project(raw, project)
    for entry in (hook.pre_tool_use, hook.post_tool_use, briefing.session_start,
                  briefing.user_prompt_submit):
        out = io.StringIO()
        assert entry([], stdin=io.BytesIO(data), stdout=out) == 0
        _check(data, out.getvalue())


@pytest.mark.parametrize("raw", [b"{bad", b'{"a":1,}', b'{"a": "\\x"}', b"[" * 100_000, b"",
                                 b'{"hook_event_name": "PreToolUse", \xff}', b"NaN"])
def test_the_installed_command_answers_malformed_input_with_a_sentence(project: Path,
                                                                       raw: bytes) -> None:
    install(project)
    for event in ("PreToolUse", "PostToolUse"):
        done = run_command(hook_command(project, event), raw,
                           env={"CLAUDE_PROJECT_DIR": str(project)})
        assert done.returncode == 0 and not done.stderr, done.stderr
        _check(raw, done.stdout.decode())


def test_a_lone_surrogate_is_read_as_the_client_writes_it(project: Path) -> None:
    """Valid JSON may escape half a surrogate pair; Claude Code's runtime turns it into U+FFFD
    when it writes the file or runs the command, so the hook decides that text."""
    install(project)
    data = {"session_id": "s1", "transcript_path": "/dev/null", "cwd": str(project),
            "hook_event_name": "PreToolUse", "tool_name": "Write", "tool_use_id": "toolu_1",
            "tool_input": {"file_path": str(project / "a\ud800.md"), "content": "\udc00"},
            "permission_mode": "default"}
    done = run_command(hook_command(project), json.dumps(data))
    assert done.returncode == 0
    out = json.loads(done.stdout)
    assert "systemMessage" not in out or "NOT checked" not in out["systemMessage"], out
    assert out["hookSpecificOutput"]["additionalContext"].startswith("[STATE: EXPLORE]")


# --- the codec alone: the same errors as json.loads, with and without json imported ----------
def _outcome(function: Any, text: str) -> tuple[str, Any]:
    try:
        return "ok", repr(function(text))
    except RecursionError:
        return "deep", None
    except ValueError as exc:
        return "error", (str(exc), getattr(exc, "msg", None), getattr(exc, "pos", None))


CHILD = """
import marshal, sys
sys.path.insert(0, sys.argv[1])
from governance import jsoncodec
texts = marshal.loads(sys.stdin.buffer.read())
out = []
for text in texts:
    try:
        out.append(("ok", repr(jsoncodec.loads(text))))
    except RecursionError:
        out.append(("deep", None))
    except ValueError as exc:
        out.append(("error", (str(exc), getattr(exc, "msg", None), getattr(exc, "pos", None))))
    except BaseException as exc:
        out.append(("leak", type(exc).__name__ + ": " + str(exc)))
sys.stdout.buffer.write(marshal.dumps(out))
"""


def _fresh(texts: list[str]) -> list[tuple[str, Any]]:
    """``jsoncodec.loads`` of each text in a hook-like process, where ``json`` is not imported."""
    done = subprocess.run([sys.executable, "-I", "-S", "-c", CHILD, str(REPO)],
                          input=marshal.dumps(texts), capture_output=True, check=True)
    result: list[tuple[str, Any]] = marshal.loads(done.stdout)
    return result


def _same(texts: list[str]) -> None:
    expected = [_outcome(json.loads, text) for text in texts]
    assert [_outcome(jsoncodec.loads, text) for text in texts] == expected
    assert _fresh(texts) == expected


def test_codec_errors_are_jsons_for_the_fixed_cases() -> None:
    _same(FIXED)


def test_codec_errors_are_jsons_for_every_truncation() -> None:
    text = TEXTS[0]
    _same([text[:k] for k in range(len(text) + 1)])


@settings(max_examples=15, deadline=None)
@given(st.lists(TEXT, min_size=30, max_size=30))
def test_codec_errors_are_jsons(texts: list[str]) -> None:
    _same(texts)


def test_problem_is_a_short_phrase() -> None:
    with pytest.raises(ValueError) as caught:
        jsoncodec.loads("{bad")
    assert jsoncodec.problem(caught.value) == \
        "Expecting property name enclosed in double quotes at char 1"
    assert jsoncodec.problem(ValueError("plain")) == "plain"
