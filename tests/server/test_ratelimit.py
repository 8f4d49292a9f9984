"""The per-agent token bucket: a burst, then refusals with a retry hint, then recovery."""

from __future__ import annotations

from governance.server import ratelimit
from governance.server.ratelimit import RateLimiter


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_burst_then_wait_then_recovery() -> None:
    clock = Clock()
    limiter = RateLimiter(rate=2, burst=3, clock=clock)
    assert [limiter.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    wait = limiter.take("a")
    assert 0.49 < wait <= 0.5
    assert limiter.take("b") == 0.0          # another agent has its own bucket
    clock.now += 0.5
    assert limiter.take("a") == 0.0
    assert limiter.take("a") > 0
    clock.now += 10                           # refills up to the burst, no further
    assert [limiter.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.take("a") > 0


def test_rate_zero_switches_the_limit_off() -> None:
    limiter = RateLimiter(rate=0, burst=1)
    assert all(limiter.take("a") == 0.0 for _ in range(1000))


def test_made_up_agent_ids_cannot_grow_the_table(monkeypatch: object) -> None:
    import pytest

    patch = pytest.MonkeyPatch()
    patch.setattr(ratelimit, "MAX_AGENTS", 50)
    try:
        limiter = RateLimiter(rate=1, burst=1)
        for i in range(500):
            limiter.take(f"agent-{i}")
        assert len(limiter._buckets) == 50
    finally:
        patch.undo()


def test_the_key_is_the_credential_never_the_declared_agent() -> None:
    from governance.server.cstp import credential_key, declared_agent

    token = credential_key("a-token-of-enough-length", ("127.0.0.1", 50000))
    assert token == credential_key("a-token-of-enough-length", ("127.0.0.2", 1))
    assert token.startswith("bearer:") and "a-token" not in token
    assert credential_key(None, ("127.0.0.1", 50000)) == "peer:127.0.0.1"   # tokenless: the peer
    assert credential_key(None, ("127.0.0.1", 50001)) == "peer:127.0.0.1"   # whatever its port
    assert credential_key(None, None) == credential_key("", ["", 0]) == "peer:unix"
    assert declared_agent({"agent_id": "claude-code", "agent": {"id": "x"}}) == "claude-code"
    assert declared_agent({"agent": {"id": " emerson "}}) == "emerson"
    assert declared_agent({"agent": "not an object"}) is None


def test_a_caller_varying_its_declared_id_is_limited_all_the_same(tmp_path: object) -> None:
    """The CSTP service itself (no HTTP): one credential, a new declared agent on every call."""
    from pathlib import Path

    from governance.server.cstp import Service
    from governance.server.protocol import Call, RpcError

    project = Path(str(tmp_path)) / "p"
    (project / ".claude").mkdir(parents=True)
    service = Service(str(project), RateLimiter(rate=0.01, burst=2))
    codes = []
    for index in range(4):
        call = Call("cstp.getCalibration", {"agent": {"id": f"agent-{index}"}}, index)
        try:
            service.run(call, "peer:127.0.0.1")
            codes.append(None)
        except RpcError as exc:
            codes.append(exc.code)
    assert codes == [None, None, -32002, -32002]
    other_peer = service.run(Call("cstp.getCalibration", {}, 9), "peer:127.0.0.2")
    assert other_peer["agent"] == "peer:127.0.0.2"   # no declared agent: the credential


def test_a_body_of_several_calls_takes_as_many_tokens_or_none() -> None:
    limiter = RateLimiter(rate=1.0, burst=5, clock=lambda: 100.0)
    assert limiter.take("k", 3) == 0.0
    assert limiter.take("k", 3) > 0          # two left: refused, and nothing spent
    assert limiter.take("k", 2) == 0.0
    assert limiter.take("other", 6) > 0      # over the burst: never at once
