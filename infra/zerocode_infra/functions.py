"""The Lambda functions, their settings (``ZEROCODE_*``) and exactly the access they use.

``functions/api`` runs the ASGI app under Lambda Web Adapter in ``response_stream`` mode
(``run.sh`` starts uvicorn on 8080; the adapter waits for ``/api/health``); it alone is told
to believe the gateway's claims (``ZEROCODE_TRUST_GATEWAY_CLAIMS``), its concurrency is
reserved and bounded by the context value ``apiConcurrency``.
``functions/build_events`` records CodeBuild outcomes, unpacks a finished build's staging
archive into its output and check result, and publishes: it builds publishing
alone (``wiring.publishing``), so it has no Cognito settings or rights and cannot read the
model key; it touches DynamoDB, S3, CodeBuild and the KeyValueStore, all public endpoints,
so it runs outside the VPC, and events it fails on (or that cannot reach it) land in an
encrypted SQS queue an alarm watches. ``functions/deletion_sweep`` runs every 5 minutes and
finishes deletions that failed midway (M8, docs/invariants.md) with only the stores an app's
data lives in (``wiring.deletion_sweep``). ``functions/preview_sweep`` runs daily and removes
stale preview pointers from the KeyValueStore (``wiring.preview_sweep``). In the default
profile the API and the deletion sweep run in the VPC, where the cache is; in the ``cheap``
profile there is no VPC. All import the core layer and are traced with X-Ray.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from aws_cdk import Duration, Stack
from aws_cdk import aws_cloudfront as cloudfront
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_destinations as destinations
from aws_cdk import aws_secretsmanager as secretsmanager
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from zerocode_infra.actions import (
    COGNITO_ACTIONS,
    KVS_ACTIONS,
    PREVIEW_SWEEP_KVS_ACTIONS,
    TURN_EVENTS_ACTIONS,
)
from zerocode_infra.auth import Auth
from zerocode_infra.builds import Builds
from zerocode_infra.config import Config
from zerocode_infra.data import Tables
from zerocode_infra.data_api import grant_app_data
from zerocode_infra.keys import only_through
from zerocode_infra.log_groups import log_group
from zerocode_infra.nag import (
    KMS_GRANT_ACTIONS,
    S3_GRANT_ACTIONS,
    indexes,
    managed_policy,
    objects,
    skip_checkov,
    suppress,
)
from zerocode_infra.network import Network
from zerocode_infra.packaging import ASSET_EXCLUDE, ROOT, RUNTIME, lambda_architecture
from zerocode_infra.storage import (
    BUILDS,
    CHECKS,
    PAYLOADS,
    PREVIEW_COVERS,
    SOURCES,
    STAGING,
    VERSIONS,
    VISIT_LOGS,
    WORKSPACES,
    Storage,
    grant_object_deletes,
    grant_objects,
)

FUNCTIONS = ROOT / "functions"
SWEEP_EVERY = Duration.minutes(5)  # how long a failed deletion's data may wait at most
PREVIEW_SWEEP_EVERY = Duration.days(1)  # stale preview pointers leave the KeyValueStore
# Each sweep ends before its next run starts (timeout < schedule) and runs alone (reserved
# concurrency 1: a run EventBridge starts while another still runs waits, never overlaps).
SWEEP_TIMEOUT = Duration.minutes(4)
PREVIEW_SWEEP_TIMEOUT = Duration.minutes(10)
SWEEP_CONCURRENCY = 1
# checkov's CKV_AWS_116 (a dead-letter queue) per function: why each has none.
NO_DEAD_LETTER_QUEUE = {
    "Api": "API Gateway invokes the API synchronously and a dead-letter queue only ever "
    "receives failed asynchronous invocations, so one would stay empty forever.",
    "DataApi": "Its function URL invokes it synchronously for CloudFront, and a dead-letter "
    "queue only ever receives failed asynchronous invocations, so one would stay empty.",
    "BuildEvents": "Its failed asynchronous invocations go to the FailedBuildEvents queue "
    "through an on-failure destination, which keeps more of the failure than a dead-letter "
    "queue; checkov looks only for the older DeadLetterConfig property.",
    "DeletionSweep": "A failed scheduled run has nothing to replay: the next run five "
    "minutes later reads every pending deletion again from the deletions table.",
    "PreviewSweep": "A failed scheduled run has nothing to replay: the next daily run scans "
    "every preview pointer again, and stale pointers only wait a day longer.",
    "VisitLogs": "A log file it fails on after EventBridge's retries stays in the bucket until "
    "its one-day expiry: a queue of its events would only keep the name of a file that holds "
    "viewers' addresses, and its page views are lost either way.",
}
API_MEMORY_MB = 512  # docs/operations.md, "The API function's memory and concurrency"
DATA_API_MEMORY_MB = 512  # scrypt's 16 MiB per sign-in, and the CPU Lambda gives with it
DATA_API_TIMEOUT = Duration.seconds(30)  # CloudFront's origin read timeout by default
LWA_ENVIRONMENT = {
    "AWS_LAMBDA_EXEC_WRAPPER": "/opt/bootstrap",
    "AWS_LWA_INVOKE_MODE": "response_stream",
    "AWS_LWA_PORT": "8080",
    "AWS_LWA_READINESS_CHECK_PATH": "/api/health",
    # An init longer than Lambda's 10 s window is finished in the first request instead of
    # restarted and billed (docs/operations.md, "The API function's start").
    "AWS_LWA_ASYNC_INIT": "true",
}


@dataclass(frozen=True)
class Dependencies:
    """What the functions are wired to (built before them by the stack)."""

    config: Config
    tables: Tables
    storage: Storage
    network: Network | None  # None in the cheap profile: no VPC, no cache
    auth: Auth
    builds: Builds
    store: cloudfront.IKeyValueStore
    sites_url: str
    console_origin: str  # the console's origin, allowed by CORS
    model_key: secretsmanager.ISecret
    layer: lambda_.ILayerVersion


def environment(d: Dependencies, *, cache: bool = True) -> dict[str, str]:
    """The settings of ``zerocode.bootstrap.settings.Settings`` for AWS mode (a test checks every
    name is a real setting). ``cache``: the function uses the window cache (and runs where it
    is reachable); without a network (the cheap profile) nobody does."""
    env = {
        "ZEROCODE_MODE": "aws",
        "ZEROCODE_AWS_REGION": Stack.of(d.tables).region,
        **{
            f"ZEROCODE_{name.upper()}_TABLE": table.table_name
            for name, table in d.tables.all.items()
        },
        "ZEROCODE_WORKSPACE_BUCKET": d.storage.workspaces.bucket_name,
        "ZEROCODE_PAYLOAD_BUCKET": d.storage.payloads.bucket_name,
        "ZEROCODE_BUILDS_BUCKET": d.storage.builds.bucket_name,
        "ZEROCODE_CODEBUILD_PROJECT": d.builds.project.project_name,
        "ZEROCODE_SITES_KVS_ARN": d.store.key_value_store_arn,
        "ZEROCODE_SITES_URL": d.sites_url,
        "ZEROCODE_CORS_ORIGINS": d.console_origin,
    }
    if cache and d.network is not None:
        env["ZEROCODE_REDIS_URL"] = d.network.redis_url
    if d.config.sites_domain:  # each app its own origin (else the shared path scheme)
        env["ZEROCODE_SITES_DOMAIN"] = d.config.sites_domain
    # The preview sweep removes older previews; the API puts them back when opened.
    env["ZEROCODE_PREVIEW_IDLE_DAYS"] = str(d.config.preview_idle_days)
    # ... unless their output has expired by then (or is about to): storage.PREVIEW_TAG.
    env["ZEROCODE_PREVIEW_OUTPUT_DAYS"] = str(d.config.preview_output_days)
    return env


def api_environment(d: Dependencies) -> dict[str, str]:
    """What only the API uses on top of :func:`environment`: accounts, the model and,
    without the cache, the turn-events table."""
    env = {
        "ZEROCODE_COGNITO_USER_POOL_ID": d.auth.pool.user_pool_id,
        "ZEROCODE_COGNITO_CLIENT_ID": d.auth.client.user_pool_client_id,
        "ZEROCODE_MODEL_ROUTING": d.config.model_routing,
        "ZEROCODE_MODEL_CODE": d.config.model_code,
        "ZEROCODE_MODEL_VUE": d.config.model_vue,
        "ZEROCODE_MODEL_API_KEY_SECRET_ARN": d.model_key.secret_arn,
        # Only this function serves API Gateway through Lambda Web Adapter, so only its
        # x-amzn-request-context is the gateway's (zerocode.gateway).
        "ZEROCODE_TRUST_GATEWAY_CLAIMS": "true",
    }
    if d.config.model_base_url:  # unset: the offline scripted model
        env["ZEROCODE_MODEL_BASE_URL"] = d.config.model_base_url
        env["ZEROCODE_MODEL_VISION"] = "true" if d.config.model_vision else "false"
    env["ZEROCODE_BUILD_AHEAD"] = "true" if d.config.build_ahead else "false"
    if d.tables.turn_events is not None:  # no cache: turns' event logs live in DynamoDB
        env["ZEROCODE_TURN_EVENTS_TABLE"] = d.tables.turn_events.table_name
    return env


def data_api_environment(d: Dependencies) -> dict[str, str]:
    """The data function's settings: its tables and the sites domain, and nothing that
    names a distribution (the sites distribution has this function as an origin). Without a
    sites domain every app shares one origin and the data API answers 404 (docs/data.md)."""
    env = {
        "ZEROCODE_MODE": "aws",
        "ZEROCODE_AWS_REGION": Stack.of(d.tables).region,
        "ZEROCODE_APP_DATA_TABLE": d.tables.app_data.table_name,
        "ZEROCODE_LEASES_TABLE": d.tables.leases.table_name,  # rate limits without a cache
    }
    if d.config.in_vpc and d.network is not None:
        env["ZEROCODE_REDIS_URL"] = d.network.redis_url
    if d.config.sites_domain:
        env["ZEROCODE_SITES_DOMAIN"] = d.config.sites_domain
        env["ZEROCODE_SITES_URL"] = f"https://{d.config.sites_domain}"
    return env


def visit_logs_environment(d: Dependencies) -> dict[str, str]:
    """The visit logs function's settings: the visits table and the sites domain (which a
    log line's Host is read by); the pointer table's name comes with its read grant."""
    env = {
        "ZEROCODE_MODE": "aws",
        "ZEROCODE_AWS_REGION": Stack.of(d.tables).region,
        "ZEROCODE_VISITS_TABLE": d.tables.visits.table_name,
    }
    if d.config.sites_domain:
        env["ZEROCODE_SITES_DOMAIN"] = d.config.sites_domain
    return env


class Functions(Construct):
    def __init__(self, scope: Construct, id: str, deps: Dependencies) -> None:
        super().__init__(scope, id)
        self.deps = deps
        arch = lambda_architecture(deps.config.architecture)
        lwa = lambda_.LayerVersion.from_layer_version_arn(
            self, "WebAdapter", deps.config.lwa_layer_arn
        )
        self.api = self._function(
            "Api",
            FUNCTIONS / "api",
            "run.sh",
            arch,
            [lwa, deps.layer],
            timeout=Duration.minutes(15),
            memory=API_MEMORY_MB,
            extra_env={**api_environment(deps), **LWA_ENVIRONMENT},
            in_vpc=deps.config.in_vpc,
            concurrency=deps.config.api_concurrency or None,
        )
        # The data API of every preview and site (data_api.py puts it behind the sites
        # distribution's /_api/* and grants it what it uses). Answers are small: buffered.
        self.data_api = self._function(
            "DataApi",
            FUNCTIONS / "data_api",
            "serve.sh",
            arch,
            [lwa, deps.layer],
            timeout=DATA_API_TIMEOUT,
            memory=DATA_API_MEMORY_MB,
            extra_env={
                **LWA_ENVIRONMENT,
                "AWS_LWA_INVOKE_MODE": "buffered",
                "AWS_LWA_READINESS_CHECK_PATH": "/_health",
            },
            in_vpc=deps.config.in_vpc,  # the rate limiter is the cache where there is one
            env=data_api_environment(deps),
        )
        # apiConcurrency=0: an account that cannot reserve concurrency (quota below 100 +
        # what is reserved); the sweeps then rely on their timeout alone.
        sweeps = SWEEP_CONCURRENCY if deps.config.api_concurrency else None
        # DynamoDB, S3, CodeBuild and the KeyValueStore are public endpoints and publishing
        # uses no cache: outside the VPC (no NAT in its path, no network interfaces).
        self.build_events = self._function(
            "BuildEvents",
            FUNCTIONS / "build_events",
            "handler.handler",
            arch,
            [deps.layer],
            timeout=Duration.minutes(2),
            memory=512,
            in_vpc=False,
        )
        # Events build_events failed on after Lambda's retries, and events EventBridge could
        # not deliver: kept 14 days, encrypted, HTTPS only; an alarm fires on the first one.
        self.failed_build_events = sqs.Queue(
            self,
            "FailedBuildEvents",
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            retention_period=Duration.days(14),
        )
        suppress(
            self.failed_build_events,
            "SQS3",
            "This queue is itself the dead-letter destination of the build events "
            "function and its EventBridge rule; nothing consumes it but an operator.",
        )
        skip_checkov(
            self.failed_build_events,
            "CKV_AWS_27",
            "The queue is encrypted with SQS managed keys (SqsManagedSseEnabled); checkov "
            "looks only for KmsMasterKeyId, a KMS key the queue does not need.",
        )
        self.build_events.configure_async_invoke(
            on_failure=destinations.SqsDestination(self.failed_build_events),
            retry_attempts=2,
            max_event_age=Duration.hours(6),
        )
        self.deletion_sweep = self._function(
            "DeletionSweep",
            FUNCTIONS / "deletion_sweep",
            "handler.handler",
            arch,
            [deps.layer],
            timeout=SWEEP_TIMEOUT,
            memory=512,
            in_vpc=deps.config.in_vpc,  # it clears deleted apps' window tails in the cache
            concurrency=sweeps,
        )
        # A run that could not start within its period is dropped: the next one comes.
        self.deletion_sweep.configure_async_invoke(max_event_age=SWEEP_EVERY)
        self.sweep_schedule = events.Rule(
            self,
            "SweepSchedule",
            description="zerocode: finish pending app deletions",
            schedule=events.Schedule.rate(SWEEP_EVERY),
            targets=[targets.LambdaFunction(self.deletion_sweep, retry_attempts=0)],
        )
        self.preview_sweep = self._function(
            "PreviewSweep",
            FUNCTIONS / "preview_sweep",
            "handler.handler",
            arch,
            [deps.layer],
            timeout=PREVIEW_SWEEP_TIMEOUT,
            memory=256,
            in_vpc=False,
            cache=False,
            concurrency=sweeps,
        )
        self.preview_sweep_schedule = events.Rule(
            self,
            "PreviewSweepSchedule",
            description="zerocode: remove stale preview pointers from the KeyValueStore",
            schedule=events.Schedule.rate(PREVIEW_SWEEP_EVERY),
            targets=[targets.LambdaFunction(self.preview_sweep, retry_attempts=2)],
        )
        # The sites' visits (issue 44): each CloudFront log file counted as it arrives, then
        # deleted. Only public endpoints (S3, DynamoDB): outside the VPC.
        self.visit_logs = self._function(
            "VisitLogs",
            FUNCTIONS / "visit_logs",
            "handler.handler",
            arch,
            [deps.layer],
            timeout=Duration.minutes(5),  # a busy site's file: thousands of visitors' puts
            memory=256,
            in_vpc=False,
            env=visit_logs_environment(deps),
        )
        self.visit_logs.configure_async_invoke(retry_attempts=2)
        self.visit_logs_arrive = events.Rule(
            self,
            "VisitLogsArrive",
            description="zerocode: count the visits in each new CloudFront log file",
            event_pattern=events.EventPattern(
                source=["aws.s3"],
                detail_type=["Object Created"],
                detail={
                    "bucket": {"name": [deps.storage.visit_logs.bucket_name]},
                    "object": {"key": [{"prefix": VISIT_LOGS}]},
                },
            ),
            targets=[targets.LambdaFunction(self.visit_logs, retry_attempts=2)],
        )
        self._grant_api()
        self._grant_build_events()
        self._grant_deletion_sweep()
        self._grant_preview_sweep()
        self._grant_visit_logs()

    def _function(
        self,
        id: str,
        code: Path,
        handler: str,
        arch: lambda_.Architecture,
        layers: list[lambda_.ILayerVersion],
        *,
        timeout: Duration,
        memory: int,
        in_vpc: bool,
        cache: bool | None = None,
        extra_env: dict[str, str] | None = None,
        concurrency: int | None = None,
        env: dict[str, str] | None = None,
    ) -> lambda_.Function:
        """``in_vpc``: in the private subnets (the default profile has them); ``cache``:
        given the cache's URL (by default exactly when in the VPC, where it is reachable);
        ``env``: the function's own settings instead of :func:`environment`'s."""
        d = self.deps
        network = d.network if in_vpc else None
        if in_vpc and network is None:
            raise ValueError(f"{id} asks for the VPC, but this profile has none")
        logs_group = log_group(self, f"{id}Logs", removal_policy=d.config.removal_policy)
        function = lambda_.Function(
            self,
            id,
            runtime=RUNTIME,
            architecture=arch,
            handler=handler,
            code=lambda_.Code.from_asset(str(code), exclude=ASSET_EXCLUDE),
            layers=layers,
            timeout=timeout,
            memory_size=memory,
            tracing=lambda_.Tracing.ACTIVE,
            description=f"zerocode {id}",
            environment={
                **(
                    env
                    if env is not None
                    else environment(d, cache=in_vpc if cache is None else cache)
                ),
                **(extra_env or {}),
            },
            log_group=logs_group,
            vpc=network.vpc if network else None,
            vpc_subnets=network.subnets if network else None,
            security_groups=[network.functions_sg] if network else None,
            reserved_concurrent_executions=concurrency,
        )
        self._explain_to_checkov(function, id, in_vpc=in_vpc, concurrency=concurrency)
        suppress(
            function,
            "IAM4",
            "AWS managed Lambda execution policies grant only log "
            "writing and the VPC network interfaces Lambda needs to "
            "run the function inside the VPC.",
            children=True,
            applies_to=[
                managed_policy(f"service-role/{name}")
                for name in ("AWSLambdaBasicExecutionRole", "AWSLambdaVPCAccessExecutionRole")
            ],
        )
        suppress(
            function,
            "L1",
            "The functions run Python 3.13, not the newest runtime: the "
            "package index offered no tiktoken wheel for CPython 3.14 on "
            "Linux aarch64, and the layer installs binary wheels only.",
        )
        return function

    @staticmethod
    def _explain_to_checkov(
        function: lambda_.Function, id: str, *, in_vpc: bool, concurrency: int | None
    ) -> None:
        """Why checkov's Lambda checks that fail here are accepted (docs/security.md)."""
        skip_checkov(
            function,
            "CKV_AWS_173",
            "Lambda encrypts environment variables at rest with an AWS managed key; these "
            "hold names, URLs and switches only, never a secret (the model API key is read "
            "from Secrets Manager at run time), so a key of our own would protect nothing.",
        )
        skip_checkov(function, "CKV_AWS_116", NO_DEAD_LETTER_QUEUE[id])
        if not in_vpc:
            skip_checkov(
                function,
                "CKV_AWS_117",
                f"{id} reaches only public AWS endpoints (and, for the API, the model "
                "endpoint) over TLS and no private resource: outside a VPC it needs no NAT "
                "gateway or network interfaces, and the cheap profile has no VPC at all.",
            )
        if concurrency is None:
            skip_checkov(
                function,
                "CKV_AWS_115",
                f"{id} has no reservation: either its load is bounded elsewhere (one build "
                "event per finished build, CodeBuild's concurrent builds) or apiConcurrency=0 "
                "said the account cannot reserve any; the stage throttle still bounds the API.",
            )

    def _grant_api(self) -> None:
        d, fn = self.deps, self.api
        assert d.model_key.encryption_key is not None  # the model key's own (model_key.py)
        only_through(fn, [(d.storage.key, "s3"), (d.model_key.encryption_key, "secretsmanager")])
        for table in d.tables.all.values():
            if table not in (d.tables.checks, d.tables.app_data):  # granted below
                table.grant_read_write_data(fn)
        grant_app_data(self, fn, d.tables.app_data)  # a policy of its own
        grant_objects(fn, d.storage.workspaces, WORKSPACES)
        grant_objects(fn, d.storage.workspaces, VERSIONS)
        grant_objects(fn, d.storage.payloads, PAYLOADS)
        # Sources to build; (as the poller, like build_events) a finished build's output
        # unpacked and its check result kept, a preview's expiry tag taken off when shown
        # (builds/ and checks/; sources/ shares their one statement: the role's inline
        # policy is near IAM's size limit, and what overflows it must need no suppression).
        for prefix in (SOURCES, BUILDS, CHECKS):
            grant_objects(fn, d.storage.builds, prefix, untag=True)
        self._grant_unstaging(fn)
        # The preview covers it keeps (as the poller), serves to their owners and prunes:
        # three named object actions (listing comes with the bucket grants above).
        iam.Grant.add_to_principal(
            grantee=fn,
            actions=["s3:GetObject", "s3:PutObject", "s3:DeleteObject"],
            resource_arns=[d.storage.builds.arn_for_objects(f"{PREVIEW_COVERS}*")],
        )
        d.builds.grant(fn, "StartBuild", "BatchGetBuilds", "StopBuild")  # StopBuild: a turn stopped
        # Only the function that starts builds may get a build's scoped data credentials.
        assert fn.role is not None
        data_role = d.builds.allow_start(fn.role)
        fn.add_environment("ZEROCODE_BUILD_DATA_ROLE_ARN", data_role.role_arn)
        # A run's source goes under its session's aws:userid, which starts with this id.
        fn.add_environment("ZEROCODE_BUILD_ROLE_ID", d.builds.role_id)
        d.auth.pool.grant(fn, *COGNITO_ACTIONS)
        d.model_key.grant_read(fn)  # only the API calls the model
        self._grant_common(fn)
        # Only the API runs turns and relays their logs. Granted last: what outgrows the
        # role's inline policy goes to CDK's overflow policy (see _grant_unstaging), and
        # this statement names one table and no wildcard, so it needs no suppression there.
        if d.tables.turn_events is not None:
            d.tables.turn_events.grant(fn, *TURN_EVENTS_ACTIONS)
        # The acceptance suite's table (issue 25), last for the same reason: no index, so
        # its grant names the one table. So does the usage ledger's (issue 43).
        d.tables.checks.grant_read_write_data(fn)
        d.tables.usage.grant_read_write_data(fn)
        fn.add_environment("ZEROCODE_USAGE_TABLE", d.tables.usage.table_name)
        # The sites' visits (issue 44): read for their owners, an app's deleted with it.
        d.tables.visits.grant_read_write_data(fn)
        fn.add_environment("ZEROCODE_VISITS_TABLE", d.tables.visits.table_name)
        self._excuse_wildcards(
            fn,
            "reads and writes app workspaces, their versions, transcript payloads, build "
            "sources, outputs, checks and preview covers, unpacks and deletes staging "
            "archives under their prefixes, and queries the apps table's indexes",
            [
                objects(d.storage.workspaces, WORKSPACES),
                objects(d.storage.workspaces, VERSIONS),
                objects(d.storage.payloads, PAYLOADS),
                *(objects(d.storage.builds, p) for p in (SOURCES, STAGING, BUILDS, CHECKS)),
                objects(d.storage.builds, PREVIEW_COVERS),
                indexes(d.tables.apps),
                *KMS_GRANT_ACTIONS,
            ],
        )

    def _grant_build_events(self) -> None:
        d, fn = self.deps, self.build_events
        only_through(fn, [(d.storage.key, "s3")])
        for table in (d.tables.apps, d.tables.builds, d.tables.leases):
            table.grant_read_write_data(fn)
        # The finished build's staging archive, unpacked into builds/ (index.html last,
        # checked before publishing), checks/ and a preview's cover into preview-covers/.
        # No sources/ at all.
        self._grant_unstaging(fn)
        d.storage.builds.grant_read(fn, f"{BUILDS}*")
        for prefix in (BUILDS, CHECKS, PREVIEW_COVERS):
            d.storage.builds.grant_put(fn, f"{prefix}*")
        d.builds.grant(fn, "BatchGetBuilds")  # the outcome of the finished build
        self._grant_common(fn)
        self._excuse_wildcards(
            fn,
            "unpacks and deletes build staging archives, writes build outputs, checks and "
            "preview covers under their prefixes, and its grant on the apps table includes "
            "the table's indexes",
            [
                *(objects(d.storage.builds, p) for p in (STAGING, BUILDS, CHECKS, PREVIEW_COVERS)),
                indexes(d.tables.apps),
                *KMS_GRANT_ACTIONS,
            ],
        )

    def _grant_deletion_sweep(self) -> None:
        """Read and delete an app's data, nothing else: no site pointers (sites are taken
        down before a deletion is recorded), no builds started, no accounts, no model key."""
        d, fn = self.deps, self.deletion_sweep
        only_through(fn, [(d.storage.key, "s3")])
        for table in (
            d.tables.transcript,
            d.tables.display,
            d.tables.builds,
            d.tables.deletions,
            d.tables.checks,
        ):
            table.grant_read_write_data(fn)
        grant_app_data(self, fn, d.tables.app_data)
        for bucket, prefixes in (
            (d.storage.workspaces, (WORKSPACES, VERSIONS)),
            (d.storage.payloads, (PAYLOADS,)),
            (d.storage.builds, (SOURCES, STAGING, BUILDS, CHECKS)),
        ):
            for prefix in prefixes:
                bucket.grant_read(fn, f"{prefix}*")  # listing what to delete
                grant_object_deletes(fn, bucket, prefix)
        # Preview covers: one named action (listing comes with the bucket grants above), so
        # what outgrows the role's inline policy needs no suppression (see _grant_unstaging).
        iam.Grant.add_to_principal(
            grantee=fn,
            actions=["s3:DeleteObject"],
            resource_arns=[d.storage.builds.arn_for_objects(f"{PREVIEW_COVERS}*")],
        )
        # An app's part of the usage ledger (its owner's days stay): found, then deleted.
        # Last, for the same reason: it names one table, no index, no wildcard.
        d.tables.usage.grant_read_write_data(fn)
        fn.add_environment("ZEROCODE_USAGE_TABLE", d.tables.usage.table_name)
        d.tables.visits.grant_read_write_data(fn)  # an app's days of visits
        fn.add_environment("ZEROCODE_VISITS_TABLE", d.tables.visits.table_name)
        self._excuse_wildcards(
            fn,
            "lists and deletes an app's workspace, versions, transcript payloads, build "
            "sources, staging archives, outputs, checks and preview covers under their "
            "prefixes",
            [
                objects(d.storage.workspaces, WORKSPACES),
                objects(d.storage.workspaces, VERSIONS),
                objects(d.storage.payloads, PAYLOADS),
                *(objects(d.storage.builds, p) for p in (SOURCES, STAGING, BUILDS, CHECKS)),
                objects(d.storage.builds, PREVIEW_COVERS),
                *KMS_GRANT_ACTIONS,
            ],
        )

    def _grant_preview_sweep(self) -> None:
        """The apps table, read (is the pointer's app still there, with that key?), and the
        KeyValueStore, walked and pruned: no writes of pointers, no buckets, no accounts."""
        d, fn = self.deps, self.preview_sweep
        d.tables.apps.grant_read_data(fn)
        iam.Grant.add_to_principal(
            grantee=fn,
            actions=PREVIEW_SWEEP_KVS_ACTIONS,
            resource_arns=[d.store.key_value_store_arn],
        )
        self._excuse_wildcards(
            fn,
            "reads app records, and its read grant on the apps table includes the table's indexes",
            [indexes(d.tables.apps)],
        )

    def _grant_visit_logs(self) -> None:
        """The log files, read and deleted (nothing else of the bucket), and the visits
        table's items written and read: no other table (the pointer table's read comes from
        routing.readers), no bucket, no accounts, no model key."""
        d, fn = self.deps, self.visit_logs
        iam.Grant.add_to_principal(
            grantee=fn,
            actions=["s3:GetObject", "s3:DeleteObject"],
            resource_arns=[d.storage.visit_logs.arn_for_objects(f"{VISIT_LOGS}*")],
        )
        d.tables.visits.grant(
            fn,
            "dynamodb:GetItem",
            "dynamodb:PutItem",
            "dynamodb:UpdateItem",
            "dynamodb:Query",
            "dynamodb:BatchWriteItem",
        )
        self._excuse_wildcards(
            fn,
            "reads and deletes the sites distribution's log files under their prefix",
            [objects(d.storage.visit_logs, VISIT_LOGS)],
        )

    def _grant_unstaging(self, fn: lambda_.Function) -> None:
        """A build's staging archive: read to unpack it, then deleted; only a build puts
        one (by a presigned URL). Two named object actions, no wildcard: what outgrows
        the API role's inline policy lands in CDK's overflow managed policy, made after
        the function's cdk-nag suppressions, so it must need none. The key's decrypt
        comes with the function's other grants on the builds bucket."""
        iam.Grant.add_to_principal(
            grantee=fn,
            actions=["s3:GetObject", "s3:DeleteObject"],
            resource_arns=[self.deps.storage.builds.arn_for_objects(f"{STAGING}*")],
        )

    def _grant_common(self, fn: lambda_.Function) -> None:
        d = self.deps
        iam.Grant.add_to_principal(
            grantee=fn, actions=KVS_ACTIONS, resource_arns=[d.store.key_value_store_arn]
        )

    def _excuse_wildcards(self, fn: lambda_.Function, what: str, findings: list[str]) -> None:
        suppress(
            fn,
            "IAM5",
            f"The function {what}: object keys are per app and build, so "
            "the grants name a bucket prefix or a table's indexes, never a "
            "whole service; X-Ray trace uploads take no resource by AWS "
            "design.",
            children=True,
            applies_to=[*S3_GRANT_ACTIONS, *findings, "Resource::*"],
        )
