"""Composition root: settings in, adapters out. The only place that knows both modes."""

from __future__ import annotations

from pathlib import Path

from zerocode.accounts.ratelimit import RateLimiter
from zerocode.accounts.service import Accounts, AccountService
from zerocode.apps.deletion import DeletionSweep
from zerocode.apps.storage_health import CachedProbe, Probes
from zerocode.apps.versions import Versions
from zerocode.apps.workspace import WorkspaceLimits
from zerocode.bootstrap.aws_parts import (
    aws_client,
    cognito,
    model_api_key,
)
from zerocode.bootstrap.platform import Platform
from zerocode.bootstrap.settings import Settings
from zerocode.engine.model import ChatModel, ModelRole
from zerocode.engine.turn import Engine, EngineLimits
from zerocode.engine.turn_log import TurnLog
from zerocode.engine.turns import Turns
from zerocode.memory.cache import WindowCache
from zerocode.memory.display import DisplayHistoryStore
from zerocode.memory.facade import Memory
from zerocode.memory.transcript import TranscriptStore
from zerocode.publishing.builds import Builder
from zerocode.publishing.eviction import PreviewSweep
from zerocode.publishing.pointers import Publisher, SiteTarget
from zerocode.publishing.preview_covers import PreviewCovers
from zerocode.publishing.service import Publishing


def window_cache(settings: Settings) -> WindowCache:
    if settings.redis_url:
        from zerocode.adapters.redis.cache import RedisWindowCache

        return RedisWindowCache.from_url(settings.redis_url, settings.cache_ttl_seconds)
    from zerocode.adapters.inprocess.cache import LruWindowCache

    return LruWindowCache(
        settings.cache_max_apps, settings.cache_ttl_seconds, max_bytes=settings.cache_max_mb << 20
    )


def stores(settings: Settings) -> tuple[TranscriptStore, DisplayHistoryStore]:
    if settings.mode == "aws":
        from zerocode.adapters.dynamodb.display import DynamoDisplayHistoryStore
        from zerocode.adapters.dynamodb.transcript import DynamoTranscriptStore

        client, s3 = (
            aws_client("dynamodb", settings),
            aws_client("s3", settings),
        )
        return (
            DynamoTranscriptStore(
                client,
                settings.transcript_table,
                s3=s3,
                payload_bucket=settings.payload_bucket,
                retention_days=settings.retention_days,
            ),
            DynamoDisplayHistoryStore(
                client, settings.display_table, retention_days=settings.retention_days
            ),
        )
    from zerocode.adapters.sqlite.database import SqliteDatabase
    from zerocode.adapters.sqlite.display import SqliteDisplayHistoryStore
    from zerocode.adapters.sqlite.transcript import SqliteTranscriptStore

    return (
        SqliteTranscriptStore(SqliteDatabase(settings.sqlite_path), settings.retention_days),
        SqliteDisplayHistoryStore(SqliteDatabase(settings.sqlite_path), settings.retention_days),
    )


def memory(
    settings: Settings, transcript: TranscriptStore | None = None, model: ChatModel | None = None
) -> Memory:
    """The memory facade; with ``window_summary`` on and a ``model``, the routing model
    writes the running summary of turns that leave the window."""
    store = transcript if transcript is not None else stores(settings)[0]
    summarizer = None
    if settings.window_summary and model is not None:
        from zerocode.engine.summary import ModelSummarizer

        summarizer = ModelSummarizer(model, timeout=min(30.0, settings.model_timeout_seconds))
    return Memory(store, window_cache(settings), settings.window_policy(), summarizer=summarizer)


def chat_model(settings: Settings) -> ChatModel:
    """The configured endpoint, or the offline scripted model when none is configured."""
    from zerocode.adapters.model.openai import build_chat_model

    models = {
        ModelRole.ROUTING: settings.model_routing,
        ModelRole.CODE: settings.model_code,
        ModelRole.VUE: settings.model_vue,
    }
    key = settings.model_api_key
    if key is None and settings.model_api_key_secret_arn:
        key = model_api_key(settings.model_api_key_secret_arn, settings.aws_region)
    return build_chat_model(
        settings.model_base_url,
        key,
        models,
        timeout=settings.model_timeout_seconds,
        max_retries=settings.model_max_retries,
        offline_flawed_seed=settings.offline_model_seed
        if settings.offline_model == "flawed"
        else None,
    )


def platform(
    settings: Settings,
    model: ChatModel | None = None,
    builder: Builder | None = None,
    publisher: Publisher | None = None,
) -> Platform:
    """Everything the API needs, for the configured mode. ``model``, ``builder`` and
    ``publisher`` replace the configured ones (tests, and AWS mode until CodeBuild lands)."""
    if settings.mode == "aws":
        from zerocode.bootstrap.aws_wiring import aws_platform

        return aws_platform(settings, model, builder, publisher)
    from zerocode.adapters.inprocess.turn_log import InProcessTurnLog
    from zerocode.adapters.local.build_shares import BuildShares
    from zerocode.adapters.local.builder import LocalBuilder, default_slots
    from zerocode.adapters.local.chromium import availability
    from zerocode.adapters.local.chromium_acceptance import ChromiumAcceptance
    from zerocode.adapters.local.chromium_check import chromium_check
    from zerocode.adapters.local.chromium_covers import chromium_covers
    from zerocode.adapters.local.disk_reserve import DiskReserve
    from zerocode.adapters.local.preview_covers import LocalPreviewCovers
    from zerocode.adapters.local.sandbox import Limits, sandbox
    from zerocode.adapters.local.toolchain_store import ToolchainStore
    from zerocode.adapters.local.workspace import LocalWorkspace
    from zerocode.adapters.sqlite.apps import SqliteAppStore
    from zerocode.adapters.sqlite.builds import SqliteBuildStore
    from zerocode.adapters.sqlite.checks import SqliteCheckStore
    from zerocode.adapters.sqlite.database import SqliteDatabase
    from zerocode.adapters.sqlite.deletions import SqlitePendingDeletions
    from zerocode.adapters.sqlite.display import SqliteDisplayHistoryStore
    from zerocode.adapters.sqlite.health import SqliteStorageProbe
    from zerocode.adapters.sqlite.journal import SqliteJournal
    from zerocode.adapters.sqlite.lease import SqliteLease
    from zerocode.adapters.sqlite.publisher import SqlitePublisher
    from zerocode.adapters.sqlite.transcript import SqliteTranscriptStore
    from zerocode.adapters.sqlite.users import SqliteUserStore
    from zerocode.adapters.sqlite.versions import SqliteVersionStore

    db = SqliteDatabase(settings.sqlite_path)
    transcript = SqliteTranscriptStore(db, settings.retention_days)
    transcript.purge_expired()
    display = SqliteDisplayHistoryStore(db, settings.retention_days)
    model = model or chat_model(settings)
    mem = memory(settings, transcript, model)
    workspace = LocalWorkspace(settings.data_dir / "workspaces", workspace_limits(settings))
    apps, builds, lease = SqliteAppStore(db), SqliteBuildStore(db), SqliteLease(db)
    journal = SqliteJournal(db)
    box = sandbox(override=settings.dangerously_unsandboxed_builds)
    covers = (
        chromium_covers(
            settings.data_dir / "covers", settings.public_sites_url, settings.chromium_path
        )
        if settings.covers
        else None
    )
    limits = Limits(
        seconds=settings.build_timeout_seconds,
        memory_bytes=settings.build_memory_mb << 20,
        processes=settings.build_max_processes,
        disk_bytes=settings.build_disk_mb << 20,
    )
    shares = BuildShares(
        settings.build_slots or default_slots(limits),
        settings.build_per_user,
        settings.build_queue_seconds,
    )
    publishing = Publishing(
        apps=apps,
        builds=builds,
        builder=builder
        or LocalBuilder(
            settings.data_dir,
            box,
            ToolchainStore(
                settings.toolchain_dir or settings.data_dir / "toolchain", settings.npm_cache
            ),
            limits,
            prepared_max=settings.build_prepared_boxes,
            prepared_seconds=settings.build_prepared_seconds,
            shares=shares,
        ),
        publisher=publisher or SqlitePublisher(db),
        workspace=workspace,
        lease=lease,
        urls=settings.site_urls(),
        covers=covers,
    )
    # Private covers of previews, taken here by the covers' browser (preview_covers.py).
    publishing.preview_covers = PreviewCovers(
        store=LocalPreviewCovers(settings.data_dir / "preview-covers"),
        apps=apps,
        publisher=publishing.publisher,
        urls=publishing.urls,
        camera=covers if settings.preview_covers else None,
        interval=settings.preview_cover_seconds,
    )
    # The preview in a browser after each successful build (local only; needs Chromium),
    # and the app's acceptance checks in the same confined browser.
    check = (
        chromium_check(
            publishing.urls, settings.chromium_path, apps=apps, publisher=publishing.publisher
        )
        if settings.covers and settings.runtime_check
        else None
    )
    reserve = (
        DiskReserve(settings.data_dir, int(settings.disk_reserve_mb * 2**20))
        if settings.disk_reserve_mb
        else None
    )
    engine = Engine(
        memory=mem,
        display=display,
        workspace=workspace,
        preview=publishing.preview,
        model=model,
        lease=lease,
        journal=journal,
        limits=engine_limits(settings, build_ahead=settings.build_ahead is not False),
        runtime_check=check,
        versions=Versions(SqliteVersionStore(db)),
        checks=SqliteCheckStore(db),
        acceptance=ChromiumAcceptance(check) if check is not None else None,
        preview_stages=publishing,
        reserve=reserve,
    )

    def site_root(target: SiteTarget) -> Path | None:
        """A local build's output directory (the sites origin serves it)."""
        build = builds.get(target.app_id, target.build_id)
        return Path(build.output) if build is not None and build.output else None

    return Platform(
        settings=settings,
        apps=apps,
        memory=mem,
        display=display,
        workspace=workspace,
        model=model,
        engine=engine,
        # One process owns a local data directory: its turns are all here (shared=False).
        turns=Turns(
            engine, turn_log(settings) if settings.redis_url else InProcessTurnLog(), shared=False
        ),
        accounts=Accounts(SqliteUserStore(db)),
        rates=rate_limiter(settings),
        deletions=SqlitePendingDeletions(db),
        builds=builds,
        publishing=publishing,
        site_root=site_root,
        storage=CachedProbe(
            Probes(
                SqliteStorageProbe(settings.sqlite_path, settings.data_dir, settings.min_free_mb),
                *([reserve] if reserve is not None else []),
            ),
            settings.health_probe_seconds,
        ),
        build_isolation=(
            f"{box.description}; {shares.describe()}, {settings.build_disk_mb} MiB per build"
            if builder is None
            else "injected builder"
        ),
        browser=_browser(settings, availability(settings.chromium_path)),
    )


TURN_LOG_CONNECTIONS = 1000  # per process; ElastiCache takes 65,000 clients per node


def turn_log(settings: Settings) -> TurnLog:
    """Where turns' events live for every API container: the cache's Redis Streams (also
    locally when ZEROCODE_REDIS_URL is set), or DynamoDB on AWS where there is no cache (the
    cheap profile)."""
    if settings.redis_url:
        import redis.asyncio as aioredis

        from zerocode.adapters.redis.turn_log import RedisTurnLog

        # Every follower holds a connection while it blocks (up to 5 s, RedisTurnLog.BLOCK_MS)
        # and every running turn's writer wants one: a pool that waits for a free
        # connection, not one that fails past its size (redis-py's default does, at 100,
        # which lost events at 200 streams: docs/benchmarks.md).
        pool = aioredis.BlockingConnectionPool.from_url(
            settings.redis_url,
            max_connections=TURN_LOG_CONNECTIONS,
            timeout=20,
            socket_timeout=15,
            socket_connect_timeout=2,
        )
        client = aioredis.Redis(connection_pool=pool)
        return RedisTurnLog(client)
    from zerocode.adapters.dynamodb.turn_log import DynamoTurnLog

    return DynamoTurnLog(aws_client("dynamodb", settings), settings.turn_events_table)


def _browser(settings: Settings, available: str) -> str:
    """The banner's and /api/health's word on covers and the runtime check."""
    if not settings.covers:
        return "off (ZEROCODE_COVERS=0)"
    if not settings.runtime_check and not available.startswith("off"):
        return f"{available}; the runtime check is off (ZEROCODE_RUNTIME_CHECK=0)"
    return available


def publishing(
    settings: Settings, builder: Builder | None = None, publisher: Publisher | None = None
) -> Publishing:
    """Publishing alone: what ``functions/build_events`` needs to record a build's outcome
    and publish it (the apps, builds and leases tables, the workspace bucket, CodeBuild, the
    site pointers). No accounts (Cognito), no model (and so no model key), no memory.
    Locally there is one process, which builds the whole platform."""
    if settings.mode == "aws":
        from zerocode.bootstrap.aws_wiring import aws_publishing

        return aws_publishing(settings, builder, publisher)
    return platform(settings, builder=builder, publisher=publisher).publishing


def deletion_sweep(settings: Settings, builder: Builder | None = None) -> DeletionSweep:
    """What finishing pending deletions needs (M8): the pending-deletions table and every
    store an app's data lives in. No accounts, no model key, no site pointers (an app's
    sites are taken down before its deletion is recorded as pending)."""
    if settings.mode != "aws":
        return platform(settings, builder=builder).deletion_sweep()
    from zerocode.bootstrap.aws_wiring import aws_deletion_sweep

    return aws_deletion_sweep(settings, builder)


def preview_sweep(settings: Settings) -> PreviewSweep:
    """What the preview sweep needs (AWS only: locally the pointers live in SQLite, which
    has no ceiling, so there is nothing to sweep)."""
    if settings.mode != "aws":
        raise RuntimeError("the preview sweep runs on AWS (ZEROCODE_MODE=aws) only")
    from zerocode.bootstrap.aws_wiring import aws_preview_sweep

    return aws_preview_sweep(settings)


def accounts(settings: Settings) -> AccountService:
    """The account service alone (for ``zerocode admin create``)."""
    if settings.mode == "aws":
        return cognito(settings)
    from zerocode.adapters.sqlite.database import SqliteDatabase
    from zerocode.adapters.sqlite.users import SqliteUserStore

    return Accounts(SqliteUserStore(SqliteDatabase(settings.sqlite_path)))


def workspace_limits(settings: Settings) -> WorkspaceLimits:
    return WorkspaceLimits(settings.max_file_bytes, settings.max_files)


def engine_limits(settings: Settings, *, build_ahead: bool) -> EngineLimits:
    return EngineLimits(
        max_tool_calls=settings.max_tool_calls,
        max_calls_per_step=settings.max_tool_calls_per_step,
        turn_timeout=settings.turn_timeout_seconds,
        lease_seconds=settings.turn_lease_seconds,
        repair_rounds=settings.repair_rounds,
        max_turns=settings.max_turns_per_app,
        build_ahead=build_ahead,
    )


def rate_limiter(settings: Settings) -> RateLimiter:
    """Shared through Redis when configured, else DynamoDB on AWS (several containers), else
    per process."""
    if settings.redis_url:
        from zerocode.adapters.redis.ratelimit import RedisRateLimiter

        return RedisRateLimiter.from_url(settings.redis_url)
    if settings.mode == "aws":
        from zerocode.adapters.dynamodb.ratelimit import DynamoRateLimiter

        return DynamoRateLimiter(aws_client("dynamodb", settings), settings.leases_table)
    from zerocode.adapters.inprocess.ratelimit import InProcessRateLimiter

    return InProcessRateLimiter()
