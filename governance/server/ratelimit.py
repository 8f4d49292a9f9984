"""Rate limits for CSTP calls: a token bucket per credential (the bearer token's identity, or
the peer address when there is no token; never the agent a call declares, which a caller can vary
at will), refilled continuously.

The buckets live in the server's own process (its CSTP worker processes take no tokens of their
own); the table is bounded (the least recently seen keys are dropped first), so many peers cannot
grow memory.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict

MAX_AGENTS = 10_000


class RateLimiter:
    """``rate`` calls per second with bursts of ``burst``; ``rate`` 0 switches the limit off."""

    def __init__(self, rate: float, burst: int, *, clock: object = None) -> None:
        self.rate = float(rate)
        self.burst = max(1, int(burst))
        self._clock = clock if callable(clock) else time.monotonic
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, agent: str, calls: int = 1) -> float:
        """0.0 when the caller keyed ``agent`` (its credential) may make ``calls`` calls now (as
        many tokens are spent); otherwise the seconds until it may (nothing is spent)."""
        if self.rate <= 0:
            return 0.0
        now = float(self._clock())
        with self._lock:
            tokens, seen = self._buckets.pop(agent, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - seen) * self.rate)
            wait = 0.0
            need = float(max(1, calls))
            if tokens >= need:
                tokens -= need
            else:
                wait = (need - tokens) / self.rate   # over the burst: never at once
            self._buckets[agent] = (tokens, now)
            while len(self._buckets) > MAX_AGENTS:
                self._buckets.popitem(last=False)
            return wait
