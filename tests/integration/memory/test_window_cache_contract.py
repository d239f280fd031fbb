"""WindowCache contract on the in-process LRU and a real Redis, plus Redis failure modes."""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import redis_client_or_skip
from tests.factories import turn_entries
from zerocode.adapters.inprocess.cache import LruWindowCache, tail_bytes
from zerocode.adapters.redis.cache import RedisWindowCache
from zerocode.memory.cache import CachedTail, WindowCache, decode_tail, encode_tail

ENTRIES = tuple(turn_entries(1, 1, steps=2, calls=2, payload="ünïcode ✓"))
TAIL = CachedTail(
    head=ENTRIES[-1].seq, head_uid=ENTRIES[-1].uid, entries=ENTRIES[3:], pinned=ENTRIES[0]
)


@pytest.fixture(params=["lru", "redis"])
def cache(request: pytest.FixtureRequest) -> Iterator[WindowCache]:
    if request.param == "lru":
        yield LruWindowCache(max_apps=10, ttl_seconds=60)
        return
    client = redis_client_or_skip()
    prefix = f"zc-test-{secrets.token_hex(4)}:"
    yield RedisWindowCache(client, ttl_seconds=60, prefix=prefix)
    for key in client.scan_iter(prefix + "*"):
        client.delete(key)


def test_round_trip_and_isolation(cache: WindowCache) -> None:
    assert cache.get("a") is None
    cache.put("a", TAIL)
    assert cache.get("a") == TAIL
    assert cache.get("b") is None
    cache.delete("a")
    assert cache.get("a") is None
    cache.delete("never-there")


def test_put_replaces(cache: WindowCache) -> None:
    cache.put("a", TAIL)
    newer = CachedTail(head=99, head_uid="u", entries=ENTRIES[-2:])
    cache.put("a", newer)
    assert cache.get("a") == newer


def test_codec_round_trips_unreadable_entries_too() -> None:
    from dataclasses import replace

    broken = CachedTail(
        head=5, head_uid="x", entries=(replace(ENTRIES[1], message=None, error="bad"),)
    )
    assert decode_tail(encode_tail(broken)) == broken
    for garbage in (b"", b"[]", b'{"v": 2}', b'{"v": 1, "head": 1}', b"\xff\xfe"):
        with pytest.raises(ValueError):
            decode_tail(garbage)


def test_lru_expires_after_ttl_and_evicts_least_recent() -> None:
    now = [0.0]
    cache = LruWindowCache(max_apps=2, ttl_seconds=10, clock=lambda: now[0])
    cache.put("a", TAIL)
    cache.put("b", TAIL)
    assert cache.get("a") == TAIL  # a is now most recent
    cache.put("c", TAIL)
    assert cache.get("b") is None and cache.get("a") == TAIL and len(cache) == 2
    now[0] = 10.5
    assert cache.get("a") is None


def test_lru_is_bounded_by_bytes_too() -> None:
    big = CachedTail(
        head=ENTRIES[-1].seq,
        head_uid=ENTRIES[-1].uid,
        entries=tuple(turn_entries(1, 1, steps=4, calls=4, payload="x" * 10_000)),
    )
    size = tail_bytes(big)
    assert size > 160_000  # 16 calls of 10 KB arguments, 16 results of 10 KB
    cache = LruWindowCache(max_apps=100, ttl_seconds=60, max_bytes=size * 2 + 1)
    for app in ("a", "b", "c"):
        cache.put(app, big)
    assert cache.get("a") is None and cache.get("b") == big and cache.get("c") == big
    assert cache.bytes == size * 2
    cache.put("b", big)  # replacing does not count twice
    assert cache.bytes == size * 2
    cache.delete("c")
    assert cache.bytes == size
    tiny = LruWindowCache(max_apps=100, ttl_seconds=60, max_bytes=size - 1)
    tiny.put("a", big)  # larger than the whole cache: not kept, never an error
    assert tiny.get("a") is None and tiny.bytes == 0


def test_redis_entries_carry_a_ttl() -> None:
    client = redis_client_or_skip()
    prefix = f"zc-test-{secrets.token_hex(4)}:"
    cache = RedisWindowCache(client, ttl_seconds=1, prefix=prefix)
    cache.put("a", TAIL)
    assert 0 < client.pttl(prefix + "a") <= 1000
    time.sleep(1.2)
    assert cache.get("a") is None


def test_garbage_in_redis_is_a_miss_not_an_error(caplog: pytest.LogCaptureFixture) -> None:
    client = redis_client_or_skip()
    prefix = f"zc-test-{secrets.token_hex(4)}:"
    cache = RedisWindowCache(client, prefix=prefix)
    client.set(prefix + "a", b"\x00not json")
    with caplog.at_level(logging.WARNING):
        assert cache.get("a") is None
    assert "unreadable" in caplog.text
    client.delete(prefix + "a")


def _dead_redis() -> RedisWindowCache:
    # Nothing listens on port 1; connections are refused at once.
    return RedisWindowCache.from_url("redis://127.0.0.1:1/0", timeout=0.2)


def test_unreachable_redis_never_fails_the_caller(caplog: pytest.LogCaptureFixture) -> None:
    cache = _dead_redis()
    with caplog.at_level(logging.WARNING):
        cache.put("a", TAIL)
        assert cache.get("a") is None
        cache.delete("a")
    assert caplog.text.count("window cache") >= 3


def test_tls_url_is_accepted() -> None:
    cache: Any = RedisWindowCache.from_url("rediss://cache.example.internal:6379/0")
    assert cache.client.connection_pool.connection_class.__name__ == "SSLConnection"
