"""CloudFront: published sites and previews on one distribution, the console on another.

Neither is the API's site (that is API Gateway's), so a generated app can never act as a
user. Sites and previews come from the builds bucket through Origin Access Control: the
CloudFront Function ``infra/functions/site_router.js`` looks the public key up in the
KeyValueStore (``site:{deployKey}`` / ``preview:{previewKey}`` → ``appId/buildId``) and
rewrites the request to the immutable ``builds/{appId}/{buildId}/`` output. Because the
rewrite happens before the cache lookup, cached objects belong to one immutable build and
publishing or rolling back never needs an invalidation. The builds bucket lets the sites
distribution read objects under ``builds/`` and nothing else (no ``sources/``, no npm
``cache/``, no listing): CDK's own OAC grant would name every object of the bucket, so the
origin is given the bucket as an imported one (no grant) and the one statement is ours.

Where the key comes from depends on the context value ``sitesDomain``:
- set (with ``sitesCertificateArn``, a wildcard certificate): every preview and site is its
  own origin, ``https://{deployKey}.{sitesDomain}/`` and ``https://p-{previewKey}.{...}/``;
  the function reads the key from the Host, and the distribution's own domain serves nothing;
- empty: every app shares the distribution's domain, ``/sites/{deployKey}/`` and
  ``/preview/{previewKey}/`` (one origin for all apps: docs/security.md says what it costs).
"""

from __future__ import annotations

from pathlib import Path

from aws_cdk import Annotations, Aws, Duration, RemovalPolicy
from aws_cdk import aws_certificatemanager as acm
from aws_cdk import aws_cloudfront as cloudfront
from aws_cdk import aws_cloudfront_origins as origins
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3
from constructs import Construct

from zerocode_infra.nag import skip_checkov, suppress
from zerocode_infra.routing import PointerRouting
from zerocode_infra.storage import BUILDS, VISIT_LOGS

ROUTER = Path(__file__).resolve().parents[1] / "functions" / "site_router.js"
_DOMAIN_LINE = "const SITES_DOMAIN = '';"
_EDGE_LINE = "const EDGE_ROUTING = false;"
_DEFAULT_CERT = (
    "The distribution uses its default cloudfront.net domain and certificate, "
    "which pins the minimum TLS policy; operators add a custom domain with an "
    "ACM certificate and TLSv1.2_2021 later."
)
NO_WAF = (
    "Only when the waf context is off (the cheap profile): a web ACL costs a fixed monthly "
    "fee and the content is static and public. With waf on (the default) "
    "zerocode_infra/waf.py attaches one to both distributions."
)


def router_code(sites_domain: str = "", *, edge_routing: bool = False) -> str:
    """The router's source, routing by Host under ``sites_domain`` when one is given, and
    sending keys its store does not hold to the Lambda@Edge router with ``edge_routing``."""
    source = ROUTER.read_text()
    assert _DOMAIN_LINE in source and _EDGE_LINE in source
    if edge_routing:
        source = source.replace(_EDGE_LINE, "const EDGE_ROUTING = true;")
    if not sites_domain:
        return source
    assert "'" not in sites_domain and "\\" not in sites_domain
    return source.replace(_DOMAIN_LINE, f"const SITES_DOMAIN = '{sites_domain}';")


class Hosting(Construct):
    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        builds: s3.IBucket,
        console: s3.IBucket,
        logs: s3.IBucket,
        site_logs: s3.IBucket | None = None,
        sites_domain: str = "",
        certificate_arn: str = "",
        removal_policy: RemovalPolicy = RemovalPolicy.RETAIN,
        import_pointer_table: bool = False,
    ) -> None:
        super().__init__(scope, id)
        self.sites_domain = sites_domain
        # The pointer table (the truth) and the Lambda@Edge router that reads it on a
        # CloudFront cache miss for keys the KeyValueStore (the hot set) does not hold.
        self.routing = PointerRouting(
            self, "Routing", removal_policy=removal_policy, imported=import_pointer_table
        )
        self.store = cloudfront.KeyValueStore(
            self, "SitePointers", comment="zerocode site and preview pointers"
        )
        self.router = cloudfront.Function(
            self,
            "SiteRouter",
            code=cloudfront.FunctionCode.from_inline(router_code(sites_domain, edge_routing=True)),
            runtime=cloudfront.FunctionRuntime.JS_2_0,
            key_value_store=self.store,
            comment="deployKey/previewKey -> builds/{appId}/{buildId}/",
        )
        routed = [
            cloudfront.FunctionAssociation(
                function=self.router, event_type=cloudfront.FunctionEventType.VIEWER_REQUEST
            )
        ]
        # Imported, so the origin adds no bucket-wide grant (the grant is below, on builds/
        # only); the bucket's key still gets CloudFront's decrypt statement.
        build_outputs = s3.Bucket.from_bucket_attributes(
            self,
            "BuildOutputs",
            bucket_arn=builds.bucket_arn,
            bucket_name=builds.bucket_name,
            bucket_regional_domain_name=builds.bucket_regional_domain_name,
            encryption_key=builds.encryption_key,
        )
        builds_origin = origins.S3BucketOrigin.with_origin_access_control(build_outputs)
        Annotations.of(self).acknowledge_warning(
            "@aws-cdk/aws-cloudfront-origins:updateImportedBucketPolicyOac",
            "the builds bucket policy lets the sites distribution read builds/ (below)",
        )
        # The key policy names any distribution of the account (naming this one would be a
        # dependency cycle), but the bucket policy lets only this distribution read objects,
        # so no other distribution gets anything to decrypt.
        scope_of_bucket = builds.node.scope
        assert scope_of_bucket is not None
        Annotations.of(scope_of_bucket).acknowledge_warning(
            "@aws-cdk/aws-cloudfront-origins:wildcardKeyPolicyForOac",
            "the builds bucket policy admits only the sites distribution",
        )
        # The console frames previews sandboxed (an opaque origin), so even their own module
        # scripts are fetched with CORS: every response may be read by any origin (the files
        # are public, or unlisted by key, and never sent with credentials).
        cors = cloudfront.ResponseHeadersPolicy.CORS_ALLOW_ALL_ORIGINS
        certificate = (
            acm.Certificate.from_certificate_arn(self, "SitesCertificate", certificate_arn)
            if sites_domain
            else None
        )
        self.sites = cloudfront.Distribution(
            self,
            "Sites",
            comment="zerocode published sites and previews",
            price_class=cloudfront.PriceClass.PRICE_CLASS_100,
            enable_logging=True,
            # Its visits are counted from these logs (issue 44; functions/visit_logs): in a
            # bucket of their own that keeps them only until they are counted.
            log_bucket=site_logs or logs,
            log_file_prefix=VISIT_LOGS if site_logs is not None else "cloudfront/sites/",
            default_behavior=cloudfront.BehaviorOptions(  # a site (a preview by its Host)
                origin=builds_origin,
                function_associations=routed,
                edge_lambdas=self.routing.edge_lambdas(),
                viewer_protocol_policy=cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
                # /_edge/ objects are cached by key, not by build: kept a minute at most
                cache_policy=self.routing.cache_policy,
                response_headers_policy=cors,
            ),
            additional_behaviors={
                "/preview/*": cloudfront.BehaviorOptions(
                    origin=builds_origin,
                    function_associations=routed,
                    edge_lambdas=self.routing.edge_lambdas(),
                    viewer_protocol_policy=cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
                    cache_policy=cloudfront.CachePolicy.CACHING_DISABLED,
                    response_headers_policy=cors,
                )
            },
            domain_names=[f"*.{sites_domain}"] if sites_domain else None,
            certificate=certificate,
            minimum_protocol_version=cloudfront.SecurityPolicyProtocol.TLS_V1_2_2021
            if sites_domain
            else None,
        )
        builds.add_to_resource_policy(
            iam.PolicyStatement(
                sid="SitesReadBuildOutputs",
                principals=[iam.ServicePrincipal("cloudfront.amazonaws.com")],
                actions=["s3:GetObject"],
                resources=[builds.arn_for_objects(f"{BUILDS}*")],
                conditions={
                    "StringEquals": {
                        "AWS:SourceArn": f"arn:{Aws.PARTITION}:cloudfront::{Aws.ACCOUNT_ID}:"
                        f"distribution/{self.sites.distribution_id}"
                    }
                },
            )
        )
        self.console = cloudfront.Distribution(
            self,
            "Console",
            comment="zerocode console",
            default_root_object="index.html",
            price_class=cloudfront.PriceClass.PRICE_CLASS_100,
            enable_logging=True,
            log_bucket=logs,
            log_file_prefix="cloudfront/console/",
            default_behavior=cloudfront.BehaviorOptions(
                origin=origins.S3BucketOrigin.with_origin_access_control(console),
                viewer_protocol_policy=cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
                cache_policy=cloudfront.CachePolicy.CACHING_OPTIMIZED,
                response_headers_policy=self._console_headers(sites_domain),
            ),
        )
        for distribution in (self.console, *(() if sites_domain else (self.sites,))):
            suppress(distribution, "CFR4", _DEFAULT_CERT)
            skip_checkov(distribution, "CKV_AWS_174", _DEFAULT_CERT)
            suppress(distribution, "CFR2", NO_WAF)
        suppress(
            self.sites,
            "CFR1",
            "Published apps are meant to be shareable with anyone; "
            "restricting countries is an operator's policy decision.",
        )
        suppress(
            self.console,
            "CFR1",
            "The console serves every signed-up user wherever they "
            "are; restricting countries is an operator's decision.",
        )

    def _console_headers(self, sites_domain: str | None) -> cloudfront.ResponseHeadersPolicy:
        """The console's security headers, as `zerocode serve` sends them locally
        (zerocode/http/headers.py, console_policy): a CSP that frames only the previews'
        origins, talks only to this region's API Gateway, and lets no one frame the console;
        nosniff, no referrer, HSTS."""
        frames = (
            f"https://*.{sites_domain}"
            if sites_domain
            else f"https://{self.sites.distribution_domain_name}"
        )
        csp = "; ".join(
            [
                "default-src 'self'",
                "script-src 'self'",
                "style-src 'self'",
                "img-src 'self' data: https:",
                f"frame-src {frames}",
                f"connect-src 'self' https://*.execute-api.{Aws.REGION}.amazonaws.com",
                "object-src 'none'",
                "base-uri 'none'",
                "form-action 'self'",
                "frame-ancestors 'none'",
            ]
        )
        return cloudfront.ResponseHeadersPolicy(
            self,
            "ConsoleHeaders",
            comment="zerocode console: CSP, nosniff, no referrer, HSTS, no framing",
            security_headers_behavior=cloudfront.ResponseSecurityHeadersBehavior(
                content_security_policy=cloudfront.ResponseHeadersContentSecurityPolicy(
                    content_security_policy=csp, override=True
                ),
                content_type_options=cloudfront.ResponseHeadersContentTypeOptions(override=True),
                frame_options=cloudfront.ResponseHeadersFrameOptions(
                    frame_option=cloudfront.HeadersFrameOption.DENY, override=True
                ),
                referrer_policy=cloudfront.ResponseHeadersReferrerPolicy(
                    referrer_policy=cloudfront.HeadersReferrerPolicy.NO_REFERRER, override=True
                ),
                strict_transport_security=cloudfront.ResponseHeadersStrictTransportSecurity(
                    access_control_max_age=Duration.days(365),
                    include_subdomains=True,
                    override=True,
                ),
            ),
        )

    @property
    def sites_url(self) -> str:
        return f"https://{self.sites.distribution_domain_name}"

    @property
    def sites_hosts(self) -> str:
        """Where a preview and a site are, for people."""
        if self.sites_domain:
            return (
                f"https://{{deployKey}}.{self.sites_domain}/, https://p-{{previewKey}}."
                f"{self.sites_domain}/"
            )
        return (
            f"{self.sites_url}/sites/{{deployKey}}/, {self.sites_url}/preview/{{previewKey}}/"
            " (one shared origin)"
        )

    @property
    def console_url(self) -> str:
        return f"https://{self.console.distribution_domain_name}"
