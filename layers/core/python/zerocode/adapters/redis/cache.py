"""Redis/Valkey WindowCache (ElastiCache in AWS; ``rediss://`` URLs use TLS).

Every Redis error is logged and treated as a miss: the caller rebuilds from
the store and never fails because the cache did.
"""

from __future__ import annotations

import logging

import redis

from zerocode.memory.cache import CachedTail, decode_tail, encode_tail

log = logging.getLogger(__name__)


class RedisWindowCache:
    def __init__(
        self, client: redis.Redis, ttl_seconds: int = 900, prefix: str = "zerocode:tail:"
    ) -> None:
        self.client, self.ttl, self.prefix = client, ttl_seconds, prefix

    @classmethod
    def from_url(cls, url: str, ttl_seconds: int = 900, timeout: float = 0.5) -> RedisWindowCache:
        client = redis.Redis.from_url(
            url, socket_timeout=timeout, socket_connect_timeout=timeout, health_check_interval=30
        )
        return cls(client, ttl_seconds)

    def _key(self, app_id: str) -> str:
        return self.prefix + app_id

    def get(self, app_id: str) -> CachedTail | None:
        try:
            raw = self.client.get(self._key(app_id))
        except redis.RedisError as exc:
            log.warning(
                "window cache get failed, rebuilding from the store app=%s: %s", app_id, exc
            )
            return None
        if raw is None:
            return None
        try:
            return decode_tail(bytes(raw))  # type: ignore[arg-type]
        except ValueError as exc:
            log.warning("window cache entry unreadable, rebuilding app=%s: %s", app_id, exc)
            return None

    def put(self, app_id: str, tail: CachedTail) -> None:
        try:
            self.client.set(self._key(app_id), encode_tail(tail), ex=self.ttl)
        except redis.RedisError as exc:
            log.warning("window cache put failed app=%s: %s", app_id, exc)

    def delete(self, app_id: str) -> None:
        try:
            self.client.delete(self._key(app_id))
        except redis.RedisError as exc:
            # A stale entry left behind is harmless: its head no longer matches the store.
            log.warning("window cache delete failed app=%s: %s", app_id, exc)
