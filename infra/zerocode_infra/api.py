"""The REST API in front of ``functions/api``: routes, the Cognito authorizer, the stage.

Every integration streams (``ResponseTransferMode.STREAM``): Lambda Web Adapter runs in
``response_stream`` mode, whose output only a streaming integration understands. The routes
that follow a turn or wait for a build (``zerocode.http.long_routes``: a chat, a reattach,
a rebuild, an edit, a restore, an upload, a checks run) may take up to 15 minutes;
everything else is cut at 29 seconds (issue 42, point 2; docs/api.md, "Long requests").

The authorizer (Cognito access tokens) guards every route but those in ``PUBLIC_ROUTES``.
``GET /api/apps`` is public because ``scope=featured`` is; the function checks the caller
itself for ``scope=mine``. Chat is ``POST`` only (no GET starts a turn). Greedy
``{proxy+}`` resources send every other path to the function behind the authorizer, and
each resource the explicit routes need gets one too, so no request ever ends on a resource
without a method.
"""

from __future__ import annotations

from typing import Any

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_cognito as cognito
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from zerocode.http.long_routes import LONG_ROUTES
from zerocode_infra.auth import ACCESS_TOKEN_SCOPE
from zerocode_infra.log_groups import log_group
from zerocode_infra.nag import managed_policy, skip_checkov, suppress

PUBLIC_ROUTES = frozenset(
    {
        ("POST", "/api/users/register"),
        ("POST", "/api/users/login"),
        ("GET", "/api/health"),
        ("GET", "/api/openapi.json"),
        ("GET", "/api/docs"),
        ("GET", "/api/apps"),
    }
)
# The routes that follow a turn or wait for a build (zerocode/http/long_routes.py): the
# streaming integration's longest timeout, the API function's own.
LONG_TIMEOUT = Duration.minutes(15)
STAGE = "prod"
_ERROR_BODY = (
    '{"error": {"code": "$context.error.responseType", "message": $context.error.messageString}}'
)


class Api(Construct):
    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        handler: lambda_.IFunction,
        pool: cognito.IUserPool,
        allowed_origin: str,
        rate_limit: int,
        burst_limit: int,
        removal_policy: RemovalPolicy,
    ) -> None:
        super().__init__(scope, id)
        access_logs = log_group(self, "AccessLogs", removal_policy=removal_policy)
        self.rest_api = apigw.RestApi(
            # API Gateway's logging role is an account-wide setting other APIs may share, so
            # it outlives the stack.
            self,
            "Rest",
            description="zerocode API",
            cloud_watch_role=True,
            cloud_watch_role_removal_policy=RemovalPolicy.RETAIN,
            endpoint_types=[apigw.EndpointType.REGIONAL],
            # An image upload's form is binary: without this, API Gateway passes a request
            # body as UTF-8 text and the image's bytes would not survive; with it, the body
            # reaches the function base64-encoded (isBase64Encoded), which the Lambda Web
            # Adapter decodes. Answers stream, so they need no binary types.
            binary_media_types=["multipart/form-data"],
            deploy_options=apigw.StageOptions(
                stage_name=STAGE,
                tracing_enabled=True,
                metrics_enabled=True,
                logging_level=apigw.MethodLoggingLevel.ERROR,
                data_trace_enabled=False,
                throttling_rate_limit=rate_limit,
                throttling_burst_limit=burst_limit,
                access_log_destination=apigw.LogGroupLogDestination(access_logs),
                access_log_format=apigw.AccessLogFormat.json_with_standard_fields(
                    caller=False,
                    http_method=True,
                    ip=True,
                    protocol=True,
                    request_time=True,
                    resource_path=True,
                    response_length=True,
                    status=True,
                    user=True,
                ),
            ),
            default_cors_preflight_options=apigw.CorsOptions(
                allow_origins=[allowed_origin],
                allow_methods=apigw.Cors.ALL_METHODS,
                allow_headers=[
                    "Authorization",
                    "Content-Type",
                    "X-Zerocode-Request",
                    "Last-Event-ID",
                    "If-Match",
                ],
                allow_credentials=True,
                max_age=Duration.hours(1),
            ),
        )
        for kind in (apigw.ResponseType.DEFAULT_4_XX, apigw.ResponseType.DEFAULT_5_XX):
            # The gateway's own refusals (401 from the authorizer, 429 from throttling) in
            # the platform's error shape, readable by the console across origins.
            self.rest_api.add_gateway_response(
                f"{kind.response_type}Response",
                type=kind,
                templates={"application/json": _ERROR_BODY},
                response_headers={
                    "Access-Control-Allow-Origin": f"'{allowed_origin}'",
                    "Access-Control-Allow-Credentials": "'true'",
                },
            )
        self.authorizer = apigw.CognitoUserPoolsAuthorizer(
            self, "Cognito", cognito_user_pools=[pool], results_cache_ttl=Duration.minutes(5)
        )
        self._routes(handler)
        self._excuse_preflight()
        suppress(
            self.rest_api,
            "APIG2",
            "Requests are validated by the application itself: "
            "pydantic models check every body and parameter and "
            "answer 422 in the platform's error format.",
        )
        role = self.rest_api.node.find_child("CloudWatchRole")
        suppress(
            role,
            "IAM4",
            "API Gateway's account-level logging role needs exactly the "
            "AWS managed policy AmazonAPIGatewayPushToCloudWatchLogs, "
            "which only writes the API's own logs.",
            applies_to=[managed_policy("service-role/AmazonAPIGatewayPushToCloudWatchLogs")],
        )
        suppress(
            self.rest_api.deployment_stage,
            "APIG3",
            "Only when the waf context is off (the cheap profile): a web ACL costs a fixed "
            "monthly fee, and stage throttling and per-user rate limits in the application "
            "bound abuse. With waf on (the default) zerocode_infra/waf.py attaches one.",
        )
        skip_checkov(
            self.rest_api.deployment_stage,
            "CKV_AWS_120",
            "Every answer depends on the caller's token or streams a running turn: a stage "
            "cache keyed by path would serve one user's apps to another, and API Gateway "
            "does not cache streamed responses.",
        )

    def _routes(self, handler: lambda_.IFunction) -> None:
        stream = apigw.LambdaIntegration(
            handler,
            proxy=True,
            allow_test_invoke=False,
            response_transfer_mode=apigw.ResponseTransferMode.STREAM,
        )
        long = apigw.LambdaIntegration(
            handler,
            proxy=True,
            allow_test_invoke=False,
            timeout=LONG_TIMEOUT,
            response_transfer_mode=apigw.ResponseTransferMode.STREAM,
        )
        api = self.rest_api.root.add_resource("api")
        self._any(api, stream)
        for path in ("health", "openapi.json", "docs"):
            self._add(api.add_resource(path), "GET", stream)
        users = api.add_resource("users")
        self._add(users.add_resource("register"), "POST", stream)
        self._add(users.add_resource("login"), "POST", stream)
        self._any(users, stream)
        apps = api.add_resource("apps")
        self._add(apps, "GET", stream)
        self._add(apps, "POST", stream)
        app = apps.add_resource("{appId}")
        self._guarded(app, "ANY", stream)
        self._long_routes(app, _tree(LONG_ROUTES), stream, long)

    def _long_routes(
        self,
        parent: apigw.IResource,
        tree: dict[str, Any],
        stream: apigw.Integration,
        long: apigw.Integration,
    ) -> None:
        """The resources below ``parent`` that the long routes need: each long route's verb
        on the 15-minute integration; every resource made here answers any other verb and
        path below it on the usual one (``ANY``, ``{proxy+}`` unless a path variable is
        already its child: API Gateway allows one), so no request ends on a resource without
        a method."""
        greedy = parent.path.endswith("{proxy+}")  # takes the rest of the path itself
        if not greedy and not any(part.startswith("{") for part in tree if part != "/verbs"):
            self._any(parent, stream)
        for part, below in tree.items():
            if part == "/verbs":
                continue
            resource = parent.add_resource(part)
            self._guarded(resource, "ANY", stream)
            for verb in sorted(below.get("/verbs", ())):
                self._guarded(resource, verb, long)
            self._long_routes(resource, below, stream, long)

    def _any(self, parent: apigw.IResource, integration: apigw.Integration) -> None:
        """``{parent}/{proxy+}``: any other path below ``parent``, behind the authorizer."""
        self._guarded(parent.add_resource("{proxy+}"), "ANY", integration)

    def _add(self, resource: apigw.IResource, verb: str, integration: apigw.Integration) -> None:
        if (verb, resource.path) not in PUBLIC_ROUTES:
            self._guarded(resource, verb, integration)
            return
        method = resource.add_method(
            verb, integration, authorization_type=apigw.AuthorizationType.NONE
        )
        reason = (
            f"{verb} {resource.path} is public by design (docs/operations.md); the "
            "function authenticates the caller itself wherever a caller matters."
        )
        suppress(method, "APIG4", reason)
        suppress(method, "COG4", reason)
        skip_checkov(method, "CKV_AWS_59", reason)

    def _guarded(
        self, resource: apigw.IResource, verb: str, integration: apigw.Integration
    ) -> apigw.Method:
        return resource.add_method(
            verb,
            integration,
            authorizer=self.authorizer,
            authorization_type=apigw.AuthorizationType.COGNITO,
            authorization_scopes=[ACCESS_TOKEN_SCOPE],
        )

    def _excuse_preflight(self) -> None:
        """CORS preflight (OPTIONS) requests carry no credentials by the browser's rules."""
        for method in self.rest_api.methods:
            if method.http_method == "OPTIONS":
                for rule in ("APIG4", "COG4"):
                    suppress(
                        method,
                        rule,
                        "Browsers send CORS preflight OPTIONS requests "
                        "without credentials; the gateway answers them "
                        "itself with a mock integration.",
                    )

    @property
    def url(self) -> str:
        return self.rest_api.url


def _tree(routes: frozenset[tuple[str, str]]) -> dict[str, Any]:
    """The long routes below ``/api/apps/{app_id}`` as API Gateway's path parts
    (``{app_id}`` → ``{appId}``, a ``{path}`` that takes the rest → ``{proxy+}``), each
    node's verbs under ``/verbs``."""
    root: dict[str, Any] = {}
    for verb, path in routes:
        node = root
        parts = path.split("/")[4:]  # "", "api", "apps", "{app_id}", ...
        for part in parts:
            node = node.setdefault(_gateway_part(part), {})
        node.setdefault("/verbs", set()).add(verb)
    return root


def _gateway_part(part: str) -> str:
    if part == "{path}":
        return "{proxy+}"
    if part.startswith("{"):
        head, *rest = part.strip("{}").split("_")
        return "{" + head + "".join(w.title() for w in rest) + "}"
    return part
