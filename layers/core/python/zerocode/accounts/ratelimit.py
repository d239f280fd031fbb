"""Rate-limit port: at most ``limit`` allowed hits per key in any span of ``window_seconds``.

Every adapter keeps a sliding log, not fixed buckets: a fixed window lets 2 x limit through
around a bucket boundary. The log holds, per allowed hit, the moment it leaves the window
(its *expiry*: hit time + window). A hit is allowed while fewer than ``limit`` expiries lie
in the future; a refused hit is not logged, so hammering never extends the wait.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from zerocode.errors import ZerocodeError


@dataclass(frozen=True, kw_only=True)
class RateDecision:
    allowed: bool
    retry_after: float  # seconds until a request would be allowed again; 0 when allowed
    remaining: int  # hits still allowed in the current window after this one


class RateLimiter(Protocol):
    def hit(self, key: str, limit: int, window_seconds: float) -> RateDecision:
        """Count one hit on ``key`` if the limit allows it; a refused hit is not counted."""
        ...

    def peek(self, key: str, limit: int, window_seconds: float) -> RateDecision:
        """What a hit on ``key`` would get now, counting nothing (``remaining``: hits still
        allowed, this one included). For limits on outcomes known only afterwards: the
        front door checks an account's failed sign-ins before the password, and counts a
        failure once it happened (accounts/throttle.py)."""
        ...


class RateLimited(ZerocodeError):
    status = 429
    code = "rate_limited"

    def __init__(
        self, message: str, retry_after: float, lockout: dict[str, object] | None = None
    ) -> None:
        super().__init__(message)
        self.retry_after = retry_after  # for the Retry-After header
        # What is locked, after how many tries, until when (the error's optional "lockout",
        # docs/api.md): a client words it in its person's language and time zone.
        self.lockout = lockout


def enforce(limiter: RateLimiter, key: str, limit: int, window_seconds: float) -> RateDecision:
    """Hit ``key`` and raise RateLimited (429) when refused, so handlers need no branch."""
    decision = limiter.hit(key, limit, window_seconds)
    if not decision.allowed:
        raise RateLimited(
            f"too many requests, retry in {math.ceil(decision.retry_after)} s", decision.retry_after
        )
    return decision


def check_rule(limit: int, window_seconds: float) -> None:
    """A limit below 1 could never be waited out, so it is a programming error."""
    if limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")
    if not (window_seconds > 0 and math.isfinite(window_seconds)):
        raise ValueError(f"window_seconds must be positive and finite, got {window_seconds}")


def allowed(remaining: int) -> RateDecision:
    return RateDecision(allowed=True, retry_after=0.0, remaining=remaining)


def refused(live: Sequence[float], now: float, limit: int, window_seconds: float) -> RateDecision:
    """Refusal for ``live``: sorted expiries all later than ``now``, at least ``limit`` of them.

    The next hit is allowed once ``len(live) - limit + 1`` of them have passed, i.e. at
    ``live[len(live) - limit]`` (more than one only if the key was used with a larger limit).
    """
    return RateDecision(
        allowed=False,
        retry_after=wait_until(live[len(live) - limit], now, window_seconds),
        remaining=0,
    )


def wait_until(expiry: float, now: float, window_seconds: float) -> float:
    """Seconds from ``now`` to ``expiry`` (> now), rounded up so that a caller adding it to
    ``now`` in floating point really reaches ``expiry``. Capped at the window, which only
    matters if clocks disagree (an expiry logged by a host whose clock runs ahead)."""
    wait = expiry - now
    while now + wait < expiry:
        wait = math.nextafter(wait, math.inf)
    return min(wait, window_seconds)
