"""Routing past the KeyValueStore: the pointer table and the Lambda@Edge router.

The KeyValueStore holds 5 MB, about 37,000 apps (docs/operations.md, "Site pointers: the
KeyValueStore's ceiling"). For a million sites and as many previews the source of truth of
``site:{deployKey}`` / ``preview:{previewKey}`` → ``{appId}/{buildId}`` is a DynamoDB table
(one item per pointer, ``zerocode.adapters.dynamodb.pointers``), and the KeyValueStore stays
as the hot set read by the viewer-request CloudFront Function. A key the store does not
hold goes on as ``/_edge/{kind}/{key}/{file}``; on a CloudFront cache miss the
origin-request Lambda@Edge function ``functions/edge_router/router.py`` reads the table
(through its in-memory TTL cache) and rewrites the request to the immutable build.

Lambda@Edge takes no environment variables and no layers, and must live in us-east-1:
the function is ``router.py`` with a ``config.json`` written here (table name and region,
TTLs, the cache's bound), deployed with CDK's ``EdgeFunction`` (a stack of its own in
us-east-1 when this one is elsewhere). The table therefore has a fixed name, and the
function's role may ``GetItem`` on it and nothing else.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from aws_cdk import Aws, Duration, RemovalPolicy, Stack, Token
from aws_cdk import aws_cloudfront as cloudfront
from aws_cdk import aws_dynamodb as ddb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk.aws_cloudfront import experimental
from constructs import Construct

from zerocode_infra.data import AWS_MANAGED_KEY
from zerocode_infra.nag import CUSTOM_RESOURCE_SKIPS, managed_policy, skip_checkov, suppress

ROUTER = Path(__file__).resolve().parents[2] / "functions" / "edge_router" / "router.py"
TTL_SECONDS = 30  # how long an edge environment trusts a pointer it read
NEGATIVE_TTL_SECONDS = 10  # ... and an absence (a first deploy appears within it)
MAX_ENTRIES = 100_000  # pointers held per environment (bench/routing.py: its memory)
MEMORY_MB = 256
# CloudFront keeps what it fetched for /_edge/ URIs (keyed by the public key, not the
# build) at most this long: a publish or a rollback reaches visitors within this plus TTL.
ROUTED_CACHE_SECONDS = 60
# CDK's custom resource provider that reads the edge function's version ARN from us-east-1
# (made in the stack when the stack is elsewhere).
EDGE_ARN_READER = "Custom::CrossRegionStringParameterReaderCustomResourceProvider"


class PointerRouting(Construct):
    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        removal_policy: RemovalPolicy = RemovalPolicy.RETAIN,
        replicas: tuple[str, ...] = (),
        imported: bool = False,
    ) -> None:
        """``imported``: the table an earlier deploy of this stack kept (context
        ``pointerTable=import``) is used by its name, not made again."""
        super().__init__(scope, id)
        stack = Stack.of(self)
        # Written into config.json as text: both must be known at synth, not tokens.
        assert not Token.is_unresolved(stack.region) and not Token.is_unresolved(stack.stack_name)
        self.table_name = f"{stack.stack_name}-site-pointers"
        self.table: ddb.ITable = (
            ddb.Table.from_table_name(self, "Table", self.table_name)
            if imported
            else self._table(removal_policy)
        )
        config = {
            "table": self.table_name,
            "region": stack.region,
            "ttl_seconds": TTL_SECONDS,
            "negative_ttl_seconds": NEGATIVE_TTL_SECONDS,
            "max_entries": MAX_ENTRIES,
            "replicas": list(replicas),
        }
        self.function = experimental.EdgeFunction(
            self,
            "Router",
            runtime=lambda_.Runtime.PYTHON_3_13,
            handler="router.handler",
            code=lambda_.Code.from_asset(str(bundle(config))),
            memory_size=MEMORY_MB,
            timeout=Duration.seconds(5),
            description="zerocode: /_edge/{kind}/{key}/ -> builds/{appId}/{buildId}/",
        )
        self._explain_to_checkov()
        # The table's own ARN where the function shares its stack (us-east-1); else built
        # from the fixed name (a reference across regions is not possible).
        in_us_east_1 = stack.region == "us-east-1"
        arns = (
            [self.table.table_arn]
            if in_us_east_1
            else [
                f"arn:{Aws.PARTITION}:dynamodb:{region}:{Aws.ACCOUNT_ID}:table/{self.table_name}"
                for region in (stack.region, *replicas)
            ]
        )
        self.function.add_to_role_policy(
            iam.PolicyStatement(actions=["dynamodb:GetItem"], resources=arns)
        )
        # On the function itself, wherever it lives: outside us-east-1 CDK makes it in a
        # us-east-1 stack of its own, which the EdgeFunction construct here is not a parent of.
        suppress(
            self.function.lambda_,
            "IAM4",
            "The AWS managed basic execution policy lets Lambda@Edge write the function's "
            "logs in each Region it runs in; it grants nothing else.",
            children=True,
            applies_to=[managed_policy("service-role/AWSLambdaBasicExecutionRole")],
        )
        suppress(
            self.function.lambda_,
            "L1",
            "The edge router runs Python 3.13 like every function of the platform: one "
            "runtime to track; it uses only the standard library and boto3.",
            children=True,
        )
        self.cache_policy = cloudfront.CachePolicy(
            self,
            "RoutedCache",
            comment="zerocode sites: objects kept at most a minute (publish, rollback)",
            default_ttl=Duration.seconds(ROUTED_CACHE_SECONDS),
            max_ttl=Duration.seconds(ROUTED_CACHE_SECONDS),
            min_ttl=Duration.seconds(0),
            enable_accept_encoding_gzip=True,
            enable_accept_encoding_brotli=True,
        )

    def _table(self, removal_policy: RemovalPolicy) -> ddb.Table:
        table = ddb.Table(
            self,
            "Table",
            table_name=self.table_name,
            partition_key=ddb.Attribute(name="pointer", type=ddb.AttributeType.STRING),
            billing_mode=ddb.BillingMode.PAY_PER_REQUEST,
            point_in_time_recovery_specification=ddb.PointInTimeRecoverySpecification(
                point_in_time_recovery_enabled=True
            ),
            time_to_live_attribute="expires_at",
            encryption=ddb.TableEncryption.AWS_MANAGED,
            deletion_protection=removal_policy == RemovalPolicy.RETAIN,
            removal_policy=removal_policy,
        )
        skip_checkov(table, "CKV_AWS_119", AWS_MANAGED_KEY)
        return table

    def _explain_to_checkov(self) -> None:
        """Why checkov's Lambda checks that fail on the router are accepted; outside
        us-east-1, on CDK's function that reads the router's version across regions too."""
        reader = Stack.of(self).node.try_find_child(EDGE_ARN_READER)
        handler = reader.node.try_find_child("Handler") if reader is not None else None
        if handler is not None:
            for check, reason in CUSTOM_RESOURCE_SKIPS.items():
                skip_checkov(handler, check, reason)
        # The function itself (in this stack in us-east-1, else in CDK's edge stack).
        fn = self.function.current_version.lambda_
        for check, reason in (
            (
                "CKV_AWS_117",
                "Lambda@Edge functions cannot be attached to a VPC (CloudFront's restrictions "
                "on Lambda@Edge); the router reads only the pointer table, through "
                "DynamoDB's public endpoint over TLS.",
            ),
            (
                "CKV_AWS_116",
                "CloudFront invokes the router synchronously for each origin request and "
                "answers the visitor with its result; a dead-letter queue only ever holds "
                "failed asynchronous invocations.",
            ),
            (
                "CKV_AWS_115",
                "A reservation on the router would turn a popular site into errors for its "
                "visitors; its load is bounded by CloudFront's cache misses and the "
                "Region's Lambda@Edge quotas (docs/operations.md).",
            ),
        ):
            skip_checkov(fn, check, reason)

    def publishers(self, *functions: lambda_.Function) -> None:
        """Let ``functions`` publish: the table's name in their environment, and GetItem,
        UpdateItem and DeleteItem on it, in a policy of their own (their default policies
        are near IAM's size limit, past which CDK moves statements to an overflow policy
        that the cdk-nag suppressions on them would not reach)."""
        for function in functions:
            assert function.role is not None
            function.add_environment("ZEROCODE_POINTERS_TABLE", self.table.table_name)
            iam.Policy(
                self,
                f"Publish{function.node.id}",
                roles=[function.role],
                statements=[
                    iam.PolicyStatement(
                        actions=["dynamodb:GetItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"],
                        resources=[self.table.table_arn],
                    )
                ],
            )

    def readers(self, *functions: lambda_.Function) -> None:
        """Let ``functions`` read which build a pointer serves (GetItem, nothing else)."""
        for function in functions:
            assert function.role is not None
            function.add_environment("ZEROCODE_POINTERS_TABLE", self.table.table_name)
            iam.Policy(
                self,
                f"Read{function.node.id}",
                roles=[function.role],
                statements=[
                    iam.PolicyStatement(
                        actions=["dynamodb:GetItem"], resources=[self.table.table_arn]
                    )
                ],
            )

    def edge_lambdas(self) -> list[cloudfront.EdgeLambda]:
        return [
            cloudfront.EdgeLambda(
                function_version=self.function.current_version,
                event_type=cloudfront.LambdaEdgeEventType.ORIGIN_REQUEST,
            )
        ]


def bundle(config: dict[str, object]) -> Path:
    """A directory holding the router and its configuration: the function's code."""
    directory = Path(tempfile.mkdtemp(prefix="zerocode-edge-router-"))
    shutil.copy(ROUTER, directory / "router.py")
    (directory / "config.json").write_text(json.dumps(config, sort_keys=True) + "\n")
    return directory
