"""Each app its own origin on AWS (issue 11, point 5): with the context values
``sitesDomain`` and ``sitesCertificateArn`` the sites distribution answers for
``*.{sitesDomain}`` with that certificate, its router reads the key from the Host, and the
API names those hosts; without them the shared-origin path scheme stays. Either way the
sites answer CORS requests (the console frames previews sandboxed, an opaque origin)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from aws_cdk.assertions import Annotations, Match, Template
from zerocode_infra.config import DEFAULTS, read_config
from zerocode_infra.hosting import router_code
from zerocode_infra.stack import build_app

from tests.infra.conftest import REGION, Synth, site_router
from tests.infra.test_stack import distribution, env

DOMAIN = "apps.example.net"
CERTIFICATE = "arn:aws:acm:us-east-1:123456789012:certificate/0a1b2c3d-4e5f-6789-abcd-ef0123456789"
CORS_ALLOW_ALL = "60669652-455b-4ae9-85a4-c4c02393f86c"  # AWS managed: Managed-SimpleCORS
SITES = "zerocode published sites and previews"


@pytest.fixture(scope="module")
def synth(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Synth]:
    context = {
        **DEFAULTS,
        "region": REGION,
        "aws:cdk:bundling-stacks": [],
        "sitesDomain": DOMAIN,
        "sitesCertificateArn": CERTIFICATE,
    }
    _, stack = build_app(context, outdir=str(tmp_path_factory.mktemp("cdk.out")))
    template = Template.from_stack(stack)
    raw = dict(template.to_json())
    yield Synth(stack, template, raw["Resources"], raw)


def test_the_sites_distribution_answers_for_every_host_of_the_domain(synth: Synth) -> None:
    sites = distribution(synth, SITES)
    assert sites["Aliases"] == [f"*.{DOMAIN}"]
    assert sites["ViewerCertificate"] == {
        "AcmCertificateArn": CERTIFICATE,
        "MinimumProtocolVersion": "TLSv1.2_2021",
        "SslSupportMethod": "sni-only",
    }
    _, function = site_router(synth)
    assert function["FunctionCode"] == router_code(DOMAIN, edge_routing=True)
    assert f"const SITES_DOMAIN = '{DOMAIN}';" in router_code(DOMAIN)


def test_the_api_names_the_hosts(synth: Synth) -> None:
    variables = env(synth, "run.sh")
    assert variables["ZEROCODE_SITES_DOMAIN"] == DOMAIN
    from zerocode.bootstrap.settings import Settings

    urls = Settings(
        mode="aws",
        sites_url="https://d1.cloudfront.net",
        sites_domain=variables["ZEROCODE_SITES_DOMAIN"],
    ).site_urls()
    assert urls.site("abcdefgh1234") == f"https://abcdefgh1234.{DOMAIN}/"
    assert urls.preview("abcdefgh1234") == f"https://p-abcdefgh1234.{DOMAIN}/"
    outputs = synth.raw["Outputs"]
    assert DOMAIN in str(outputs["SitesHosts"]["Value"])


def test_sites_answer_cors_requests_from_sandboxed_previews(synth: Synth) -> None:
    sites = distribution(synth, SITES)
    for behavior in [sites["DefaultCacheBehavior"], *sites["CacheBehaviors"]]:
        if behavior.get("PathPattern") == "/_api/*":  # no CORS at all: docs/security.md
            assert "ResponseHeadersPolicyId" not in behavior
            continue
        assert behavior["ResponseHeadersPolicyId"] == CORS_ALLOW_ALL


def test_cdk_nag_has_nothing_to_say_with_a_custom_domain(synth: Synth) -> None:
    errors = Annotations.from_stack(synth.stack).find_error(
        "*", Match.string_like_regexp("AwsSolutions-.*")
    )
    assert [f"{e.id}: {e.entry.data}" for e in errors] == []
    sites_id = next(
        k
        for k, v in synth.of_type("AWS::CloudFront::Distribution").items()
        if v["Properties"]["DistributionConfig"]["Comment"] == SITES
    )
    rules = [
        r["id"]
        for r in synth.resources[sites_id]
        .get("Metadata", {})
        .get("cdk_nag", {})
        .get("rules_to_suppress", [])
    ]
    assert "AwsSolutions-CFR4" not in rules  # its own certificate, TLS 1.2 at least


class Context:
    def __init__(self, **values: Any) -> None:
        self.values = {**DEFAULTS, **values}

    def try_get_context(self, key: str) -> Any:
        return self.values.get(key)


def test_the_domain_is_checked_when_the_app_is_synthesized() -> None:
    config = read_config(
        Context(sitesDomain="Apps.Example.NET.", sitesCertificateArn=CERTIFICATE), REGION
    )
    assert (config.sites_domain, config.sites_certificate_arn) == (DOMAIN, CERTIFICATE)
    assert read_config(Context(), REGION).sites_domain == ""
    for bad in (
        {"sitesDomain": DOMAIN},  # no certificate
        {
            "sitesDomain": DOMAIN,  # CloudFront needs it in us-east-1
            "sitesCertificateArn": CERTIFICATE.replace("us-east-1", "eu-west-1"),
        },
        {"sitesCertificateArn": CERTIFICATE},  # no domain
        {"sitesDomain": "not a domain", "sitesCertificateArn": CERTIFICATE},
        {"sitesDomain": "apps.example.net'; alert(1); '", "sitesCertificateArn": CERTIFICATE},
    ):
        with pytest.raises(ValueError, match="sites"):
            read_config(Context(**bad), REGION)


def test_sites_are_sent_compressed_by_cloudfront(synth: Synth) -> None:
    """Issue 44: CloudFront compresses a site's text files (brotli or gzip, by the viewer's
    Accept-Encoding) on every behavior that serves files, and the routed cache policy keys
    on the encodings so each is kept apart; how long a browser keeps a file is the object's
    own Cache-Control, written at publish (adapters/aws/codebuild_builder.py)."""
    sites = distribution(synth, SITES)
    for behavior in [sites["DefaultCacheBehavior"], *sites["CacheBehaviors"]]:
        if behavior.get("PathPattern") == "/_api/*":  # the apps' data: never a file
            continue
        assert behavior["Compress"] is True, behavior.get("PathPattern")
    policies = synth.template.find_resources("AWS::CloudFront::CachePolicy")
    (routed,) = [
        p["Properties"]["CachePolicyConfig"]
        for p in policies.values()
        if "zerocode sites" in p["Properties"]["CachePolicyConfig"].get("Comment", "")
    ]
    keyed = routed["ParametersInCacheKeyAndForwardedToOrigin"]
    assert keyed["EnableAcceptEncodingBrotli"] is True and keyed["EnableAcceptEncodingGzip"]
