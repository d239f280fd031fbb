"""Composition root: settings in, adapters out. The only place that knows both modes."""

from __future__ import annotations

from typing import Any

from zerocode.cache import WindowCache
from zerocode.display import DisplayHistoryStore
from zerocode.memory import Memory
from zerocode.settings import Settings
from zerocode.transcript import TranscriptStore


def window_cache(settings: Settings) -> WindowCache:
    if settings.redis_url:
        from zerocode.adapters.redis_cache import RedisWindowCache

        return RedisWindowCache.from_url(settings.redis_url, settings.cache_ttl_seconds)
    from zerocode.adapters.memory_cache import LruWindowCache

    return LruWindowCache(settings.cache_max_apps, settings.cache_ttl_seconds)


def stores(settings: Settings) -> tuple[TranscriptStore, DisplayHistoryStore]:
    if settings.mode == "aws":
        from zerocode.adapters.dynamodb import DynamoDisplayHistoryStore, DynamoTranscriptStore

        client, s3 = _aws_client("dynamodb", settings), _aws_client("s3", settings)
        return (DynamoTranscriptStore(client, settings.transcript_table, s3=s3,
                                      payload_bucket=settings.payload_bucket,
                                      retention_days=settings.retention_days),
                DynamoDisplayHistoryStore(client, settings.display_table,
                                          retention_days=settings.retention_days))
    from zerocode.adapters.sqlite import (
        SqliteDatabase,
        SqliteDisplayHistoryStore,
        SqliteTranscriptStore,
    )

    return (SqliteTranscriptStore(SqliteDatabase(settings.sqlite_path), settings.retention_days),
            SqliteDisplayHistoryStore(SqliteDatabase(settings.sqlite_path),
                                      settings.retention_days))


def memory(settings: Settings, transcript: TranscriptStore | None = None) -> Memory:
    store = transcript if transcript is not None else stores(settings)[0]
    return Memory(store, window_cache(settings), settings.window_policy())


def _aws_client(service: str, settings: Settings) -> Any:
    import boto3

    return boto3.client(service, region_name=settings.aws_region)
