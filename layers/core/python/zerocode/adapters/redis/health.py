"""The cache's part of the storage probe: one key set in Redis (ElastiCache on AWS).

Window tails, rate limits and turns' event logs live there: a Redis that cannot take a
write (unreachable, out of memory, read-only after a failover) degrades every turn. The key,
``zerocode:health:probe``, expires within the hour.
"""

from __future__ import annotations

from typing import Any

import redis

from zerocode.apps.storage_health import StorageHealth

KEY = "zerocode:health:probe"


class RedisStorageProbe:
    def __init__(self, client: Any) -> None:
        self.client = client

    @classmethod
    def from_url(cls, url: str) -> RedisStorageProbe:
        return cls(redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2))

    def check(self) -> StorageHealth:
        try:
            self.client.set(KEY, "1", ex=3600)
        except redis.RedisError as exc:
            return StorageHealth((f"the cache (Redis) cannot take a write: {type(exc).__name__}",))
        return StorageHealth()
