"""The parts both modes build from the settings alike, each choosing its adapter: the
transcript and display stores, memory and its window cache, the chat model, the turn log,
the rate limiter, the limits and the apps' backend. Apart from
:mod:`zerocode.bootstrap.wiring` so that its AWS half (``aws_wiring``) uses them without the
two importing each other."""

from __future__ import annotations

from zerocode.accounts.ratelimit import RateLimiter
from zerocode.accounts.usage import Budgets, Price, UsageLedger
from zerocode.apps.records import AppStore
from zerocode.apps.workspace import WorkspaceLimits
from zerocode.bootstrap.aws_parts import aws_client, model_api_key
from zerocode.bootstrap.settings import Settings
from zerocode.data.backend import Backend
from zerocode.data.end_users import EndUserLimits, EndUserStore
from zerocode.data.in_force import BuildModels
from zerocode.data.records import RecordStore
from zerocode.engine.model import ChatModel, ModelRole
from zerocode.engine.turn import EngineLimits
from zerocode.engine.turn_log import TurnLog
from zerocode.memory.cache import WindowCache
from zerocode.memory.display import DisplayHistoryStore
from zerocode.memory.facade import Memory
from zerocode.memory.transcript import TranscriptStore


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
    settings: Settings,
    transcript: TranscriptStore | None = None,
    model: ChatModel | None = None,
    *,
    usage: UsageLedger | None = None,
    apps: AppStore | None = None,
) -> Memory:
    """The memory facade; with ``window_summary`` on and a ``model``, the routing model
    writes the running summary of turns that leave the window, each request kept in the
    ``usage`` ledger for its app's owner (found in ``apps``) when both are given."""
    store = transcript if transcript is not None else stores(settings)[0]
    summarizer = None
    if settings.window_summary and model is not None:
        from zerocode.engine.summary import ModelSummarizer
        from zerocode.engine.usage import Meter

        summarizer = ModelSummarizer(
            model,
            timeout=min(30.0, settings.model_timeout_seconds),
            meter=Meter(usage, prices(settings)),
            owners=apps,
        )
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


def workspace_limits(settings: Settings) -> WorkspaceLimits:
    return WorkspaceLimits(settings.max_file_bytes, settings.max_files, settings.asset_max_bytes)


def budgets(settings: Settings) -> Budgets:
    """The accounts' token budgets (ZEROCODE_TOKENS_PER_DAY / _PER_MONTH; unset: unlimited),
    always held: an admin's budget for one account (kept in the usage ledger) holds even
    where the platform sets none."""
    return Budgets(settings.tokens_per_day, settings.tokens_per_month)


def prices(settings: Settings) -> dict[str, Price]:
    """ZEROCODE_MODEL_PRICES, checked: each model's input and output rates (and an optional
    cached rate), none negative; a ValueError names what is wrong at start-up."""
    made = {}
    for model, rates in settings.model_prices.items():
        if not {"input", "output"} <= set(rates) or not set(rates) <= {"input", "output", "cached"}:
            raise ValueError(
                f"ZEROCODE_MODEL_PRICES[{model!r}]: give input and output (and cached), in "
                "US dollars per million tokens"
            )
        if any(rate < 0 for rate in rates.values()):
            raise ValueError(f"ZEROCODE_MODEL_PRICES[{model!r}]: a price cannot be negative")
        made[model] = Price(rates["input"], rates["output"], rates.get("cached"))
    return made


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


def data_backend(
    settings: Settings,
    stores: tuple[RecordStore, EndUserStore, BuildModels],
    limiter: RateLimiter,
) -> Backend:
    """The apps' own backend over a mode's stores, bounded by the settings."""
    records, users, models = stores
    return Backend(
        records=records,
        users=users,
        build_models=models,
        limiter=limiter,
        most_records=settings.data_max_records,
        user_limits=EndUserLimits(
            failed_logins=settings.rate_login,
            attempts=settings.rate_login_address,
            window_seconds=settings.rate_login_window_seconds,
            most=settings.data_max_users,
        ),
    )
