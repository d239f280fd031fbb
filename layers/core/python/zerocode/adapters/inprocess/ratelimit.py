"""In-process RateLimiter: a sliding log per key, for one machine or one Lambda container.

Limits are per process: N containers let N x limit through. Use Redis or DynamoDB when
the limit must hold across processes.
"""

from __future__ import annotations

import bisect
import threading
import time
from collections import deque
from collections.abc import Callable

from zerocode.accounts.ratelimit import RateDecision, allowed, check_rule, refused

# Keys nobody hits again are swept in one pass every max(SWEEP_EVERY, number of keys) hits,
# so memory stays bounded by the keys live in the last window at O(1) amortised cost.
SWEEP_EVERY = 1024


class InProcessRateLimiter:
    def __init__(self, now: Callable[[], float] = time.time) -> None:
        self.now = now
        self._logs: dict[str, deque[float]] = {}  # key -> sorted expiries of allowed hits
        self._lock = threading.Lock()
        self._hits_since_sweep = 0

    def hit(self, key: str, limit: int, window_seconds: float) -> RateDecision:
        check_rule(limit, window_seconds)
        with self._lock:  # check and append as one step: racing threads cannot both fit
            now = self.now()
            self._maybe_sweep(now)
            log = self._logs.get(key)
            if log is None:
                log = self._logs[key] = deque()
            while log and log[0] <= now:
                log.popleft()
            if len(log) >= limit:
                return refused(log, now, limit, window_seconds)
            bisect.insort(log, now + window_seconds)  # an append unless the clock stepped back
            return allowed(limit - len(log))

    def peek(self, key: str, limit: int, window_seconds: float) -> RateDecision:
        check_rule(limit, window_seconds)
        with self._lock:
            now = self.now()
            live = [e for e in self._logs.get(key, ()) if e > now]
            if len(live) >= limit:
                return refused(live, now, limit, window_seconds)
            return allowed(limit - len(live))

    def __len__(self) -> int:
        """Keys currently held (swept ones excluded)."""
        with self._lock:
            return len(self._logs)

    def _maybe_sweep(self, now: float) -> None:
        self._hits_since_sweep += 1
        if self._hits_since_sweep < max(SWEEP_EVERY, len(self._logs)):
            return
        self._hits_since_sweep = 0
        for key in [k for k, log in self._logs.items() if not log or log[-1] <= now]:
            del self._logs[key]
