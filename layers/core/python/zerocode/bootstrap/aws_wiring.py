"""The composition root's AWS half (``wiring`` dispatches here when ZEROCODE_MODE=aws):
DynamoDB, S3, Cognito, CodeBuild, the CloudFront site pointers, and the cache's Redis when
ZEROCODE_REDIS_URL is set."""

from __future__ import annotations

from typing import Any, cast

from zerocode.accounts.usage import UsageLedger
from zerocode.apps.deletion import DeletionSweep
from zerocode.apps.storage_health import CachedProbe, Probes, StorageProbe
from zerocode.apps.versions import Versions
from zerocode.bootstrap.aws_parts import (
    app_data_stores,
    aws_client,
    box_acceptance,
    build_check,
    codebuild,
    cognito,
    kvs_publisher,
    preview_cover_store,
    require,
    s3_message_images,
    s3_versions,
    site_publisher,
)
from zerocode.bootstrap.parts import (
    budgets,
    chat_model,
    data_backend,
    engine_limits,
    memory,
    prices,
    rate_limiter,
    stores,
    turn_log,
    workspace_limits,
)
from zerocode.bootstrap.platform import Platform, purge_steps
from zerocode.bootstrap.reports import aws_reporter
from zerocode.bootstrap.settings import Settings
from zerocode.engine.model import ChatModel
from zerocode.engine.platform_checks import WithPlatformChecks, model_in_files
from zerocode.engine.turn import Engine
from zerocode.engine.turns import Turns
from zerocode.gateway import behind_gateway
from zerocode.publishing.builds import Builder, RemoteBuilder
from zerocode.publishing.eviction import DAY, PreviewSweep
from zerocode.publishing.pointers import Publisher
from zerocode.publishing.preview_covers import PreviewCovers
from zerocode.publishing.service import Publishing
from zerocode.publishing.site_visits import SiteVisits, site_app
from zerocode.publishing.visit_logs import VisitLogs
from zerocode.publishing.visits import VisitCounter, VisitStore


def aws_platform(
    settings: Settings,
    model: ChatModel | None,
    builder: Builder | None,
    publisher: Publisher | None,
) -> Platform:
    """DynamoDB, S3, Cognito, CloudFront KeyValueStore (and ElastiCache when
    ZEROCODE_REDIS_URL is set)."""
    from zerocode.adapters.dynamodb.checks import DynamoCheckStore
    from zerocode.adapters.dynamodb.deletions import DynamoPendingDeletions
    from zerocode.adapters.dynamodb.journal import DynamoJournal

    require(settings, "workspace_bucket", "cognito_user_pool_id", "cognito_client_id")
    client = aws_client("dynamodb", settings)
    transcript, display = stores(settings)
    model = model or chat_model(settings)
    publishing = aws_publishing(settings, builder, publisher)
    apps, builds, lease, workspace = (
        publishing.apps,
        publishing.builds,
        publishing.lease,
        publishing.workspace,
    )
    ledger = usage_ledger(settings, client)
    mem = memory(settings, transcript, model, usage=ledger, apps=apps)
    engine = Engine(
        memory=mem,
        display=display,
        workspace=workspace,
        preview=publishing.preview,
        model=model,
        lease=lease,
        journal=DynamoJournal(client, settings.leases_table),
        limits=engine_limits(settings, build_ahead=bool(settings.build_ahead)),
        runtime_check=build_check(settings),  # each build checks itself (zerocode.buildbox)
        versions=Versions(s3_versions(settings)),
        # The suite holds the platform's access checks of the app's data beside the model's;
        # it runs in the build box, as each build's runtime check does.
        checks=WithPlatformChecks(
            DynamoCheckStore(client, settings.checks_table), model_in_files(workspace)
        ),
        acceptance=box_acceptance(settings, publishing),
        preview_stages=publishing,
        images=s3_message_images(settings),
        usage=ledger,
        budgets=budgets(settings),
        prices=prices(settings),
    )
    pool = cognito(settings)
    rates = rate_limiter(settings)
    backend = data_backend(settings, app_data_stores(settings), rates)
    publishing.models = backend.build_models  # each build's data model, kept as it starts
    return Platform(
        settings=settings,
        apps=apps,
        memory=mem,
        display=display,
        workspace=workspace,
        model=model,
        engine=engine,
        turns=Turns(engine, turn_log(settings), shared=True),
        accounts=pool,
        rates=rates,
        backend=backend,
        deletions=DynamoPendingDeletions(client, settings.deletions_table),
        builds=builds,
        publishing=publishing,
        site_root=lambda target: None,  # CloudFront serves sites, not the API
        storage=CachedProbe(aws_storage_probe(settings, client), settings.health_probe_seconds),
        # Only under Lambda Web Adapter is x-amzn-request-context the gateway's own.
        gateway_claims=pool.user_from_gateway
        if behind_gateway(trust_claims=settings.trust_gateway_claims)
        else None,
        # Counted from CloudFront's logs by functions/visit_logs; read here.
        visits=SiteVisits(store) if (store := visit_store(settings, client)) else None,
    )


def aws_publishing(
    settings: Settings, builder: Builder | None, publisher: Publisher | None
) -> Publishing:
    from zerocode.adapters.aws.s3_workspace import S3Workspace
    from zerocode.adapters.dynamodb.apps import DynamoAppStore
    from zerocode.adapters.dynamodb.builds import DynamoBuildStore
    from zerocode.adapters.dynamodb.lease import DynamoLease

    require(settings, "workspace_bucket")
    assert settings.workspace_bucket is not None  # checked by aws_parts.require
    builder = builder or codebuild(settings)
    client = aws_client("dynamodb", settings)
    workspace = S3Workspace(
        aws_client("s3", settings),
        settings.workspace_bucket,
        limits=workspace_limits(settings),
    )
    publishing = Publishing(
        apps=DynamoAppStore(client, settings.apps_table),
        builds=DynamoBuildStore(client, settings.builds_table),
        builder=builder,
        publisher=publisher or site_publisher(settings),
        workspace=workspace,
        lease=DynamoLease(client, settings.leases_table),
        urls=settings.site_urls(),
        in_process=not isinstance(builder, RemoteBuilder),
        preview_idle_seconds=settings.preview_idle_days * DAY,  # the preview sweep's
        preview_output_seconds=(
            settings.preview_output_days * DAY if settings.preview_output_days else None
        ),
    )
    store = preview_cover_store(settings)
    if store is not None:  # each preview build takes its own (zerocode.buildbox)
        publishing.preview_covers = PreviewCovers(
            store=store, apps=publishing.apps, publisher=publishing.publisher, urls=publishing.urls
        )
    # Deploys' reports: kept in the checks table, made by the CodeBuild builder as it
    # finishes a deploy build (adapters/aws/build_report.py), read here.
    publishing.reports = aws_reporter(settings, publishing.apps, publishing.publisher, builder)
    return publishing


def aws_preview_sweep(settings: Settings) -> PreviewSweep:
    """The apps table and the KeyValueStore, nothing else."""
    from zerocode.adapters.dynamodb.apps import DynamoAppStore
    from zerocode.publishing.pointers import PointerStore

    return PreviewSweep(
        cast(PointerStore, kvs_publisher(settings)),  # KvsPublisher walks and removes
        DynamoAppStore(aws_client("dynamodb", settings), settings.apps_table),
        settings.preview_idle_days * DAY,
    )


def aws_deletion_sweep(settings: Settings, builder: Builder | None = None) -> DeletionSweep:
    """The pending-deletions table and every store an app's data lives in on AWS."""
    from zerocode.adapters.aws.s3_workspace import S3Workspace
    from zerocode.adapters.dynamodb.builds import DynamoBuildStore
    from zerocode.adapters.dynamodb.checks import DynamoCheckStore
    from zerocode.adapters.dynamodb.deletions import DynamoPendingDeletions

    require(settings, "workspace_bucket")
    assert settings.workspace_bucket is not None  # checked by aws_parts.require
    client = aws_client("dynamodb", settings)
    transcript, display = stores(settings)
    workspace = S3Workspace(
        aws_client("s3", settings),
        settings.workspace_bucket,
        limits=workspace_limits(settings),
    )
    return DeletionSweep(
        DynamoPendingDeletions(client, settings.deletions_table),
        purge_steps(
            memory(settings, transcript),
            display,
            workspace,
            builder or codebuild(settings),
            DynamoBuildStore(client, settings.builds_table),
            covers=None,
            preview_covers=preview_cover_store(settings),
            versions=s3_versions(settings),
            checks=DynamoCheckStore(client, settings.checks_table),
            # The apps' records, end users, sessions and build models, both spaces.
            records=data_backend(settings, app_data_stores(settings), rate_limiter(settings)),
            images=s3_message_images(settings),
            usage=usage_ledger(settings, client),
            visits=visit_store(settings, client),
        ),
    )


def aws_visit_logs(settings: Settings) -> VisitLogs:
    """What counting CloudFront's log files needs (``functions/visit_logs``): the log
    bucket's objects (read, deleted), the visits table and the site pointers (read)."""
    from zerocode.adapters.aws.s3_visit_logs import S3VisitLogs
    from zerocode.adapters.dynamodb.pointers import DynamoPointerStore

    require(settings, "visits_table", "pointers_table")
    assert settings.pointers_table is not None
    client = aws_client("dynamodb", settings)
    store = visit_store(settings, client)
    assert store is not None
    pointers = DynamoPointerStore(client, settings.pointers_table)
    return VisitLogs(
        S3VisitLogs(aws_client("s3", settings)),
        VisitCounter(store, site_app(pointers.target)),
        settings.site_urls(),
    )


def visit_store(settings: Settings, client: Any) -> VisitStore | None:
    """The visits table, where the stack has one (ZEROCODE_VISITS_TABLE)."""
    from zerocode.adapters.dynamodb.visits import DynamoVisitStore

    return DynamoVisitStore(client, settings.visits_table) if settings.visits_table else None


def usage_ledger(settings: Settings, client: Any) -> UsageLedger | None:
    """The usage ledger's table, where the stack has one (ZEROCODE_USAGE_TABLE)."""
    from zerocode.adapters.dynamodb.usage import DynamoUsageLedger

    return DynamoUsageLedger(client, settings.usage_table) if settings.usage_table else None


def aws_storage_probe(settings: Settings, client: Any) -> Probes:
    """Every store the API writes on AWS: the leases table, the workspaces bucket, and the
    cache when there is one (the default profile's ElastiCache)."""
    from zerocode.adapters.aws.s3_health import S3StorageProbe
    from zerocode.adapters.dynamodb.health import DynamoStorageProbe

    assert settings.workspace_bucket is not None  # checked by require
    probes: list[StorageProbe] = [
        DynamoStorageProbe(client, settings.leases_table),
        S3StorageProbe(aws_client("s3", settings), settings.workspace_bucket),
    ]
    if settings.redis_url:
        from zerocode.adapters.redis.health import RedisStorageProbe

        probes.append(RedisStorageProbe.from_url(settings.redis_url))
    return Probes(*probes)
