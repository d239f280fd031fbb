"""The cheap profile (context ``profile=cheap``): no VPC, no NAT gateway, no ElastiCache.

What the default profile idles at is mostly its NAT gateway and cache (docs/operations.md,
"Idle cost: the two profiles"); this profile drops both. The functions then reach every AWS
service and the model endpoint directly, the window cache is each container's own (the
in-process LRU: correct, since every read checks the cached head against the transcript, but
colder), and rate limits live in DynamoDB. The default profile is tests/test_stack.py's.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from aws_cdk.assertions import Annotations, Match, Template
from zerocode_infra.config import DEFAULTS
from zerocode_infra.stack import build_app

from tests.infra.conftest import REGION, Synth
from tests.infra.test_stack import FUNCTIONS, env, lambda_function, refs


@pytest.fixture(scope="module")
def cheap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Synth]:
    context = {
        **DEFAULTS,
        "region": REGION,
        "aws:cdk:bundling-stacks": [],
        "profile": "cheap",
        "apiConcurrency": 0,
        "previewIdleDays": "7",
    }
    _, stack = build_app(context, outdir=str(tmp_path_factory.mktemp("cdk.out")))
    template = Template.from_stack(stack)
    raw = dict(template.to_json())
    yield Synth(stack, template, raw["Resources"], raw)


def test_the_cheap_profile_has_no_network_to_pay_for(cheap: Synth) -> None:
    for kind in (
        "AWS::EC2::VPC",
        "AWS::EC2::NatGateway",
        "AWS::EC2::EIP",
        "AWS::EC2::Subnet",
        "AWS::EC2::SecurityGroup",
        "AWS::EC2::VPCEndpoint",
        "AWS::EC2::FlowLog",
        "AWS::ElastiCache::ServerlessCache",
    ):
        assert cheap.of_type(kind) == {}, kind
    kinds = {r["Type"] for r in cheap.resources.values()}
    assert not [kind for kind in kinds if kind.startswith("AWS::EC2::")]


def test_no_function_runs_in_a_vpc_or_knows_a_cache(cheap: Synth) -> None:
    from zerocode.bootstrap import wiring
    from zerocode.bootstrap.settings import Settings

    assert len(cheap.of_type("AWS::Lambda::Function")) == len(FUNCTIONS)
    for handler in FUNCTIONS:
        _, fn = lambda_function(cheap, handler)
        assert "VpcConfig" not in fn, handler
        assert "ZEROCODE_REDIS_URL" not in env(cheap, handler), handler
    # ... so the platform keeps window tails in the container and rate limits in DynamoDB.
    settings = Settings(mode="aws", leases_table="t-leases")
    assert type(wiring.window_cache(settings)).__name__ == "LruWindowCache"
    assert type(wiring.rate_limiter(settings)).__name__ == "DynamoRateLimiter"


def test_everything_else_is_the_same_stack(cheap: Synth) -> None:
    """The API, data, builds, hosting and alarms are the default profile's; apiConcurrency=0
    leaves the API function without a reservation."""
    _, api = lambda_function(cheap, "run.sh")
    assert "ReservedConcurrentExecutions" not in api and api["MemorySize"] == 512
    assert env(cheap, "run.sh")["ZEROCODE_TRUST_GATEWAY_CLAIMS"] == "true"
    for handler in ("run.sh", "preview_sweep"):  # who removes previews, who puts them back
        assert env(cheap, handler)["ZEROCODE_PREVIEW_IDLE_DAYS"] == "7"
    for kind, count in (
        ("AWS::DynamoDB::Table", 6),
        ("AWS::S3::Bucket", 5),
        ("AWS::CloudFront::Distribution", 2),
        ("AWS::CloudFront::KeyValueStore", 1),
        ("AWS::CodeBuild::Project", 1),
        ("AWS::Cognito::UserPool", 1),
        ("AWS::SQS::Queue", 1),
        ("AWS::CloudWatch::Alarm", 5 + 2 * len(FUNCTIONS)),
    ):
        assert len(cheap.of_type(kind)) == count, kind
    (rule,) = [
        r["Properties"]
        for r in cheap.of_type("AWS::Events::Rule").values()
        if r["Properties"].get("ScheduleExpression") == "rate(5 minutes)"
    ]
    assert refs(rule["Targets"][0]["Arn"]) == {lambda_function(cheap, "deletion_sweep")[0]}


def test_cdk_nag_and_the_synth_are_quiet_in_the_cheap_profile(cheap: Synth) -> None:
    errors = Annotations.from_stack(cheap.stack).find_error(
        "*", Match.string_like_regexp("AwsSolutions-.*")
    )
    assert [f"{e.id}: {e.entry.data}" for e in errors] == []
    warnings = Annotations.from_stack(cheap.stack).find_warning("*", Match.any_value())
    assert [f"{w.id}: {w.entry.data}" for w in warnings] == []
