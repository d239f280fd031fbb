"""Redis/Valkey RateLimiter: a sliding log per key in a sorted set, shared by all processes.

Each allowed hit is a member scored by its expiry (hit time + window). One Lua script
drops expired members, counts, adds the hit only if it fits and sets the key's TTL. Redis
runs a script with nothing interleaved, so racing processes can never both take the last
slot. Times come from the caller's clock (injectable for tests); hosts are assumed to be
NTP-synchronised, a skew of d lets a hit through up to d early.

On any Redis error the hit is ALLOWED and a warning logged: fail open. The limiter guards
against abuse; a cache outage must not take the product down with it.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable
from typing import Any

import redis

from zerocode.accounts.ratelimit import RateDecision, allowed, check_rule, wait_until

log = logging.getLogger(__name__)

# KEYS[1] the log; ARGV: now, expiry of this hit, limit, member. Scores travel as the
# caller's exact repr() strings: Lua would print numbers with only 14 digits.
# Returns {1, remaining, ""} or {0, 0, score of the expiry that must pass first}.
_HIT = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
local count = redis.call('ZCARD', KEYS[1])
local limit = tonumber(ARGV[3])
if count >= limit then
  local due = redis.call('ZRANGE', KEYS[1], count - limit, count - limit, 'WITHSCORES')
  return {0, 0, due[2]}
end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
local ttl = math.ceil((tonumber(last[2]) - tonumber(ARGV[1])) * 1000)
redis.call('PEXPIRE', KEYS[1], math.max(ttl, 1))
return {1, limit - count - 1, ''}
"""

# peek: the same answer without writing. KEYS[1] the log; ARGV: now, limit.
_PEEK = """
local live = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. ARGV[1], '+inf', 'WITHSCORES')
local count = #live / 2
local limit = tonumber(ARGV[2])
if count >= limit then
  return {0, 0, live[(count - limit) * 2 + 2]}
end
return {1, limit - count, ''}
"""


class RedisRateLimiter:
    def __init__(
        self,
        client: redis.Redis,
        prefix: str = "zerocode:rate:",
        now: Callable[[], float] = time.time,
    ) -> None:
        self.client, self.prefix, self.now = client, prefix, now
        self._script = client.register_script(_HIT)  # EVALSHA, reloaded on NOSCRIPT
        self._peek = client.register_script(_PEEK)

    @classmethod
    def from_url(
        cls, url: str, timeout: float = 0.5, prefix: str = "zerocode:rate:"
    ) -> RedisRateLimiter:
        client = redis.Redis.from_url(
            url, socket_timeout=timeout, socket_connect_timeout=timeout, health_check_interval=30
        )
        return cls(client, prefix)

    def hit(self, key: str, limit: int, window_seconds: float) -> RateDecision:
        check_rule(limit, window_seconds)
        now = self.now()
        args: list[str | int] = [repr(now), repr(now + window_seconds), limit, secrets.token_hex(8)]
        try:
            reply: Any = self._script(keys=[self.prefix + key], args=args)
        except redis.RedisError as exc:
            log.warning("rate limiter unavailable, allowing key=%s: %s", key, exc)
            return allowed(limit - 1)  # unknown; report as if this were the first hit
        ok, remaining, due = reply
        if ok:
            return allowed(int(remaining))
        return RateDecision(
            allowed=False, retry_after=wait_until(float(due), now, window_seconds), remaining=0
        )

    def peek(self, key: str, limit: int, window_seconds: float) -> RateDecision:
        check_rule(limit, window_seconds)
        now = self.now()
        try:
            reply: Any = self._peek(keys=[self.prefix + key], args=[repr(now), limit])
        except redis.RedisError as exc:
            log.warning("rate limiter unavailable, allowing key=%s: %s", key, exc)
            return allowed(limit)
        ok, remaining, due = reply
        if ok:
            return allowed(int(remaining))
        return RateDecision(
            allowed=False, retry_after=wait_until(float(due), now, window_seconds), remaining=0
        )
