"""The AWS adapters the composition root builds (``ZEROCODE_MODE=aws``): one client per
service and region per process, and each adapter from the settings it needs (a missing one
is named). Split from :mod:`zerocode.bootstrap.wiring` to keep it one reader's size."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from zerocode.apps.versions import VersionStore
from zerocode.bootstrap.settings import Settings
from zerocode.engine.check_suite import AcceptanceRunner
from zerocode.engine.runtime_check import RuntimeCheck
from zerocode.publishing.build_signals import BuildSignals
from zerocode.publishing.builds import Builder
from zerocode.publishing.pointers import Publisher
from zerocode.publishing.preview_covers import PreviewCoverStore
from zerocode.publishing.service import Publishing

if TYPE_CHECKING:
    from zerocode.adapters.aws.codebuild_builder import RouteLists
    from zerocode.adapters.aws.cognito_accounts import CognitoAccounts
    from zerocode.adapters.aws.s3_message_images import S3MessageImages
    from zerocode.data.end_users import EndUserStore
    from zerocode.data.in_force import BuildModels
    from zerocode.data.records import RecordStore


def build_check(settings: Settings) -> RuntimeCheck | None:
    """What each AWS build's own browser found (no browser runs in Lambda)."""
    if not settings.builds_bucket or not settings.runtime_check:
        return None
    from zerocode.adapters.aws.build_check import BuildCheckResult

    return BuildCheckResult(aws_client("s3", settings), settings.builds_bucket)


def box_acceptance(settings: Settings, publishing: Publishing) -> AcceptanceRunner | None:
    """Each suite run a checks run of the build box (no browser runs in Lambda), when the
    builds are CodeBuild's and the runtime check is on."""
    from zerocode.adapters.aws.build_acceptance import BoxAcceptance
    from zerocode.adapters.aws.codebuild_builder import CodeBuildBuilder

    builder = publishing.builder
    if not isinstance(builder, CodeBuildBuilder) or not settings.runtime_check:
        return None
    return BoxAcceptance(
        builder, shown=publishing.shown_preview_build, models=lambda: publishing.models
    )


def s3_versions(settings: Settings) -> VersionStore:
    from zerocode.adapters.aws.s3_versions import S3VersionStore

    assert settings.workspace_bucket is not None  # checked by require
    return S3VersionStore(aws_client("s3", settings), settings.workspace_bucket)


def build_signals(settings: Settings) -> BuildSignals | None:
    """Where build_events tells a run's end and a waiting turn hears it (the leases table)."""
    if not settings.leases_table:
        return None
    from zerocode.adapters.dynamodb.build_signals import DynamoBuildSignals

    return DynamoBuildSignals(aws_client("dynamodb", settings), settings.leases_table)


def codebuild(settings: Settings) -> Builder:
    from zerocode.adapters.aws.codebuild_builder import CodeBuildBuilder

    require(settings, "codebuild_project", "builds_bucket")
    assert settings.codebuild_project and settings.builds_bucket
    # Only the API function starts builds and has the build data role; build_events only
    # finishes them (a Vue build started without the role is refused with its name).
    role = settings.build_data_role_arn
    return CodeBuildBuilder(
        aws_client("codebuild", settings),
        aws_client("s3", settings),
        settings.codebuild_project,
        settings.builds_bucket,
        sts=aws_client("sts", settings) if role else None,
        data_role_arn=role,
        build_role_id=settings.build_role_id,
        signals=build_signals(settings),
        fallback_seconds=settings.build_fallback_seconds,
        routes=_routes_writer(settings),
    )


def _routes_writer(settings: Settings) -> RouteLists | None:
    """Where a deploy's prerendered routes go: the sites' KeyValueStore (site_router.js)
    and, with edge routing, the pointer table (functions/edge_router)."""
    if not settings.sites_kvs_arn:
        return None
    return _Routes(settings, settings.sites_kvs_arn)


class _Routes:
    """The route lists of the prerendered deploys, in both stores; clients made only when a
    deploy has routes, or an app had some (most builds have none)."""

    def __init__(self, settings: Settings, arn: str) -> None:
        self.settings, self.arn = settings, arn

    def put(self, app_id: str, build_id: str, routes: list[str]) -> None:
        table, kvs = self._stores()
        if table is not None:
            table.put_routes(app_id, build_id, routes)
        kvs.put_routes(app_id, build_id, routes)

    def drop(self, app_id: str, build_ids: list[str]) -> None:
        table, kvs = self._stores()
        for build_id in build_ids:
            if table is not None:
                table.drop_routes(app_id, build_id)
            kvs.drop_routes(app_id, build_id)

    def _stores(self) -> tuple[Any, Any]:
        from zerocode.adapters.aws.cloudfront_publisher import KvsPublisher
        from zerocode.adapters.dynamodb.pointers import DynamoPointerStore

        name = self.settings.pointers_table
        client = aws_client("dynamodb", self.settings) if name else None
        table = DynamoPointerStore(client, name) if name else None
        kvs = KvsPublisher(aws_client("cloudfront-keyvaluestore", self.settings), self.arn)
        return table, kvs


def site_publisher(settings: Settings) -> Publisher:
    """The KeyValueStore; with a pointer table, the table as the truth and the store as its
    hot set, bounded by a ledger of promotions in the table (``publishing.hot_set``;
    docs/operations.md, "Routing a million sites")."""
    kvs = kvs_publisher(settings)
    if not settings.pointers_table:
        return kvs
    from zerocode.adapters.aws.cloudfront_publisher import HotSetLedger
    from zerocode.adapters.dynamodb.pointers import DynamoPointerStore
    from zerocode.publishing.hot_set import HotSetPublisher

    dynamodb = aws_client("dynamodb", settings)
    table = DynamoPointerStore(dynamodb, settings.pointers_table)
    return HotSetPublisher(table, kvs, HotSetLedger(dynamodb, settings.pointers_table))


def kvs_publisher(settings: Settings) -> Publisher:
    from zerocode.adapters.aws.cloudfront_publisher import KvsPublisher

    require(settings, "sites_kvs_arn")
    assert settings.sites_kvs_arn is not None
    return KvsPublisher(aws_client("cloudfront-keyvaluestore", settings), settings.sites_kvs_arn)


def cognito(settings: Settings) -> CognitoAccounts:
    from zerocode.adapters.aws.cognito_accounts import CognitoAccounts

    require(settings, "cognito_user_pool_id", "cognito_client_id")
    assert settings.cognito_user_pool_id and settings.cognito_client_id
    return CognitoAccounts(
        aws_client("cognito-idp", settings),
        settings.cognito_user_pool_id,
        settings.cognito_client_id,
    )


def require(settings: Settings, *names: str) -> None:
    missing = [f"ZEROCODE_{n.upper()}" for n in names if not getattr(settings, n)]
    if missing:
        raise RuntimeError(f"ZEROCODE_MODE=aws needs {', '.join(missing)}")


def aws_client(service: str, settings: Settings) -> Any:
    return client(service, settings.aws_region)


@functools.cache
def client(service: str, region: str) -> Any:
    """One client per service and region per process (clients are thread-safe and costly
    to make: a Lambda container reuses them across invocations)."""
    import boto3

    return boto3.client(service, region_name=region)


@functools.cache
def model_api_key(secret_arn: str, region: str) -> str:
    """The model key from Secrets Manager, once per process: a rotated key reaches new
    containers (publish a new function version or update its configuration to force it)."""
    value = client("secretsmanager", region).get_secret_value(SecretId=secret_arn)
    secret = value.get("SecretString")
    if not secret:
        raise RuntimeError(f"secret {secret_arn} has no string value; store the model API key")
    return str(secret).strip()


def preview_cover_store(settings: Settings) -> PreviewCoverStore | None:
    """Preview covers in the builds bucket, out of builds/ (CloudFront reads only that)."""
    if not settings.builds_bucket:
        return None
    from zerocode.adapters.aws.s3_preview_covers import S3PreviewCovers

    return S3PreviewCovers(aws_client("s3", settings), settings.builds_bucket)


def app_data_stores(settings: Settings) -> tuple[RecordStore, EndUserStore, BuildModels]:
    """The apps' records, end users (and sessions) and build models: one DynamoDB table."""
    from zerocode.adapters.dynamodb.build_models import DynamoBuildModels
    from zerocode.adapters.dynamodb.end_users import DynamoEndUserStore
    from zerocode.adapters.dynamodb.records import DynamoRecordStore

    dynamodb, table = aws_client("dynamodb", settings), settings.app_data_table
    return (
        DynamoRecordStore(dynamodb, table),
        DynamoEndUserStore(dynamodb, table),
        DynamoBuildModels(dynamodb, table),
    )


def s3_message_images(settings: Settings) -> S3MessageImages:
    """The images of users' messages: ``versions/{app}/images/`` of the workspaces bucket."""
    from zerocode.adapters.aws.s3_message_images import S3MessageImages

    assert settings.workspace_bucket is not None  # checked by require
    return S3MessageImages(aws_client("s3", settings), settings.workspace_bucket)
