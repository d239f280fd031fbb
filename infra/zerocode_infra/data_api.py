"""The apps' data API on AWS (issue 39, point 7): the ``/_api/*`` behavior of the sites
distribution, to the data function (``functions.Functions.data_api``) by its function URL.

- **Only CloudFront reaches it.** A function URL is public, so CloudFront adds a secret
  origin header (generated into Secrets Manager; the template holds only a dynamic
  reference to it) and the function refuses every request without it before reading
  anything (``zerocode/entrypoints/lambda_data_api.py``). Only with it does the function
  believe the viewer's Host, which the behavior's viewer-request function copies into
  ``x-zerocode-host`` (a function URL origin must get its own Host), and
  ``CloudFront-Viewer-Address``, which keys the per-visitor rate limit.
- **Nothing is cached** (caching disabled); every viewer header the API reads is forwarded
  by an origin request policy that names them, with every cookie and query string.
- **Least privilege**: the app-data table (read and write), the pointer table (GetItem),
  the secret (read), and the leases table for the rate limiter where there is no cache.
"""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_cloudfront as cloudfront
from aws_cdk import aws_cloudfront_origins as origins
from aws_cdk import aws_dynamodb as ddb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from zerocode_infra.data import Tables
from zerocode_infra.nag import indexes, skip_checkov, suppress
from zerocode_infra.packaging import ROOT
from zerocode_infra.routing import PointerRouting

VIEWER_FUNCTION = ROOT / "infra" / "functions" / "data_api_viewer.js"
ORIGIN_SECRET = "x-zerocode-origin"  # zerocode.entrypoints.lambda_data_api.ORIGIN_SECRET
# What the data API reads of a viewer's request, besides its cookies and query string.
FORWARDED_HEADERS = (
    "Origin",  # the CSRF rule: a change must come from the app's own origin
    "Content-Type",  # ... with a JSON body
    "x-zerocode-host",  # the viewer's Host, from the viewer-request function
    "x-zerocode-check",  # the platform's checks' scratch space (believed only with its MAC)
    "CloudFront-Viewer-Address",  # the per-visitor rate limit
)


# What the stores of the apps' data ask of their table (zerocode.adapters.dynamodb.records,
# end_users, build_models): item reads and writes, transactions (authorized per item
# action), batch deletes, and queries of the table and its local indexes.
APP_DATA_ACTIONS = [
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:Query",
    "dynamodb:BatchWriteItem",
]


def grant_app_data(scope: Construct, function: lambda_.Function, table: ddb.ITable) -> None:
    """``APP_DATA_ACTIONS`` on the app-data table and its indexes, in a policy of the
    function's own: the API's default policy is near IAM's size limit, past which CDK moves
    statements to an overflow policy that the function's cdk-nag suppressions do not reach."""
    assert function.role is not None
    policy = iam.Policy(
        scope,
        f"AppData{function.node.id}",
        roles=[function.role],
        statements=[
            iam.PolicyStatement(
                actions=APP_DATA_ACTIONS,
                resources=[table.table_arn, f"{table.table_arn}/index/*"],
            )
        ],
    )
    suppress(
        policy,
        "IAM5",
        "Lists query the app-data table's two local indexes (creation order, an owner's "
        "records), so the grant names the table's indexes, never another table.",
        applies_to=[indexes(table)],
    )


class DataApi(Construct):
    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        function: lambda_.Function,
        tables: Tables,
        routing: PointerRouting,
        sites: cloudfront.Distribution,
        cache: bool,
        removal_policy: RemovalPolicy,
    ) -> None:
        super().__init__(scope, id)
        self.secret = secretsmanager.Secret(
            self,
            "OriginSecret",
            description="zerocode: the header CloudFront sends the data API's function",
            removal_policy=removal_policy,
            generate_secret_string=secretsmanager.SecretStringGenerator(
                exclude_punctuation=True, password_length=48
            ),
        )
        suppress(
            self.secret,
            "SMG4",
            "The secret is shared by CloudFront's origin header and the data function; "
            "rotating it is a redeploy that writes both (docs/operations.md), not a Lambda "
            "rotation function, which could not update the distribution at the same time.",
        )
        skip_checkov(
            self.secret,
            "CKV_AWS_149",
            "The origin secret only proves a request came through CloudFront; the AWS "
            "managed key encrypts it and IAM alone decides who reads it (the data function).",
        )
        self.secret.grant_read(function)
        function.add_environment("ZEROCODE_DATA_ORIGIN_SECRET_ARN", self.secret.secret_arn)
        grant_app_data(self, function, tables.app_data)
        if not cache:  # the rate limiter's windows live in the leases table then
            tables.leases.grant_read_write_data(function)
        routing.readers(function)
        suppress(
            function,
            "IAM5",
            "The data function's only wildcard is X-Ray's: trace uploads take no resource "
            "by AWS design (its table grants name their tables and indexes).",
            children=True,
            applies_to=["Resource::*"],
        )
        self.url = function.add_function_url(auth_type=lambda_.FunctionUrlAuthType.NONE)
        skip_checkov(
            self.url,
            "CKV_AWS_258",
            "The function URL is the data API's CloudFront origin; the function refuses "
            "every request without the origin secret CloudFront adds (a Lambda URL with "
            "IAM auth through origin access control would need browsers to sign bodies).",
        )
        viewer = cloudfront.Function(
            self,
            "Viewer",
            code=cloudfront.FunctionCode.from_file(file_path=str(VIEWER_FUNCTION)),
            runtime=cloudfront.FunctionRuntime.JS_2_0,
            comment="/_api/*: the viewer's Host in x-zerocode-host",
        )
        forward = cloudfront.OriginRequestPolicy(
            self,
            "Forward",
            comment="zerocode data API: what it reads of a viewer's request",
            header_behavior=cloudfront.OriginRequestHeaderBehavior.allow_list(*FORWARDED_HEADERS),
            cookie_behavior=cloudfront.OriginRequestCookieBehavior.all(),
            query_string_behavior=cloudfront.OriginRequestQueryStringBehavior.all(),
        )
        sites.add_behavior(
            "/_api/*",
            origins.FunctionUrlOrigin(
                self.url,
                custom_headers={ORIGIN_SECRET: self.secret.secret_value.unsafe_unwrap()},
                read_timeout=Duration.seconds(30),
            ),
            allowed_methods=cloudfront.AllowedMethods.ALLOW_ALL,
            cache_policy=cloudfront.CachePolicy.CACHING_DISABLED,
            origin_request_policy=forward,
            viewer_protocol_policy=cloudfront.ViewerProtocolPolicy.HTTPS_ONLY,
            function_associations=[
                cloudfront.FunctionAssociation(
                    function=viewer, event_type=cloudfront.FunctionEventType.VIEWER_REQUEST
                )
            ],
        )
