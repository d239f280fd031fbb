"""Composition root: settings in, adapters out. The only place that knows both modes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from zerocode.accounts import Accounts
from zerocode.apps import App, CodeGenType
from zerocode.cache import WindowCache
from zerocode.display import DisplayHistoryStore
from zerocode.engine import Engine, EngineLimits
from zerocode.memory import Memory
from zerocode.model import ChatModel, ModelRole
from zerocode.platform import Platform
from zerocode.ratelimit import RateLimiter
from zerocode.settings import Settings
from zerocode.transcript import TranscriptStore
from zerocode.workspace import WorkspaceLimits


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


def chat_model(settings: Settings) -> ChatModel:
    """The configured endpoint, or the offline scripted model when none is configured."""
    from zerocode.adapters.openai_model import build_chat_model

    models = {ModelRole.ROUTING: settings.model_routing, ModelRole.CODE: settings.model_code,
              ModelRole.VUE: settings.model_vue}
    return build_chat_model(settings.model_base_url, settings.model_api_key, models,
                            timeout=settings.model_timeout_seconds,
                            max_retries=settings.model_max_retries)


def platform(settings: Settings, model: ChatModel | None = None) -> Platform:
    """Everything the API needs. Local mode only until the AWS adapters for apps, leases,
    workspaces and builds exist (issues #5, #6)."""
    if settings.mode != "local":
        raise RuntimeError("ZEROCODE_MODE=aws needs the AWS app, lease, workspace and build "
                           "adapters, which are not built yet; use ZEROCODE_MODE=local")
    from zerocode.adapters.local_workspace import LocalWorkspace
    from zerocode.adapters.npm_builder import NpmBuilder
    from zerocode.adapters.sqlite import (
        SqliteAppStore,
        SqliteDatabase,
        SqliteDisplayHistoryStore,
        SqliteLease,
        SqlitePendingDeletions,
        SqliteTranscriptStore,
        SqliteUserStore,
    )

    db = SqliteDatabase(settings.sqlite_path)
    transcript = SqliteTranscriptStore(db, settings.retention_days)
    transcript.purge_expired()
    display = SqliteDisplayHistoryStore(db, settings.retention_days)
    mem = memory(settings, transcript)
    workspace = LocalWorkspace(settings.data_dir / "workspaces",
                               WorkspaceLimits(settings.max_file_bytes, settings.max_files))
    builder = NpmBuilder(settings.npm_cache)
    model = model or chat_model(settings)
    engine = Engine(memory=mem, display=display, workspace=workspace, builder=builder,
                    model=model, lease=SqliteLease(db), build_dir=workspace.path,
                    limits=EngineLimits(max_tool_calls=settings.max_tool_calls,
                                        turn_timeout=settings.turn_timeout_seconds,
                                        max_turns=settings.max_turns_per_app))

    def site_dir(app: App) -> Path | None:
        root = workspace.path(app.id)
        if app.code_gen_type is CodeGenType.VUE_PROJECT:
            root = root / "dist"
        return root if (root / "index.html").is_file() else None

    return Platform(settings, SqliteAppStore(db), mem, display, workspace, model, engine,
                    site_dir, Accounts(SqliteUserStore(db)), rate_limiter(settings),
                    SqlitePendingDeletions(db))


def rate_limiter(settings: Settings) -> RateLimiter:
    """Shared through Redis when configured (several processes), else per process."""
    if settings.redis_url:
        from zerocode.adapters.redis_ratelimit import RedisRateLimiter

        return RedisRateLimiter.from_url(settings.redis_url)
    from zerocode.adapters.memory_ratelimit import InProcessRateLimiter

    return InProcessRateLimiter()


def _aws_client(service: str, settings: Settings) -> Any:
    import boto3

    return boto3.client(service, region_name=settings.aws_region)
