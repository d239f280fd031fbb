"""``ZerocodeStack``: the whole platform in one stack, and the app that checks it.

One stack because every part references the others (functions need the tables, buckets,
cache, user pool, build project and sites domain) and an operator deploys and tears
down the platform as one thing.
"""

from __future__ import annotations

import os
from typing import Any

from aws_cdk import App, Aspects, CfnOutput, Environment, Stack
from cdk_nag import AwsSolutionsChecks
from constructs import Construct

from zerocode_infra.api import Api
from zerocode_infra.auth import Auth
from zerocode_infra.builds import Builds
from zerocode_infra.config import Config, read_config
from zerocode_infra.data import Tables
from zerocode_infra.data_api import DataApi
from zerocode_infra.functions import Dependencies, Functions
from zerocode_infra.hosting import NO_WAF, Hosting
from zerocode_infra.model_key import model_key_secret
from zerocode_infra.nag import skip_checkov
from zerocode_infra.network import Network
from zerocode_infra.observability import Observability
from zerocode_infra.packaging import core_layer, lambda_architecture
from zerocode_infra.storage import Storage
from zerocode_infra.waf import CLOUDFRONT_REGION, SitesAclArn, SitesWafStack, Waf

STACK_NAME = "ZerocodeStack"


class ZerocodeStack(Stack):
    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        config: Config,
        sites_waf_apart: bool = False,
        **kwargs: Any,
    ) -> None:
        """``sites_waf_apart``: the distributions' web ACL is SitesWafStack's (outside
        us-east-1, WAF on); in us-east-1 this stack makes it itself."""
        super().__init__(scope, id, description="zerocode: AI app generator platform", **kwargs)
        policy = config.removal_policy
        # Without the cache (the cheap profile), turns' event logs need a table of their own.
        tables = Tables(self, "Data", removal_policy=policy, turn_events=not config.in_vpc)
        storage = Storage(
            self,
            "Storage",
            removal_policy=policy,
            preview_output_days=config.preview_output_days,
        )
        # The cheap profile has no VPC (and so no NAT gateway and no cache): functions reach
        # AWS and the model endpoint directly, window tails stay in each container.
        network = (
            Network(
                self,
                "Network",
                nat_gateways=config.nat_gateways,
                removal_policy=policy,
                cache_name=f"{id.lower()}-window-cache",
            )
            if config.in_vpc
            else None
        )
        auth = Auth(self, "Auth", removal_policy=policy)
        hosting = Hosting(
            self,
            "Hosting",
            builds=storage.builds,
            console=storage.console,
            logs=storage.logs,
            site_logs=storage.visit_logs,  # its visits are counted from them (issue 44)
            sites_domain=config.sites_domain,
            certificate_arn=config.sites_certificate_arn,
            removal_policy=policy,
            import_pointer_table=config.import_pointer_table,
        )
        builds = Builds(
            self, "Builds", bucket=storage.builds, key=storage.key, removal_policy=policy
        )
        console_origin = config.console_origin or hosting.console_url
        functions = Functions(
            self,
            "Functions",
            Dependencies(
                config=config,
                tables=tables,
                storage=storage,
                network=network,
                auth=auth,
                builds=builds,
                store=hosting.store,
                sites_url=hosting.sites_url,
                console_origin=console_origin,
                model_key=model_key_secret(self, removal_policy=policy),
                layer=core_layer(self, lambda_architecture(config.architecture)),
            ),
        )
        builds.route_events(functions.build_events, functions.failed_build_events)
        # Who publishes writes the pointer table, the truth the edge router reads (routing.py).
        hosting.routing.publishers(functions.api, functions.build_events)
        # A log line's site key is resolved to its app in the pointer table (issue 44).
        hosting.routing.readers(functions.visit_logs)
        DataApi(
            self,
            "DataApi",
            function=functions.data_api,
            tables=tables,
            routing=hosting.routing,
            sites=hosting.sites,
            cache=network is not None,
            removal_policy=policy,
        )
        api = Api(
            self,
            "Api",
            handler=functions.api,
            pool=auth.pool,
            allowed_origin=console_origin,
            rate_limit=config.throttle_rate_limit,
            burst_limit=config.throttle_burst_limit,
            removal_policy=policy,
        )
        if config.waf:  # the API's ACL always; the distributions' here, or SitesWafStack's
            waf = Waf(
                self,
                "Waf",
                stage_rate=config.throttle_rate_limit,
                distributions=not sites_waf_apart,
            )
            waf.protect_stage(api.rest_api.deployment_stage.stage_arn)
            apart = SitesAclArn(self, "SitesWaf", platform=id).arn if sites_waf_apart else None
            waf.protect_distributions([hosting.console, hosting.sites], apart)
        else:
            for distribution in (hosting.console, hosting.sites):
                skip_checkov(distribution, "CKV_AWS_68", NO_WAF)
        observability = Observability(
            self,
            "Observability",
            api=api.rest_api,
            project=builds.project,
            dashboard_name=f"{id}-{self.region}",
            functions={
                "Api": functions.api,
                "DataApi": functions.data_api,
                "BuildEvents": functions.build_events,
                "DeletionSweep": functions.deletion_sweep,
                "PreviewSweep": functions.preview_sweep,
                "VisitLogs": functions.visit_logs,
            },
            failed_build_events=functions.failed_build_events,
        )
        for name, value, what in (
            ("ApiUrl", f"{api.url}api/", "base URL of the HTTP API"),
            ("ConsoleUrl", hosting.console_url, "the console (upload web/ to its bucket)"),
            ("ConsoleBucket", storage.console.bucket_name, "bucket behind the console"),
            ("SitesUrl", hosting.sites_url, "published sites and previews"),
            ("SitesHosts", hosting.sites_hosts, "each preview and site: one origin"),
            ("UserPoolId", auth.pool.user_pool_id, "ZEROCODE_COGNITO_USER_POOL_ID"),
            ("UserPoolClientId", auth.client.user_pool_client_id, "ZEROCODE_COGNITO_CLIENT_ID"),
            (
                "ModelKeySecretArn",
                functions.deps.model_key.secret_arn,
                "store the model API key here",
            ),
            ("ApiFunctionName", functions.api.function_name, "the API function"),
            (
                "BuildEventsFunctionName",
                functions.build_events.function_name,
                "the build events function",
            ),
            ("DashboardName", observability.dashboard.dashboard_name, "CloudWatch"),
            (
                "FailedBuildEventsQueueUrl",
                functions.failed_build_events.queue_url,
                "build events the build events function failed on, or never got",
            ),
        ):
            CfnOutput(self, name, value=value, description=what)


def target_region(app: App) -> str:
    """``-c region=...``, else the CLI's default region, else the AWS SDK's, else us-east-1."""
    return str(
        app.node.try_get_context("region")
        or os.environ.get("CDK_DEFAULT_REGION")
        or os.environ.get("AWS_REGION")
        or os.environ.get("AWS_DEFAULT_REGION")
        or "us-east-1"
    )


def build_app(
    context: dict[str, Any] | None = None, *, nag: bool = True, outdir: str | None = None
) -> tuple[App, ZerocodeStack]:
    """The CDK app with the stack, cdk-nag's AwsSolutions checks applied."""
    app = App(context=context, outdir=outdir)
    region = target_region(app)
    config = read_config(app.node, region)
    account = os.environ.get("CDK_DEFAULT_ACCOUNT")
    # Outside us-east-1 the distributions' web ACL has a stack of its own there.
    sites_waf = (
        SitesWafStack(
            app,
            f"{STACK_NAME}-SitesWaf",
            stage_rate=config.throttle_rate_limit,
            platform=STACK_NAME,
            env=Environment(account=account, region=CLOUDFRONT_REGION),
        )
        if config.waf and region != CLOUDFRONT_REGION
        else None
    )
    stack = ZerocodeStack(
        app,
        STACK_NAME,
        config=config,
        sites_waf_apart=sites_waf is not None,
        env=Environment(account=account, region=region),
    )
    if sites_waf is not None:
        stack.add_stack_dependency(sites_waf, "the distributions' web ACL is made first")
    if nag:
        Aspects.of(app).add(AwsSolutionsChecks())
    return app, stack
