"""The cheap profile (context ``profile=cheap``): no VPC, no NAT gateway, no ElastiCache.

What the default profile idles at is mostly its NAT gateway and cache (docs/operations.md,
"Idle cost: the two profiles"); this profile drops both. The functions then reach every AWS
service and the model endpoint directly, the window cache is each container's own (the
in-process LRU: correct, since every read checks the cached head against the transcript, but
colder), rate limits live in DynamoDB and so do turns' event logs (a table of their own,
only here). The default profile is tests/test_stack.py's.
"""

from __future__ import annotations

from typing import Any

import pytest
from aws_cdk.assertions import Annotations, Match

from tests.infra.conftest import Synth
from tests.infra.test_stack import (
    FUNCTIONS,
    CapturingDynamo,
    _list,
    _schema,
    all_statements,
    env,
    lambda_function,
    policy_statements,
    refs,
    role_of,
)

# What zerocode.adapters.dynamodb.turn_log calls on its table, and nothing more.
TURN_EVENTS_ACTIONS = {
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:Query",
    "dynamodb:DeleteItem",
}


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
    from tests.infra.test_stack import DEPLOY_TIME
    from zerocode.bootstrap import parts
    from zerocode.bootstrap.settings import Settings

    # ... and the Lambda@Edge router (test_edge_routing.py), which never runs in a VPC, and
    # the deploy-time functions (the build image's copier and digest reader: DEPLOY_TIME)
    functions = cheap.of_type("AWS::Lambda::Function")
    deploy_time = [f for f in functions if f.startswith(DEPLOY_TIME)]
    assert len(deploy_time) == 2 and len(functions) == len(FUNCTIONS) + 1 + len(deploy_time)
    assert not [f for f in deploy_time if "VpcConfig" in functions[f]["Properties"]]
    for handler in FUNCTIONS:
        _, fn = lambda_function(cheap, handler)
        assert "VpcConfig" not in fn, handler
        assert "ZEROCODE_REDIS_URL" not in env(cheap, handler), handler
    # ... so the platform keeps window tails in the container and rate limits in DynamoDB.
    settings = Settings(mode="aws", leases_table="t-leases")
    assert type(parts.window_cache(settings)).__name__ == "LruWindowCache"
    assert type(parts.rate_limiter(settings)).__name__ == "DynamoRateLimiter"


def test_everything_else_is_the_same_stack(cheap: Synth) -> None:
    """The API, data, builds, hosting and alarms are the default profile's; apiConcurrency=0
    (an account that cannot reserve concurrency) leaves every function without a
    reservation, the sweeps included (their timeouts keep runs apart)."""
    _, api = lambda_function(cheap, "run.sh")
    assert "ReservedConcurrentExecutions" not in api and api["MemorySize"] == 512
    for handler in FUNCTIONS:
        assert "ReservedConcurrentExecutions" not in lambda_function(cheap, handler)[1], handler
    assert env(cheap, "run.sh")["ZEROCODE_TRUST_GATEWAY_CLAIMS"] == "true"
    for handler in ("run.sh", "preview_sweep"):  # who removes previews, who puts them back
        assert env(cheap, handler)["ZEROCODE_PREVIEW_IDLE_DAYS"] == "7"
    for kind, count in (
        ("AWS::DynamoDB::Table", 11 + 1),  # and the turn-events table (below)
        ("AWS::S3::Bucket", 6),
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


def turn_events_table(cheap: Synth) -> tuple[str, dict[str, Any]]:
    (table_id,) = refs(env(cheap, "run.sh")["ZEROCODE_TURN_EVENTS_TABLE"])
    return table_id, cheap.resources[table_id]


def test_turns_event_logs_get_the_adapters_table(cheap: Synth) -> None:
    """No cache, so no Redis Streams: the API keeps turns' event logs in DynamoDB
    (zerocode.adapters.dynamodb.turn_log), in a table with the adapter's key schema, on
    demand, encrypted, expiring entries by ``expires_at`` and, a log being kept a day,
    without point-in-time recovery."""
    from zerocode.adapters.dynamodb.turn_log import create_turn_events_table

    client = CapturingDynamo()
    create_turn_events_table(client, "turn-events")
    _, table = turn_events_table(cheap)
    assert table["Type"] == "AWS::DynamoDB::Table"
    props = table["Properties"]
    assert _schema(props) == _schema(client.created["turn-events"])
    assert props["KeySchema"] == [
        {"AttributeName": "turn", "KeyType": "HASH"},
        {"AttributeName": "seq", "KeyType": "RANGE"},
    ]
    assert props["TimeToLiveSpecification"] == {"AttributeName": "expires_at", "Enabled": True}
    assert props["BillingMode"] == "PAY_PER_REQUEST"
    assert props["SSESpecification"]["SSEEnabled"] is True
    assert props["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": False}
    # The removal policy and deletion protection of every table.
    assert table["DeletionPolicy"] == "Retain" and props["DeletionProtectionEnabled"] is True
    # Only the API runs turns and relays their logs.
    for handler in FUNCTIONS:
        if handler != "run.sh":
            assert "ZEROCODE_TURN_EVENTS_TABLE" not in env(cheap, handler), handler


def test_turn_events_table_is_a_real_setting(cheap: Synth) -> None:
    from zerocode.bootstrap.settings import Settings

    if "turn_events_table" not in Settings.model_fields:
        pytest.skip("Settings.turn_events_table is not there yet (issue 24)")
    for handler in FUNCTIONS:
        names = [n for n in env(cheap, handler) if n.startswith("ZEROCODE_")]
        unknown = [
            n for n in names if n.removeprefix("ZEROCODE_").lower() not in Settings.model_fields
        ]
        assert not unknown, f"{handler}: not settings: {unknown}"


def test_only_the_api_may_use_the_turn_events_table_and_only_as_the_adapter_does(
    cheap: Synth,
) -> None:
    table_id, _ = turn_events_table(cheap)
    api_role = role_of(cheap, "run.sh")
    on_table = [
        s
        for s in policy_statements(cheap, api_role)
        if any(table_id in refs(r) for r in _list(s["Resource"]))
    ]
    assert len(on_table) == 1
    (grant,) = on_table
    assert grant["Effect"] == "Allow"
    assert set(_list(grant["Action"])) == TURN_EVENTS_ACTIONS
    # The table itself: no indexes, no streams, no other table in the same statement.
    (resource,) = _list(grant["Resource"])
    assert resource == {"Fn::GetAtt": [table_id, "Arn"]}
    # ... and no other statement of any role names the table.
    for owner, statement in all_statements(cheap):
        if any(table_id in refs(r) for r in _list(statement["Resource"])):
            assert statement is grant, owner
            assert refs(cheap.props(owner)["Roles"]) == {api_role}, owner


def test_cdk_nag_and_the_synth_are_quiet_in_the_cheap_profile(cheap: Synth) -> None:
    errors = Annotations.from_stack(cheap.stack).find_error(
        "*", Match.string_like_regexp("AwsSolutions-.*")
    )
    assert [f"{e.id}: {e.entry.data}" for e in errors] == []
    warnings = Annotations.from_stack(cheap.stack).find_warning("*", Match.any_value())
    assert [f"{w.id}: {w.entry.data}" for w in warnings] == []


def test_context_switches_reach_the_api_function(cheap: Synth) -> None:
    """``buildAhead`` and ``modelVision`` (issues 41 and 42) become the API's settings."""
    from tests.infra.test_stack import env

    variables = env(cheap, "run.sh")
    assert variables["ZEROCODE_BUILD_AHEAD"] == "true"
    assert variables["ZEROCODE_MODEL_VISION"] == "false"


def test_a_context_switch_must_say_true_or_false() -> None:
    from zerocode_infra.config import DEFAULTS, read_config

    class Node:
        def __init__(self, **values: object) -> None:
            self.values = values

        def try_get_context(self, key: str) -> object:
            return self.values.get(key)

    assert read_config(Node(), "us-east-1").build_ahead is False
    assert read_config(Node(buildAhead="TRUE"), "us-east-1").build_ahead is True
    with pytest.raises(ValueError, match="context buildAhead must be true, false or auto"):
        read_config(Node(buildAhead="sometimes"), "us-east-1")
    assert DEFAULTS["modelVision"] is True
