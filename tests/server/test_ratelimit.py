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
