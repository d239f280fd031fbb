"""RateLimiter contract on the in-process log, a real Redis and DynamoDB (moto).

The rule every adapter must keep: at most ``limit`` allowed hits per key in any span of
``window_seconds``, refused hits not counted, and ``retry_after`` honest (waiting it out is
enough, and never longer than the window).
"""

from __future__ import annotations

import logging
import random
import secrets
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.conftest import redis_client_or_skip
from tests.integration.backends import OneRequestAtATime, run_together
from zerocode.accounts.ratelimit import RateDecision, RateLimited, RateLimiter, enforce

T0 = 1_700_000_000.0
WINDOW = 60.0
BOUNDARY = 1_700_000_040.0  # a multiple of WINDOW: where a fixed-window bucket would roll over

# (now=None) -> a RateLimiter on the same storage as every other one the factory made
LimiterFactory = Callable[..., RateLimiter]


class Clock:
    def __init__(self, at: float = T0) -> None:
        self.at = at

    def __call__(self) -> float:
        return self.at


@pytest.fixture(params=["memory", "redis", "dynamodb"])
def limiters(request: pytest.FixtureRequest) -> Iterator[LimiterFactory]:
    if request.param == "memory":
        from zerocode.adapters.inprocess.ratelimit import InProcessRateLimiter

        shared: dict[str, InProcessRateLimiter] = {}

        def memory(now: Callable[[], float] | None = None) -> RateLimiter:
            # In-process state is per object; tests that want two views share one clock.
            if "limiter" not in shared:
                shared["limiter"] = InProcessRateLimiter(now=now or Clock())
            return shared["limiter"]

        yield memory
        return
    if request.param == "redis":
        from zerocode.adapters.redis.ratelimit import RedisRateLimiter

        client = redis_client_or_skip()
        prefix = f"zc-test-rate-{secrets.token_hex(4)}:"

        def redis_limiter(now: Callable[[], float] | None = None) -> RateLimiter:
            return RedisRateLimiter(client, prefix=prefix, now=now or Clock())

        yield redis_limiter
        for key in client.scan_iter(prefix + "*"):
            client.delete(key)
        return
    request.getfixturevalue("aws")
    import boto3

    from zerocode.adapters.dynamodb.ratelimit import DynamoRateLimiter, create_rate_table

    client = boto3.client("dynamodb", region_name="us-east-1")
    create_rate_table(client, "zc-rate")
    create_rate_table(client, "zc-rate")  # idempotent: a second start must not fail

    atomic = OneRequestAtATime(client)

    def dynamo(now: Callable[[], float] | None = None) -> RateLimiter:
        return DynamoRateLimiter(atomic, "zc-rate", now=now or Clock())

    yield dynamo


def test_limit_is_allowed_then_refused(limiters: LimiterFactory) -> None:
    limiter = limiters()
    decisions = [limiter.hit("user-1", 3, WINDOW) for _ in range(4)]
    assert [d.allowed for d in decisions] == [True, True, True, False]
    assert [d.remaining for d in decisions] == [2, 1, 0, 0]
    assert [d.retry_after for d in decisions[:3]] == [0.0, 0.0, 0.0]
    assert 0 < decisions[3].retry_after <= WINDOW
    assert decisions[3].retry_after == WINDOW  # all three were at T0, the clock has not moved


def test_waiting_retry_after_is_enough_and_needed(limiters: LimiterFactory) -> None:
    clock = Clock()
    limiter = limiters(clock)
    for offset in (0.0, 10.0, 20.0):
        clock.at = T0 + offset
        assert limiter.hit("user-1", 3, WINDOW).allowed
    clock.at = T0 + 25.3
    refused = limiter.hit("user-1", 3, WINDOW)
    assert not refused.allowed and 0 < refused.retry_after <= WINDOW
    assert refused.retry_after == pytest.approx(34.7)
    clock.at = T0 + 25.3 + refused.retry_after - 0.001
    assert not limiter.hit("user-1", 3, WINDOW).allowed
    clock.at = T0 + 25.3 + refused.retry_after
    assert limiter.hit("user-1", 3, WINDOW) == RateDecision(
        allowed=True, retry_after=0.0, remaining=0
    )
    again = limiter.hit("user-1", 3, WINDOW)  # the hit at T0+10 is next to leave
    assert not again.allowed and again.retry_after == pytest.approx(10.0)


def test_remaining_counts_down_and_recovers(limiters: LimiterFactory) -> None:
    clock = Clock()
    limiter = limiters(clock)
    assert [limiter.hit("k", 4, WINDOW).remaining for _ in range(4)] == [3, 2, 1, 0]
    clock.at = T0 + WINDOW
    assert limiter.hit("k", 4, WINDOW).remaining == 3  # the whole window has passed


def test_keys_are_independent(limiters: LimiterFactory) -> None:
    limiter = limiters()
    assert limiter.hit("user-1", 1, WINDOW).allowed
    assert not limiter.hit("user-1", 1, WINDOW).allowed
    assert limiter.hit("user-2", 1, WINDOW).allowed
    assert limiters().hit("user-3", 1, WINDOW).allowed  # another process, same storage
    assert not limiters().hit("user-1", 1, WINDOW).allowed


def test_a_refused_hit_does_not_extend_the_wait(limiters: LimiterFactory) -> None:
    clock = Clock()
    limiter = limiters(clock)
    assert limiter.hit("k", 2, WINDOW).allowed
    clock.at = T0 + 1
    assert limiter.hit("k", 2, WINDOW).allowed
    waits = []
    for offset in (30.0, 45.0, 59.5):
        clock.at = T0 + offset
        decision = limiter.hit("k", 2, WINDOW)
        assert not decision.allowed
        waits.append(decision.retry_after)
    assert waits == pytest.approx([30.0, 15.0, 0.5])
    clock.at = T0 + WINDOW
    assert limiter.hit("k", 2, WINDOW).allowed


def test_no_more_than_limit_across_a_fixed_window_boundary(limiters: LimiterFactory) -> None:
    clock = Clock(BOUNDARY - 1)
    limiter = limiters(clock)
    assert all(limiter.hit("k", 5, WINDOW).allowed for _ in range(5))
    clock.at = BOUNDARY + 1  # a fixed window would have reset here
    late = [limiter.hit("k", 5, WINDOW) for _ in range(5)]
    assert not any(d.allowed for d in late)
    assert late[0].retry_after == pytest.approx(WINDOW - 2)
    clock.at = BOUNDARY - 1 + WINDOW
    assert all(limiter.hit("k", 5, WINDOW).allowed for _ in range(5))
    assert not limiter.hit("k", 5, WINDOW).allowed


def test_random_traffic_matches_the_sliding_rule(limiters: LimiterFactory) -> None:
    """Decisions equal a naive sliding log's, and no window ever holds more than limit."""
    rng = random.Random(20240611)
    clock = Clock()
    limiter = limiters(clock)
    limit, window = 4, 10.0
    accepted: dict[str, list[float]] = {"a": [], "b": []}
    for _ in range(160):
        clock.at += rng.choice([0.0, 0.0, 0.25, 1.0, 2.5, 7.0])
        key = rng.choice("ab")
        live = [t for t in accepted[key] if t + window > clock.at]
        decision = limiter.hit(key, limit, window)
        assert decision.allowed == (len(live) < limit)
        if decision.allowed:
            accepted[key].append(clock.at)
            assert decision.remaining == limit - len(live) - 1
        else:
            assert decision.retry_after == pytest.approx(live[-limit] + window - clock.at)
            assert 0 < decision.retry_after <= window
    for times in accepted.values():
        assert times
        for start in times:
            assert sum(start <= t < start + window for t in times) <= limit


@pytest.mark.parametrize("round_", range(3))
def test_racing_threads_get_exactly_the_limit(limiters: LimiterFactory, round_: int) -> None:
    threads_n, limit = 20, 5
    contenders = [limiters() for _ in range(threads_n)]
    results = run_together(threads_n, lambda i: contenders[i].hit(f"race-{round_}", limit, WINDOW))
    winners = [d for d in results.values() if d.allowed]
    assert len(winners) == limit
    assert sorted(d.remaining for d in winners) == list(range(limit))
    assert not limiters().hit(f"race-{round_}", limit, WINDOW).allowed


def test_a_rule_that_can_never_allow_is_rejected(limiters: LimiterFactory) -> None:
    limiter = limiters()
    for limit, window in ((0, WINDOW), (1, 0.0), (1, float("inf"))):
        with pytest.raises(ValueError):
            limiter.hit("k", limit, window)


def test_enforce_raises_429_with_retry_after(limiters: LimiterFactory) -> None:
    limiter = limiters()
    assert enforce(limiter, "k", 1, WINDOW).allowed
    with pytest.raises(RateLimited) as caught:
        enforce(limiter, "k", 1, WINDOW)
    assert caught.value.status == 429 and caught.value.code == "rate_limited"
    assert caught.value.retry_after == WINDOW


def test_peek_answers_as_a_hit_would_and_counts_nothing(limiters: LimiterFactory) -> None:
    clock = Clock()
    limiter = limiters(clock)
    assert limiter.peek("k", 3, WINDOW) == RateDecision(allowed=True, retry_after=0.0, remaining=3)
    assert all(limiter.peek("k", 3, WINDOW).allowed for _ in range(10))  # nothing counted
    limiter.hit("k", 3, WINDOW)
    clock.at = T0 + 10
    limiter.hit("k", 3, WINDOW)
    assert limiter.peek("k", 3, WINDOW) == RateDecision(allowed=True, retry_after=0.0, remaining=1)
    assert limiter.peek("k", 2, WINDOW).allowed is False  # the rule is the caller's
    limiter.hit("k", 3, WINDOW)
    clock.at = T0 + 25
    seen = limiter.peek("k", 3, WINDOW)
    assert not seen.allowed and seen.retry_after == pytest.approx(WINDOW - 25)
    assert limiter.hit("k", 3, WINDOW) == seen  # what the hit then got
    assert limiter.peek("other", 3, WINDOW).remaining == 3
    clock.at = T0 + WINDOW  # the first hit left the window
    assert limiter.peek("k", 3, WINDOW) == RateDecision(allowed=True, retry_after=0.0, remaining=1)
    assert limiters(clock).peek("k", 3, WINDOW).remaining == 1  # another process, same storage


def test_peek_rejects_a_rule_that_can_never_allow(limiters: LimiterFactory) -> None:
    with pytest.raises(ValueError):
        limiters().peek("k", 0, WINDOW)


# --- adapter specifics -----------------------------------------------------------------


def test_memory_forgets_idle_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    from zerocode.adapters.inprocess import ratelimit as memory_ratelimit

    monkeypatch.setattr(memory_ratelimit, "SWEEP_EVERY", 8)
    clock = Clock()
    limiter = memory_ratelimit.InProcessRateLimiter(now=clock)
    for i in range(50):
        limiter.hit(f"idle-{i}", 3, WINDOW)
    assert len(limiter) == 50
    clock.at = T0 + WINDOW
    for _ in range(60):
        limiter.hit("busy", 1000, WINDOW)
    assert len(limiter) == 1


def test_redis_log_carries_a_ttl_of_one_window() -> None:
    from zerocode.adapters.redis.ratelimit import RedisRateLimiter

    client = redis_client_or_skip()
    prefix = f"zc-test-rate-{secrets.token_hex(4)}:"
    try:
        RedisRateLimiter(client, prefix=prefix).hit("k", 3, 5.0)
        assert 4000 < client.pttl(prefix + "k") <= 5000
        assert client.zcard(prefix + "k") == 1
    finally:
        client.delete(prefix + "k")


def test_redis_unreachable_fails_open_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    from zerocode.adapters.redis.ratelimit import RedisRateLimiter

    limiter = RedisRateLimiter.from_url("redis://127.0.0.1:1/0", timeout=0.2)
    with caplog.at_level(logging.WARNING, logger="zerocode.adapters.redis.ratelimit"):
        decisions = [limiter.hit("k", 1, WINDOW) for _ in range(3)]
    assert all(d.allowed for d in decisions)
    assert limiter.peek("k", 1, WINDOW).allowed
    assert [r.levelno for r in caplog.records] == [logging.WARNING] * 4
    assert "allowing" in caplog.records[0].getMessage()


def test_dynamodb_lost_race_is_retried_on_a_fresh_read(aws: None) -> None:
    """Force the interleaving: another writer lands between our read and our write."""
    import boto3

    from zerocode.adapters.dynamodb.ratelimit import DynamoRateLimiter, create_rate_table

    client = boto3.client("dynamodb", region_name="us-east-1")
    create_rate_table(client, "zc-rate")
    other = DynamoRateLimiter(client, "zc-rate", now=Clock())

    class Interleaving:
        def __init__(self) -> None:
            self.reads = 0

        def __getattr__(self, name: str) -> Any:
            return getattr(client, name)

        def get_item(self, **kwargs: Any) -> Any:
            self.reads += 1
            item = client.get_item(**kwargs)
            if self.reads == 1:
                assert other.hit("k", 1, WINDOW).allowed
            return item

    spy = Interleaving()
    decision = DynamoRateLimiter(spy, "zc-rate", now=Clock()).hit("k", 1, WINDOW)
    assert spy.reads == 2
    assert not decision.allowed and decision.retry_after == WINDOW


def test_dynamodb_refused_hits_write_nothing_and_items_expire(aws: None) -> None:
    import boto3

    from zerocode.adapters.dynamodb.ratelimit import DynamoRateLimiter, create_rate_table

    client = boto3.client("dynamodb", region_name="us-east-1")
    create_rate_table(client, "zc-rate")
    ttl = client.describe_time_to_live(TableName="zc-rate")["TimeToLiveDescription"]
    assert ttl["AttributeName"] == "expires_at"
    limiter = DynamoRateLimiter(client, "zc-rate", now=Clock())
    limiter.hit("k", 1, WINDOW)

    def item() -> dict[str, Any]:
        got: dict[str, Any] = client.get_item(
            TableName="zc-rate", Key={"key": {"S": "k"}}, ConsistentRead=True
        )["Item"]
        return got

    before = item()
    assert not limiter.hit("k", 1, WINDOW).allowed
    assert item() == before
    assert before["version"]["N"] == "1"
    assert int(before["expires_at"]["N"]) == int(T0 + WINDOW)
