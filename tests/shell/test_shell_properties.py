"""Property tests: the analysis never raises, never returns nothing, and stays within bounds on
arbitrary text; the worst cases the issue names finish in well under the limit."""

from __future__ import annotations

import gc
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from governance.shell import Act
from governance.shell.analysis import analyse_command
from governance.shell.schema import load_default_shell
from tests.shell.corpus import is_protected, load_corpus

SHELL = load_default_shell()
SHELL_CHARS = st.sampled_from([*"$(){}[]`'\"\\|&;<>!#*?~=-+:,. \t\nabcrmx0123456789",
                               "$(", "`", "<<", "<<-", "EOF", "\\x72", "$'", "${", "$((", "&&",
                               "||", "|&", ";;", "case ", " in ", "esac", "for ", "do ", "done",
                               "if ", "then ", "fi", "bash -c ", "eval ", "sudo ", "rm -rf ",
                               "curl ", "<(", ">(", "[[ ", " ]]", "function ", "() "])
SHELLISH = st.lists(SHELL_CHARS, max_size=80).map("".join)
KINDS = {"shell-read", "shell-execute", "shell-background", "file-write", "file-delete",
         "destructive", "web-fetch", "package-install", "vcs-commit", "vcs-push", "code-exec",
         "privilege", "governance-admin", "shell-unknown", "shell-unlisted", "cycle-advance",
         "local-request", "deploy", "deploy-dev", "deploy-staging", "deploy-production"}
BOUND_S = 0.25      # per call on arbitrary input; generous for slow CI machines


def _timed(command: str) -> tuple[list[object], float]:
    """The acts and the CPU time of this process the analysis took, with the cyclic collector
    held off: a full collection over the test process's heap (hypothesis keeps a lot) is the
    test runner's cost, not the analysis's (a hook process runs with it off, too)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.process_time()   # this process's CPU time: other processes' load is not ours
        acts = analyse_command(command, SHELL, is_protected=is_protected)
        return list(acts), time.process_time() - start
    finally:
        if enabled:
            gc.enable()


def _check(command: str) -> None:
    found, elapsed = _timed(command)
    acts = [a for a in found if isinstance(a, Act)]
    assert len(acts) == len(found)
    assert acts
    for act in acts:
        assert isinstance(act.primitive, str) and act.primitive
        assert act.primitive in KINDS
        assert isinstance(act.segment, str) and isinstance(act.reason, str)
    assert elapsed < BOUND_S, (command, elapsed)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=300))
def test_arbitrary_text_never_raises(command: str) -> None:
    _check(command)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SHELLISH)
def test_shell_like_text_never_raises(command: str) -> None:
    _check(command)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(load_corpus()), st.integers(0, 200), st.text(max_size=5))
def test_corpus_commands_with_noise_never_raise(case: object, at: int, noise: str) -> None:
    command = case.command  # type: ignore[attr-defined]
    at = min(at, len(command))
    _check(command[:at] + noise + command[at:])


def _worst(command: str) -> float:
    best = 1.0
    for _ in range(3):
        acts, elapsed = _timed(command)
        best = min(best, elapsed)
        assert acts
    return best


def test_bounded_inputs_fall_back_to_unknown_quickly() -> None:
    limit = SHELL["limits"]["max_length"]
    worst = {
        "100 KB": "echo " + "a" * 100_000,
        "1000 nested $(": "echo " + "$(" * 1000 + "x" + ")" * 1000,
        "1000 nested ${": "echo " + "${x:-" * 1000 + "}" * 1000,
        "words up to the limit": "echo " + "ab " * (limit // 3 - 2),
        "commands up to the limit": "true;" * (limit // 5 - 1),
        "quotes": "echo " + "'a'\"b\"" * (limit // 6 - 2),
        "unterminated quotes": "echo " + "\"'" * (limit // 2 - 3),
        "backslashes": "echo " + "\\" * (limit - 6),
        "ansi-c": "echo $'" + "\\x41" * (limit // 4 - 3) + "'",
    }
    for name, command in worst.items():
        assert _worst(command) < 0.05, name
    for name in ("100 KB", "1000 nested $(", "1000 nested ${"):
        acts = analyse_command(worst[name], SHELL, is_protected=is_protected)
        assert acts[0].primitive == "shell-unknown", name


def test_unanalysable_destructive_text_is_flagged() -> None:
    acts = analyse_command("rm -rf / " + "$(" * 1000, SHELL, is_protected=is_protected)
    assert {a.primitive for a in acts} == {"shell-unknown", "destructive"}


def test_broken_protection_callback_is_contained() -> None:
    def explode(path: str) -> bool:
        raise OSError("disk on fire")

    acts = analyse_command("echo x > out.txt", SHELL, is_protected=explode)
    assert [a.primitive for a in acts] == ["shell-unknown"]
