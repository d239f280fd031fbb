"""The synthesized ZerocodeStack: what the platform relies on, checked on the template.

The app is synthesized once for the module, with bundling skipped (the layer asset points
at the source; ``make synth`` does the real pip bundling) and cdk-nag's AwsSolutions
checks applied, so the same synthesis answers the template and the cdk-nag questions.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import Stack
from aws_cdk.assertions import Annotations, Match, Template
from zerocode_infra.api import PUBLIC_ROUTES
from zerocode_infra.auth import ACCESS_TOKEN_SCOPE
from zerocode_infra.builds import FINAL_STATES
from zerocode_infra.config import DEFAULTS
from zerocode_infra.hosting import router_code
from zerocode_infra.network import Network

from tests.infra.conftest import REGION, Synth, site_router
from zerocode.http.long_routes import LONG_ROUTES

CACHING_DISABLED = "4135ea2d-6df8-44a3-9df3-4b5a84be39ad"  # AWS managed cache policy id


def refs(value: Any) -> set[str]:
    """Logical ids a CloudFormation value refers to (Ref / Fn::GetAtt, at any depth)."""
    found: set[str] = set()
    if isinstance(value, dict):
        if "Ref" in value and isinstance(value["Ref"], str):
            found.add(value["Ref"])
        if "Fn::GetAtt" in value:
            found.add(value["Fn::GetAtt"][0])
        for inner in value.values():
            found |= refs(inner)
    elif isinstance(value, list):
        for inner in value:
            found |= refs(inner)
    return found


# The functions by what the tests call them: their handler, except that build_events, the
# two sweeps and the visit logs function all run "handler.handler", so the others are asked
# for as SWEEP, PREVIEWS and VISITS.
SWEEP = "deletion_sweep"
PREVIEWS = "preview_sweep"
VISITS = "visit_logs"
_DESCRIPTIONS = {
    "run.sh": "zerocode Api",
    "handler.handler": "zerocode BuildEvents",
    SWEEP: "zerocode DeletionSweep",
    PREVIEWS: "zerocode PreviewSweep",
    "serve.sh": "zerocode DataApi",
    VISITS: "zerocode VisitLogs",
}
FUNCTIONS = tuple(_DESCRIPTIONS)


def lambda_function(synth: Synth, handler: str) -> tuple[str, dict[str, Any]]:
    return synth.one("AWS::Lambda::Function", Description=_DESCRIPTIONS[handler])


def model_key(synth: Synth) -> tuple[str, dict[str, Any]]:
    """The model API key's secret (the data API's origin secret is the other one)."""
    return synth.one("AWS::SecretsManager::Secret", Description=MODEL_KEY_DESCRIPTION)


MODEL_KEY_DESCRIPTION = "API key of the zerocode model endpoint (store the real key here)"


def function_id(synth: Synth, handler: str) -> str:
    return lambda_function(synth, handler)[0]


def env(synth: Synth, handler: str) -> dict[str, Any]:
    _, props = lambda_function(synth, handler)
    return dict(props["Environment"]["Variables"])


# -- data ------------------------------------------------------------------------------------


class CapturingDynamo:
    """Stands in for a DynamoDB client: records create_table, says every table exists."""

    def __init__(self) -> None:
        self.created: dict[str, dict[str, Any]] = {}

    def create_table(self, **params: Any) -> None:
        self.created[params["TableName"]] = params

    def get_waiter(self, name: str) -> Any:
        return type("Waiter", (), {"wait": lambda self, **kw: None})()

    def describe_time_to_live(self, **kw: Any) -> dict[str, Any]:
        return {"TimeToLiveDescription": {"TimeToLiveStatus": "ENABLED"}}


def adapter_tables() -> dict[str, dict[str, Any]]:
    from zerocode.adapters.dynamodb import (
        app_data,
        apps,
        builds,
        checks,
        deletions,
        display,
        lease,
        pointers,
        transcript,
        usage,
        visits,
    )

    client = CapturingDynamo()
    transcript.create_transcript_table(client, "transcript")
    display.create_display_table(client, "display")
    apps.create_apps_table(client, "apps")
    builds.create_builds_table(client, "builds")
    lease.create_leases_table(client, "leases")
    deletions.create_deletions_table(client, "deletions")
    checks.create_checks_table(client, "checks")
    pointers.create_pointers_table(client, "pointers")
    app_data.create_app_data_table(client, "app_data")
    usage.create_usage_table(client, "usage")
    visits.create_visits_table(client, "visits")
    return client.created


def _schema(props: dict[str, Any]) -> dict[str, Any]:
    gsis = {
        g["IndexName"]: (
            g["KeySchema"],
            g["Projection"]["ProjectionType"],
            sorted(g["Projection"].get("NonKeyAttributes", [])),
        )
        for g in props.get("GlobalSecondaryIndexes", [])
        if g["IndexName"] != LEGACY_ALL_APPS
    }
    lsis = {
        i["IndexName"]: (i["KeySchema"], i["Projection"]["ProjectionType"])
        for i in props.get("LocalSecondaryIndexes", [])
    }
    return {
        "keys": props["KeySchema"],
        "gsis": gsis,
        "lsis": lsis,
        "attributes": sorted(
            (a["AttributeName"], a["AttributeType"])
            for a in props["AttributeDefinitions"]
            if a["AttributeName"] != "all_pk"  # LEGACY_ALL_APPS's key
        ),
    }


# The one-key index the sharded one replaced: in the stack, not in the adapter, until every
# item is backfilled (docs/operations.md, "The apps table's indexes").
LEGACY_ALL_APPS = "all_apps"


def apps_indexes(synth: Synth) -> dict[str, dict[str, Any]]:
    (table_id,) = refs(env(synth, "run.sh")["ZEROCODE_APPS_TABLE"])
    table = synth.of_type("AWS::DynamoDB::Table")[table_id]["Properties"]
    return {g["IndexName"]: g for g in table["GlobalSecondaryIndexes"]}


def test_apps_indexes_are_sharded_and_project_what_their_queries_read(synth: Synth) -> None:
    """No partition key takes every app's writes: the admin list's index is keyed by the
    app's shard, and projects only what its query reads (the search filter's
    ``name_lower``), so an app's other writes do not write to it."""
    indexes = apps_indexes(synth)
    sharded = indexes["all_apps_sharded"]
    assert sharded["KeySchema"] == [
        {"AttributeName": "all_shard", "KeyType": "HASH"},
        {"AttributeName": "created_key", "KeyType": "RANGE"},
    ]
    assert sharded["Projection"] == {
        "ProjectionType": "INCLUDE",
        "NonKeyAttributes": ["name_lower"],
    }
    # Whole apps, read from the index alone (create_apps_table says why for each); none of
    # them has a partition key every app shares.
    for name, hash_key in [
        ("by_owner", "owner"),
        ("by_preview_key", "preview_key"),
        ("featured", "featured_pk"),
    ]:
        assert indexes[name]["Projection"] == {"ProjectionType": "ALL"}, name
        assert indexes[name]["KeySchema"][0] == {"AttributeName": hash_key, "KeyType": "HASH"}


def test_the_legacy_all_apps_index_is_kept_unchanged_for_the_backfill(synth: Synth) -> None:
    """A deployed stack moves in one update that adds one index (CloudFormation adds or
    removes one per update, and a changed index is both): the old one stays exactly as it
    was until every item has left it."""
    legacy = apps_indexes(synth)[LEGACY_ALL_APPS]
    assert legacy["KeySchema"] == [
        {"AttributeName": "all_pk", "KeyType": "HASH"},
        {"AttributeName": "created_key", "KeyType": "RANGE"},
    ]
    assert legacy["Projection"] == {"ProjectionType": "ALL"}
    assert len(apps_indexes(synth)) == 5


def test_tables_have_exactly_the_adapters_key_schemas(synth: Synth) -> None:
    expected = {name: _schema(params) for name, params in adapter_tables().items()}
    tables = synth.of_type("AWS::DynamoDB::Table")
    function_env = env(synth, "run.sh")
    deployed = {}
    for name in expected:
        (table_id,) = refs(function_env[f"ZEROCODE_{name.upper()}_TABLE"])
        deployed[name] = _schema(tables[table_id]["Properties"])
    assert deployed == expected
    assert len(tables) == len(expected)  # and nothing else: users live in Cognito


def test_every_table_is_on_demand_with_ttl_pitr_and_encryption(synth: Synth) -> None:
    tables = synth.of_type("AWS::DynamoDB::Table")
    assert (
        len(tables) == 11
    )  # with the usage ledger's, the visits', and the pointer table (test_edge_routing.py)
    for table_id, table in tables.items():
        props = table["Properties"]
        assert props["BillingMode"] == "PAY_PER_REQUEST", table_id
        assert props["TimeToLiveSpecification"] == {
            "AttributeName": "expires_at",
            "Enabled": True,
        }, table_id
        assert props["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}, (
            table_id
        )
        assert props["SSESpecification"]["SSEEnabled"] is True, table_id
        assert table["DeletionPolicy"] == "Retain", table_id  # the default removal policy


def test_no_turn_events_table_where_the_cache_keeps_turn_logs(synth: Synth) -> None:
    """With ElastiCache, turns' event logs are Redis Streams: no table for them, and no
    function is told one (the cheap profile's is in test_profiles.py)."""
    keys = [t["Properties"]["KeySchema"] for t in synth.of_type("AWS::DynamoDB::Table").values()]
    assert not [k for k in keys if k[0]["AttributeName"] == "turn"]
    assert "TurnEvents" not in json.dumps(synth.raw)
    for handler in FUNCTIONS:
        assert "ZEROCODE_TURN_EVENTS_TABLE" not in env(synth, handler), handler
    assert "ZEROCODE_REDIS_URL" in env(synth, "run.sh")


# -- buckets, keys, secret ---------------------------------------------------------------


def test_no_bucket_is_public_and_all_are_encrypted_and_https_only(synth: Synth) -> None:
    buckets = synth.of_type("AWS::S3::Bucket")
    assert len(buckets) == 6  # logs, visit logs, workspaces, payloads, console, builds
    policies = {
        next(iter(refs(p["Properties"]["Bucket"]))): p["Properties"]
        for p in synth.of_type("AWS::S3::BucketPolicy").values()
    }
    for bucket_id, bucket in buckets.items():
        props = bucket["Properties"]
        assert props["PublicAccessBlockConfiguration"] == {
            "BlockPublicAcls": True,
            "BlockPublicPolicy": True,
            "IgnorePublicAcls": True,
            "RestrictPublicBuckets": True,
        }, bucket_id
        rule = props["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]
        assert rule["ServerSideEncryptionByDefault"]["SSEAlgorithm"] in ("AES256", "aws:kms")
        denies = [
            s for s in policies[bucket_id]["PolicyDocument"]["Statement"] if s["Effect"] == "Deny"
        ]
        assert any(s["Condition"] == {"Bool": {"aws:SecureTransport": "false"}} for s in denies), (
            bucket_id
        )
        for statement in policies[bucket_id]["PolicyDocument"]["Statement"]:
            assert statement["Principal"] != "*" or statement["Effect"] == "Deny", bucket_id
            assert statement["Principal"] != {"AWS": "*"} or statement["Effect"] == "Deny"
    logged = [b for b in buckets.values() if "LoggingConfiguration" in b["Properties"]]
    assert len(logged) == 5  # every bucket but the log bucket itself


def test_builds_bucket_key_rotates_and_lets_only_cloudfront_decrypt(synth: Synth) -> None:
    sites_env = env(synth, "run.sh")
    (builds_id,) = refs(sites_env["ZEROCODE_BUILDS_BUCKET"])
    rule = synth.props(builds_id)["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]
    assert rule["ServerSideEncryptionByDefault"]["SSEAlgorithm"] == "aws:kms"
    (key_id,) = refs(rule["ServerSideEncryptionByDefault"]["KMSMasterKeyID"])
    key = synth.props(key_id)
    assert synth.resources[key_id]["Type"] == "AWS::KMS::Key"
    assert key["EnableKeyRotation"] is True
    cloudfront = [
        s
        for s in key["KeyPolicy"]["Statement"]
        if s.get("Principal") == {"Service": "cloudfront.amazonaws.com"}
    ]
    assert len(cloudfront) == 1 and "kms:Decrypt" in cloudfront[0]["Action"]


def test_model_key_secret_is_encrypted_with_a_customer_key(synth: Synth) -> None:
    """A key of its own (tests/infra/test_housekeeping.py: the two keys)."""
    secret_id, secret = model_key(synth)
    (key_id,) = refs(secret["KmsKeyId"])
    assert synth.resources[key_id]["Type"] == "AWS::KMS::Key"
    assert "GenerateSecretString" in secret  # a placeholder until the operator stores one
    assert refs(env(synth, "run.sh")["ZEROCODE_MODEL_API_KEY_SECRET_ARN"]) == {secret_id}
    # build_events builds publishing alone (wiring.publishing): it never reads the key.
    for handler in ("handler.handler", SWEEP, PREVIEWS):
        assert "ZEROCODE_MODEL_API_KEY_SECRET_ARN" not in env(synth, handler)


# -- network and cache -------------------------------------------------------------------


def test_cache_is_valkey_reachable_only_from_the_functions(synth: Synth) -> None:
    _, cache = synth.one("AWS::ElastiCache::ServerlessCache")
    assert cache["Engine"] == "valkey"
    (cache_sg,) = refs(cache["SecurityGroupIds"])
    function_sgs = {
        sg
        for f in synth.of_type("AWS::Lambda::Function").values()
        if "VpcConfig" in f["Properties"]
        for sg in refs(f["Properties"]["VpcConfig"]["SecurityGroupIds"])
    }
    assert len(function_sgs) == 1 and cache_sg not in function_sgs
    assert "SecurityGroupIngress" not in synth.props(cache_sg)  # no inline (CIDR) rules
    ingress = [
        r["Properties"]
        for r in synth.of_type("AWS::EC2::SecurityGroupIngress").values()
        if refs(r["Properties"]["GroupId"]) == {cache_sg}
    ]
    assert len(ingress) == 1
    assert ingress[0]["IpProtocol"] == "tcp"
    assert ingress[0]["FromPort"] == ingress[0]["ToPort"] == 6379
    assert refs(ingress[0]["SourceSecurityGroupId"]) == function_sgs
    assert not {"CidrIp", "CidrIpv6"} & set(ingress[0])
    # TLS is always on for a serverless cache; the functions must speak it.
    url = env(synth, "run.sh")["ZEROCODE_REDIS_URL"]["Fn::Join"][1]
    assert url[0] == "rediss://" and refs(url) == {
        synth.one("AWS::ElastiCache::ServerlessCache")[0]
    }


def test_vpc_has_gateway_endpoints_flow_logs_and_the_default_nat_count(synth: Synth) -> None:
    endpoints = synth.of_type("AWS::EC2::VPCEndpoint").values()
    services = {json.dumps(e["Properties"]["ServiceName"]) for e in endpoints}
    assert all(e["Properties"]["VpcEndpointType"] == "Gateway" for e in endpoints)
    assert any(".s3" in s for s in services) and any(".dynamodb" in s for s in services)
    assert len(synth.of_type("AWS::EC2::NatGateway")) == DEFAULTS["natGateways"]
    assert len(synth.of_type("AWS::EC2::FlowLog")) == 1
    # The functions that use the cache run in the VPC; the others never touch it.
    for handler in FUNCTIONS:
        _, fn = lambda_function(synth, handler)
        in_vpc = handler in ("run.sh", SWEEP, "serve.sh")  # the data API: rate limits
        assert ("VpcConfig" in fn) is in_vpc, handler
        assert ("ZEROCODE_REDIS_URL" in env(synth, handler)) is in_vpc, handler
        if in_vpc:
            assert len(fn["VpcConfig"]["SubnetIds"]) == 2


def test_nat_gateway_count_comes_from_context() -> None:
    from aws_cdk import App, RemovalPolicy

    stack = Stack(App(), "Net", env={"region": REGION})
    Network(
        stack,
        "Network",
        nat_gateways=2,
        removal_policy=RemovalPolicy.DESTROY,
        cache_name="net-cache",
    )
    Template.from_stack(stack).resource_count_is("AWS::EC2::NatGateway", 2)


# -- functions ---------------------------------------------------------------------------


def test_api_function_runs_under_lambda_web_adapter_in_stream_mode(synth: Synth) -> None:
    _, api = lambda_function(synth, "run.sh")
    assert api["Handler"] == "run.sh"
    variables = api["Environment"]["Variables"]
    assert variables["AWS_LWA_INVOKE_MODE"] == "response_stream"
    assert variables["AWS_LAMBDA_EXEC_WRAPPER"] == "/opt/bootstrap"
    assert variables["AWS_LWA_PORT"] == "8080"
    assert variables["AWS_LWA_READINESS_CHECK_PATH"] == "/api/health"
    (layer_id,) = synth.of_type("AWS::Lambda::LayerVersion")
    lwa = DEFAULTS["lwaLayerArns"]["arm64"][REGION]
    assert api["Layers"] == [lwa, {"Ref": layer_id}]
    assert api["Runtime"] == "python3.13" and api["Architectures"] == ["arm64"]
    assert api["Timeout"] == 900
    assert api["TracingConfig"] == {"Mode": "Active"}


def test_an_image_uploads_form_reaches_the_api_function_as_bytes(synth: Synth) -> None:
    """A multipart body is binary: API Gateway passes it base64-encoded (the adapter decodes
    it) instead of as UTF-8 text, which would break the image's bytes."""
    (rest,) = synth.of_type("AWS::ApiGateway::RestApi").values()
    assert rest["Properties"]["BinaryMediaTypes"] == ["multipart/form-data"]


def test_build_events_function_uses_the_core_layer_outside_the_vpc(synth: Synth) -> None:
    """It touches DynamoDB, S3, CodeBuild and the KeyValueStore (wiring.publishing: no
    cache), all public endpoints: no VPC, so no NAT gateway in its path."""
    _, fn = lambda_function(synth, "handler.handler")
    assert fn["Handler"] == "handler.handler"
    (layer_id,) = synth.of_type("AWS::Lambda::LayerVersion")
    assert fn["Layers"] == [{"Ref": layer_id}]
    assert fn["Architectures"] == ["arm64"] and fn["TracingConfig"] == {"Mode": "Active"}
    assert "AWS_LWA_INVOKE_MODE" not in fn["Environment"]["Variables"]
    assert "VpcConfig" not in fn
    assert "ZEROCODE_REDIS_URL" not in fn["Environment"]["Variables"]


def failed_events_queue(synth: Synth) -> tuple[str, dict[str, Any]]:
    ((queue_id, queue),) = synth.of_type("AWS::SQS::Queue").items()
    return queue_id, queue["Properties"]


def test_failed_build_events_land_in_an_encrypted_queue_with_an_alarm(synth: Synth) -> None:
    """Events build_events fails on (after Lambda's retries) and events EventBridge cannot
    deliver both end in one SQS queue: encrypted, HTTPS only, and alarmed on its first
    message, so a build whose outcome was never recorded is noticed."""
    queue_id, queue = failed_events_queue(synth)
    assert queue["SqsManagedSseEnabled"] is True
    assert queue["MessageRetentionPeriod"] == 14 * 86_400
    (policy,) = [
        p["Properties"]["PolicyDocument"]["Statement"]
        for p in synth.of_type("AWS::SQS::QueuePolicy").values()
        if refs(p["Properties"]["Queues"]) == {queue_id}
    ]
    assert any(
        s["Effect"] == "Deny" and s["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
        for s in policy
    )
    fn = function_id(synth, "handler.handler")
    (config,) = [  # the deletion sweep has one too (tests/infra/test_housekeeping.py)
        c["Properties"]
        for c in synth.of_type("AWS::Lambda::EventInvokeConfig").values()
        if c["Properties"]["FunctionName"] == {"Ref": fn}
    ]
    assert refs(config["DestinationConfig"]["OnFailure"]["Destination"]) == {queue_id}
    assert config["MaximumRetryAttempts"] == 2
    (rule,) = [  # the build state changes' (the other pattern is new visit logs')
        r["Properties"]
        for r in synth.of_type("AWS::Events::Rule").values()
        if "EventPattern" in r["Properties"] and "aws.codebuild" in json.dumps(r["Properties"])
    ]
    (target,) = rule["Targets"]
    assert refs(target["DeadLetterConfig"]["Arn"]) == {queue_id}
    sends = [
        s
        for s in policy_statements(synth, role_of(synth, "handler.handler"))
        if "sqs:SendMessage" in _list(s["Action"])
    ]
    assert len(sends) == 1 and refs(sends[0]["Resource"]) == {queue_id}
    (alarm,) = [
        a["Properties"]
        for a in synth.of_type("AWS::CloudWatch::Alarm").values()
        if a["Properties"].get("MetricName") == "ApproximateNumberOfMessagesVisible"
    ]
    assert alarm["Namespace"] == "AWS/SQS" and refs(alarm["Dimensions"]) == {queue_id}
    assert alarm["Threshold"] == 1
    assert alarm["ComparisonOperator"] == "GreaterThanOrEqualToThreshold"


def test_api_function_memory_and_reserved_concurrency(synth: Synth) -> None:
    """512 MB (docs/operations.md: the API's RSS stays near 200 MB with 200 streams in one
    process, and a Lambda container serves one request at a time); at most apiConcurrency
    containers, reserved for it."""
    _, api = lambda_function(synth, "run.sh")
    assert api["MemorySize"] == 512
    assert api["ReservedConcurrentExecutions"] == DEFAULTS["apiConcurrency"] == 50
    assert "ReservedConcurrentExecutions" not in lambda_function(synth, "handler.handler")[1]
    for handler in (SWEEP, PREVIEWS):  # each runs alone (tests/infra/test_housekeeping.py)
        assert lambda_function(synth, handler)[1]["ReservedConcurrentExecutions"] == 1


def test_only_the_api_function_believes_the_gateways_claims(synth: Synth) -> None:
    from zerocode.bootstrap.settings import Settings

    assert env(synth, "run.sh")["ZEROCODE_TRUST_GATEWAY_CLAIMS"] == "true"
    assert Settings(trust_gateway_claims="true").trust_gateway_claims is True
    for handler in ("handler.handler", SWEEP, PREVIEWS):
        assert "ZEROCODE_TRUST_GATEWAY_CLAIMS" not in env(synth, handler)


def test_core_layer_matches_the_functions_runtime(synth: Synth) -> None:
    _, layer = synth.one("AWS::Lambda::LayerVersion")
    assert layer["CompatibleRuntimes"] == ["python3.13"]
    assert layer["CompatibleArchitectures"] == ["arm64"]


def test_function_settings_are_real_zerocode_settings(synth: Synth) -> None:
    from zerocode.bootstrap.settings import Settings

    for handler in FUNCTIONS:
        names = [n for n in env(synth, handler) if n.startswith("ZEROCODE_")]
        unknown = [
            n for n in names if n.removeprefix("ZEROCODE_").lower() not in Settings.model_fields
        ]
        assert not unknown, f"{handler}: not settings: {unknown}"
    variables = env(synth, "run.sh")
    assert variables["ZEROCODE_MODE"] == "aws"
    # Covers and the runtime check are taken in each build (zerocode.buildbox): on.
    assert "ZEROCODE_COVERS" not in variables and "ZEROCODE_RUNTIME_CHECK" not in variables
    assert variables["ZEROCODE_AWS_REGION"] == REGION
    assert variables["ZEROCODE_MODEL_BASE_URL"] == DEFAULTS["modelBaseUrl"]
    # The default models (gpt-4o) see images; no build ahead on AWS unless asked (issue 42).
    assert variables["ZEROCODE_MODEL_VISION"] == "true"
    assert variables["ZEROCODE_BUILD_AHEAD"] == "false"
    # build_events starts no build, so it has no build data role (test_build_isolation.py),
    # and builds publishing alone (wiring.publishing): no Cognito, no model settings, no
    # gateway, and (outside the VPC) no cache.
    api_only = (
        "ZEROCODE_BUILD_AHEAD",  # only the API runs turns
        "ZEROCODE_BUILD_DATA_ROLE_ARN",
        "ZEROCODE_BUILD_ROLE_ID",
        "ZEROCODE_USAGE_TABLE",  # the API writes the usage ledger (the sweep deletes)
        "ZEROCODE_VISITS_TABLE",  # the API reads the sites' visits (and deletes an app's)
        "ZEROCODE_COGNITO_",
        "ZEROCODE_MODEL_",
        "ZEROCODE_TRUST_GATEWAY_CLAIMS",
        "ZEROCODE_REDIS_URL",
    )
    assert env(synth, "handler.handler") == {
        k: v for k, v in variables.items() if not k.startswith(("AWS_", *api_only))
    }
    assert {"ZEROCODE_COGNITO_USER_POOL_ID", "ZEROCODE_MODEL_API_KEY_SECRET_ARN"} <= set(variables)


# -- API ---------------------------------------------------------------------------------


def gateway(synth: Synth) -> dict[str, dict[str, dict[str, Any]]]:
    """Resource path -> {verb: method properties}, from the template's resource tree."""
    resources = synth.of_type("AWS::ApiGateway::Resource")

    def path(resource_id: str | None) -> str:
        if resource_id is None:
            return ""
        props = resources[resource_id]["Properties"]
        parent = props["ParentId"]
        return f"{path(parent.get('Ref'))}/{props['PathPart']}"

    tree: dict[str, dict[str, dict[str, Any]]] = {}
    for method in synth.of_type("AWS::ApiGateway::Method").values():
        props = method["Properties"]
        where = path(props["ResourceId"].get("Ref")) or "/"
        tree.setdefault(where, {})[props["HttpMethod"]] = props
    return tree


def test_routes_that_follow_a_turn_or_wait_for_a_build_stream_for_fifteen_minutes(
    synth: Synth,
) -> None:
    """Issue 42, point 2: the long routes (zerocode/http/long_routes.py, the ones OpenAPI
    marks) have the 15-minute streaming integration; every other method keeps the default
    29 s. A GET of the chat reaches the function, which answers 405: no GET starts a turn."""
    routes = gateway(synth)
    expected = {(verb, gateway_path(path)) for verb, path in LONG_ROUTES}
    long = set()
    for where, methods in routes.items():
        for verb, props in methods.items():
            if props["Integration"].get("TimeoutInMillis", 29_000) > 29_000:
                long.add((verb, where))
    assert long == expected
    for verb, where in expected:
        integration = routes[where][verb]["Integration"]
        assert integration["Type"] == "AWS_PROXY"
        assert integration["ResponseTransferMode"] == "STREAM"
        assert integration["TimeoutInMillis"] == 900_000
        assert json.dumps(integration["Uri"]).endswith('"/response-streaming-invocations"]]}')
    chat = routes["/api/apps/{appId}/chat"]
    assert set(chat) - {"OPTIONS"} == {"ANY", "POST"}
    assert "TimeoutInMillis" not in chat["ANY"]["Integration"]
    # Every path of the long routes' resources still reaches the function (no resource
    # without a method): a reattach's neighbours and a file's other verbs among them.
    for where in (
        "/api/apps/{appId}/turns/{turn}",
        "/api/apps/{appId}/turns/{turn}/{proxy+}",
        "/api/apps/{appId}/versions/{versionId}/{proxy+}",
        "/api/apps/{appId}/files/{proxy+}",
        "/api/apps/{appId}/checks/{proxy+}",
        "/api/apps/{appId}/assets/{proxy+}",
        "/api/apps/{appId}/{proxy+}",
    ):
        assert "ANY" in routes[where], where


def gateway_path(path: str) -> str:
    """A FastAPI path as the stack's resource path."""
    path = path.replace("{app_id}", "{appId}").replace("{version_id}", "{versionId}")
    return path.replace("{path}", "{proxy+}")


def test_every_route_streams_because_the_adapter_does(synth: Synth) -> None:
    for where, methods in gateway(synth).items():
        for verb, props in methods.items():
            if verb == "OPTIONS":
                assert props["Integration"]["Type"] == "MOCK"
                continue
            assert props["Integration"]["Type"] == "AWS_PROXY", (verb, where)
            assert props["Integration"]["ResponseTransferMode"] == "STREAM", (verb, where)


def test_cognito_authorizer_on_every_route_except_the_public_ones(synth: Synth) -> None:
    ((authorizer_id, authorizer),) = synth.of_type("AWS::ApiGateway::Authorizer").items()
    assert authorizer["Properties"]["Type"] == "COGNITO_USER_POOLS"
    public = set()
    for where, methods in gateway(synth).items():
        for verb, props in methods.items():
            if verb == "OPTIONS":
                assert props["AuthorizationType"] == "NONE"  # CORS preflight
            elif props["AuthorizationType"] == "NONE":
                public.add((verb, where))
            else:
                assert props["AuthorizationType"] == "COGNITO_USER_POOLS", (verb, where)
                assert refs(props["AuthorizerId"]) == {authorizer_id}
                assert props["AuthorizationScopes"] == [ACCESS_TOKEN_SCOPE]
    assert (
        public
        == PUBLIC_ROUTES
        == {
            ("POST", "/api/users/register"),
            ("POST", "/api/users/login"),
            ("GET", "/api/health"),
            ("GET", "/api/openapi.json"),
            ("GET", "/api/docs"),
            ("GET", "/api/apps"),
        }
    )


def route(tree: dict[str, dict[str, dict[str, Any]]], path: str) -> str | None:
    """The resource API Gateway picks for ``path``, assuming it never backtracks: a static
    child first, then a path variable, then a greedy ``{proxy+}``."""
    current = ""
    for part in path.strip("/").split("/"):
        children = {
            p.rsplit("/", 1)[1]: p for p in tree_paths(tree) if p.rsplit("/", 1)[0] == current
        }
        variables = [c for c in children if c.startswith("{") and not c.endswith("+}")]
        greedy = [c for c in children if c.endswith("+}")]
        if part in children:
            current = children[part]
        elif variables:
            current = children[variables[0]]
        elif greedy:
            return children[greedy[0]]  # takes the rest of the path
        else:
            return None
    return current


def tree_paths(tree: dict[str, dict[str, dict[str, Any]]]) -> set[str]:
    """Every resource path, intermediate ones included."""
    paths = set()
    for where in tree:
        parts = where.strip("/").split("/")
        paths |= {"/" + "/".join(parts[:n]) for n in range(1, len(parts) + 1)}
    return paths


def test_every_app_route_reaches_the_function_with_the_right_guard(
    tmp_path: Path, synth: Synth
) -> None:
    """Each route of the FastAPI app resolves to a method (a resource without one would
    answer 403 itself) that is public exactly when the route is meant to be."""
    from starlette.routing import Route

    from zerocode.bootstrap import wiring
    from zerocode.bootstrap.settings import Settings
    from zerocode.http.app import create_app

    app = create_app(wiring.platform(Settings(data_dir=tmp_path, covers=False)))
    tree = gateway(synth)
    checked = 0
    # The routers' routes (FastAPI keeps each included router as one entry of app.routes, so
    # they are read from the OpenAPI paths), then the app's own (the API docs).
    routes = [
        (path, {verb.upper() for verb in ops}) for path, ops in app.openapi()["paths"].items()
    ]
    routes += [(r.path, set(r.methods or ())) for r in app.routes if isinstance(r, Route)]
    for path, methods in routes:
        if not path.startswith("/api/"):
            continue
        sample = re.sub(r"\{\w+:path\}", "src/main.js", re.sub(r"\{\w+\}", "x1", path))
        resource = route(tree, sample)
        assert resource is not None, f"{path}: no resource"
        for verb in sorted(methods - {"HEAD"}):
            method = tree[resource].get(verb) or tree[resource].get("ANY")
            assert method is not None, f"{verb} {path} -> {resource}: no method"
            gateway_path = re.sub(r"\{app_id\}", "{appId}", path)
            expected = "NONE" if (verb, gateway_path) in PUBLIC_ROUTES else "COGNITO_USER_POOLS"
            assert method["AuthorizationType"] == expected, f"{verb} {path} -> {resource}"
            checked += 1
    assert checked >= 25


def test_cors_throttling_tracing_and_access_logs(synth: Synth) -> None:
    _, stage = synth.one("AWS::ApiGateway::Stage")
    assert stage["TracingEnabled"] is True
    assert "DestinationArn" in stage["AccessLogSetting"]
    settings = stage["MethodSettings"][0]
    assert settings["ThrottlingRateLimit"] == DEFAULTS["throttleRateLimit"]
    assert settings["ThrottlingBurstLimit"] == DEFAULTS["throttleBurstLimit"]
    assert settings["LoggingLevel"] == "ERROR" and settings["DataTraceEnabled"] is False
    console_id = next(
        k
        for k, v in synth.of_type("AWS::CloudFront::Distribution").items()
        if v["Properties"]["DistributionConfig"]["Comment"] == "zerocode console"
    )
    for methods in gateway(synth).values():
        if "OPTIONS" in methods:
            headers = methods["OPTIONS"]["Integration"]["IntegrationResponses"][0][
                "ResponseParameters"
            ]
            origin = headers["method.response.header.Access-Control-Allow-Origin"]
            assert refs(origin) == {console_id}
    assert len(synth.of_type("AWS::ApiGateway::GatewayResponse")) == 2


def test_cognito_pool_and_client_match_the_platform(synth: Synth) -> None:
    from zerocode.adapters.aws.cognito_accounts import ACCESS_TOKEN_SECONDS, create_user_pool

    class Capture:
        pool: dict[str, Any]
        client: dict[str, Any]

        def create_user_pool(self, **kw: Any) -> dict[str, Any]:
            self.pool = kw
            return {"UserPool": {"Id": "p"}}

        def create_user_pool_client(self, **kw: Any) -> dict[str, Any]:
            self.client = kw
            return {"UserPoolClient": {"ClientId": "c"}}

    capture = Capture()
    create_user_pool(capture, "zc")
    _, pool = synth.one("AWS::Cognito::UserPool")
    policy = pool["Policies"]["PasswordPolicy"]
    platform = capture.pool["Policies"]["PasswordPolicy"]
    assert {k: policy[k] for k in platform} == platform  # 8 characters, no composition rules
    assert pool["UsernameConfiguration"] == capture.pool["UsernameConfiguration"]
    # No self sign-up: the public client id cannot create users past the platform's rules.
    assert pool["AdminCreateUserConfig"] == capture.pool["AdminCreateUserConfig"]
    assert pool["AdminCreateUserConfig"] == {"AllowAdminCreateUserOnly": True}
    _, client = synth.one("AWS::Cognito::UserPoolClient")
    assert client["GenerateSecret"] is False
    assert set(client["ExplicitAuthFlows"]) == set(capture.client["ExplicitAuthFlows"])
    assert client["AccessTokenValidity"] * 60 == ACCESS_TOKEN_SECONDS  # minutes
    synth.one("AWS::Cognito::UserPoolGroup", GroupName="admin")


def test_the_app_client_allows_only_the_flows_the_platform_uses(synth: Synth) -> None:
    """CognitoAccounts signs in with USER_PASSWORD_AUTH (refresh tokens are always allowed):
    no SRP or custom auth, no OAuth flows (implicit or code), no hosted UI callback (CDK's
    default is https://example.com), and revocation on, so GlobalSignOut revokes."""
    _, client = synth.one("AWS::Cognito::UserPoolClient")
    assert sorted(client["ExplicitAuthFlows"]) == [
        "ALLOW_REFRESH_TOKEN_AUTH",
        "ALLOW_USER_PASSWORD_AUTH",
    ]
    assert client.get("AllowedOAuthFlowsUserPoolClient", False) is False
    for absent in ("AllowedOAuthFlows", "AllowedOAuthScopes", "CallbackURLs", "LogoutURLs"):
        assert absent not in client, absent
    assert client["EnableTokenRevocation"] is True
    assert client["PreventUserExistenceErrors"] == "ENABLED"


def test_the_api_may_create_users_but_not_confirm_self_sign_ups(synth: Synth) -> None:
    from zerocode_infra.actions import COGNITO_ACTIONS

    statements = policy_statements(synth, role_of(synth, "run.sh"))
    actions = {str(a) for s in statements for a in _list(s["Action"]) if "cognito" in str(a)}
    assert actions == set(COGNITO_ACTIONS)
    assert {
        "cognito-idp:AdminCreateUser",
        "cognito-idp:AdminSetUserPassword",
        "cognito-idp:AdminDeleteUser",
    } <= actions
    assert "cognito-idp:AdminConfirmSignUp" not in actions


# -- hosting -----------------------------------------------------------------------------


def distribution(synth: Synth, comment: str) -> dict[str, Any]:
    (config,) = [
        d["Properties"]["DistributionConfig"]
        for d in synth.of_type("AWS::CloudFront::Distribution").values()
        if d["Properties"]["DistributionConfig"]["Comment"] == comment
    ]
    return dict(config)


def test_sites_come_from_the_builds_bucket_through_oac(synth: Synth) -> None:
    oacs = synth.of_type("AWS::CloudFront::OriginAccessControl")
    assert len(oacs) == 2
    (builds_id,) = refs(env(synth, "run.sh")["ZEROCODE_BUILDS_BUCKET"])
    sites = distribution(synth, "zerocode published sites and previews")
    (origin,) = [o for o in sites["Origins"] if "S3OriginConfig" in o]  # and the data API's
    assert refs(origin["DomainName"]) == {builds_id}
    assert refs(origin["OriginAccessControlId"]) <= set(oacs)
    assert origin["S3OriginConfig"]["OriginAccessIdentity"] == ""
    for oac in oacs.values():
        config = oac["Properties"]["OriginAccessControlConfig"]
        assert config["SigningBehavior"] == "always" and config["SigningProtocol"] == "sigv4"
    sites_id = next(
        k
        for k, v in synth.of_type("AWS::CloudFront::Distribution").items()
        if v["Properties"]["DistributionConfig"]["Comment"].startswith("zerocode pub")
    )
    (policy,) = [
        p["Properties"]["PolicyDocument"]["Statement"]
        for p in synth.of_type("AWS::S3::BucketPolicy").values()
        if refs(p["Properties"]["Bucket"]) == {builds_id}
    ]
    readers = [s for s in policy if s["Effect"] == "Allow"]
    assert len(readers) == 1 and readers[0]["Action"] == "s3:GetObject"
    assert readers[0]["Principal"] == {"Service": "cloudfront.amazonaws.com"}
    assert refs(readers[0]["Condition"]) - {"AWS::AccountId", "AWS::Partition"} == {sites_id}
    # What sites and previews serve, nothing else: build outputs (their covers under
    # __zerocode/), not sources/, staging/ or checks/.
    assert readers[0]["Resource"] == {
        "Fn::Join": ["", [{"Fn::GetAtt": [builds_id, "Arn"]}, "/builds/*"]]
    }
    console = distribution(synth, "zerocode console")
    (console_origin,) = console["Origins"]
    assert refs(console_origin["DomainName"]) != {builds_id}  # another bucket, another domain
    assert refs(console_origin["OriginAccessControlId"]) <= set(oacs)


def test_key_value_store_is_associated_with_the_router_on_viewer_request(synth: Synth) -> None:
    kvs_id, _ = synth.one("AWS::CloudFront::KeyValueStore")
    function_id_, fn = site_router(synth)
    assert fn["FunctionConfig"]["Runtime"] == "cloudfront-js-2.0"
    assert fn["FunctionConfig"]["KeyValueStoreAssociations"] == [
        {"KeyValueStoreARN": {"Fn::GetAtt": [kvs_id, "Arn"]}}
    ]
    assert fn["FunctionCode"] == router_code("", edge_routing=True)  # test_edge_routing.py
    assert fn["AutoPublish"] is True
    sites = distribution(synth, "zerocode published sites and previews")
    behaviors = [sites["DefaultCacheBehavior"], *sites["CacheBehaviors"]]
    assert [b.get("PathPattern") for b in behaviors] == [None, "/preview/*", "/_api/*"]
    for behavior in behaviors[:2]:  # /_api/* has its own (tests/infra/test_data_api.py)
        assert behavior["FunctionAssociations"] == [
            {
                "EventType": "viewer-request",
                "FunctionARN": {"Fn::GetAtt": [function_id_, "FunctionARN"]},
            }
        ]
        assert behavior["ViewerProtocolPolicy"] == "redirect-to-https"
    assert behaviors[1]["CachePolicyId"] == CACHING_DISABLED  # previews change per turn
    assert behaviors[0]["CachePolicyId"] != CACHING_DISABLED
    for handler in ("run.sh", "handler.handler"):
        assert env(synth, handler)["ZEROCODE_SITES_KVS_ARN"] == {"Fn::GetAtt": [kvs_id, "Arn"]}
    sites_url = env(synth, "run.sh")["ZEROCODE_SITES_URL"]["Fn::Join"][1]
    assert sites_url[0] == "https://"


def test_functions_may_write_the_key_value_store(synth: Synth) -> None:
    kvs_id, _ = synth.one("AWS::CloudFront::KeyValueStore")
    for handler in ("run.sh", "handler.handler"):
        statements = policy_statements(synth, role_of(synth, handler))
        kvs = [s for s in statements if refs(s["Resource"]) == {kvs_id}]
        assert len(kvs) == 1
        assert set(kvs[0]["Action"]) == {
            "cloudfront-keyvaluestore:DescribeKeyValueStore",
            "cloudfront-keyvaluestore:GetKey",
            "cloudfront-keyvaluestore:PutKey",
            "cloudfront-keyvaluestore:DeleteKey",
        }


# -- IAM ---------------------------------------------------------------------------------


def role_of(synth: Synth, handler: str) -> str:
    _, fn = lambda_function(synth, handler)
    (role,) = refs(fn["Role"])
    return role


def policy_statements(synth: Synth, role: str) -> list[dict[str, Any]]:
    return [
        s
        for p in synth.role_policies().values()
        if role in refs(p["Properties"]["Roles"])
        for s in p["Properties"]["PolicyDocument"]["Statement"]
    ]


def all_statements(synth: Synth) -> Iterator[tuple[str, dict[str, Any]]]:
    for policy_id, policy in synth.role_policies().items():
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            yield policy_id, statement
    for role_id, role in synth.of_type("AWS::IAM::Role").items():
        for inline in role["Properties"].get("Policies", []):
            for statement in inline["PolicyDocument"]["Statement"]:
                yield role_id, statement


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def test_no_wildcard_actions_and_no_wildcard_resources_on_data(synth: Synth) -> None:
    data = set(synth.of_type("AWS::DynamoDB::Table")) | set(synth.of_type("AWS::S3::Bucket"))
    checked = 0
    for owner, statement in all_statements(synth):
        actions = [str(a) for a in _list(statement["Action"])]
        for action in actions:
            assert action != "*" and not action.endswith(":*"), (owner, action)
        if not any(a.startswith(("dynamodb:", "s3:")) for a in actions):
            continue
        for resource in _list(statement["Resource"]):
            assert resource != "*", (owner, actions)
            named = refs(resource) & data
            assert len(named) == 1, (owner, resource)  # one specific table or bucket
            text = json.dumps(resource)
            assert '"/*"' not in text, (owner, text)  # objects only under a named prefix
            checked += 1
    assert checked > 20


def test_codebuild_role_reaches_only_the_builds_bucket_and_its_key(synth: Synth) -> None:
    """No npm cache, no outputs, no table (test_build_isolation.py): of the stack's stores
    its policies name only the builds bucket and its key, for its own run's source."""
    _, project = synth.one("AWS::CodeBuild::Project")
    (role,) = refs(project["ServiceRole"])
    stores = (
        set(synth.of_type("AWS::S3::Bucket"))
        | set(synth.of_type("AWS::KMS::Key"))
        | set(synth.of_type("AWS::DynamoDB::Table"))
    )
    named = set().union(*(refs(s["Resource"]) for s in policy_statements(synth, role)))
    assert named, "the role's policies name its own log group and project"
    (bucket,) = refs(env(synth, "run.sh")["ZEROCODE_BUILDS_BUCKET"])
    rule = synth.props(bucket)["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]
    (key,) = refs(rule["ServerSideEncryptionByDefault"]["KMSMasterKeyID"])
    assert named & stores == {bucket, key}


def test_api_function_reads_and_writes_only_its_data(synth: Synth) -> None:
    statements = policy_statements(synth, role_of(synth, "run.sh"))
    tables = {
        r
        for s in statements
        if any(str(a).startswith("dynamodb:") for a in _list(s["Action"]))
        for res in _list(s["Resource"])
        for r in refs(res)
    }
    assert tables == set(synth.of_type("AWS::DynamoDB::Table"))
    events = policy_statements(synth, role_of(synth, "handler.handler"))
    assert not any("codebuild:StartBuild" in _list(s["Action"]) for s in events)


def table_actions(synth: Synth, handler: str, table_id: str) -> set[str]:
    """The actions the handler's role may take on ``table_id`` (the table or its indexes)."""
    return {
        str(a)
        for s in policy_statements(synth, role_of(synth, handler))
        if any(table_id in refs(r) for r in _list(s["Resource"]))
        for a in _list(s["Action"])
    }


def test_the_checks_table_is_the_adapters_and_the_api_reads_and_writes_it(synth: Synth) -> None:
    """Issue 25: one table of each app's checks, runs, screenshots and deploy stamps (sort
    key ``sk``, zerocode.adapters.dynamodb.checks); the API keeps the suite, the deletion
    sweep empties it with the app's other data, and both get what every table gets."""
    (table_id,) = refs(env(synth, "run.sh")["ZEROCODE_CHECKS_TABLE"])
    props = synth.props(table_id)
    assert props["KeySchema"] == [
        {"AttributeName": "app_id", "KeyType": "HASH"},
        {"AttributeName": "sk", "KeyType": "RANGE"},
    ]
    assert props["BillingMode"] == "PAY_PER_REQUEST" and "GlobalSecondaryIndexes" not in props
    (builds_id,) = refs(env(synth, "run.sh")["ZEROCODE_BUILDS_TABLE"])
    # What the adapter calls (transactions need the actions of their parts), and no more
    # than the builds table, a per-app table like it, is granted.
    used = {"dynamodb:GetItem", "dynamodb:Query", "dynamodb:PutItem", "dynamodb:UpdateItem"}
    used.add("dynamodb:BatchWriteItem")
    for handler in ("run.sh", SWEEP):
        actions = table_actions(synth, handler, table_id)
        assert used <= actions, handler
        assert actions == table_actions(synth, handler, builds_id), handler
    for handler in ("handler.handler", PREVIEWS):
        assert table_actions(synth, handler, table_id) == set(), handler


def test_finished_builds_are_unpacked_by_build_events_and_the_api(synth: Synth) -> None:
    """A build's staging archive is read and deleted by build_events (or the API's poller),
    which write the site under builds/, the check under checks/ and a preview's cover under
    preview-covers/; build_events never touches sources/, only the API does; nobody but a
    build's presigned URL puts into staging/. The API reads preview covers (to serve them
    to their owners: CloudFront reads builds/ alone). The deletion sweep removes all five
    prefixes of a deleted app (M8)."""
    (bucket,) = refs(env(synth, "run.sh")["ZEROCODE_BUILDS_BUCKET"])
    events = object_prefixes(synth, "handler.handler", bucket)
    assert set(events) == {"staging/", "builds/", "checks/", "preview-covers/"}
    for put_only in ("checks/", "preview-covers/"):
        assert "s3:PutObject" in events[put_only], put_only
        assert not {a for a in events[put_only] if a.startswith(("s3:Get", "s3:Delete"))}
    assert events["staging/"] == {"s3:GetObject", "s3:DeleteObject"}
    assert {"s3:GetObject*", "s3:PutObject"} <= events["builds/"]
    assert not {a for a in events["builds/"] if a.startswith("s3:Delete")}
    api = object_prefixes(synth, "run.sh", bucket)
    assert set(api) == {"sources/", "staging/", "builds/", "checks/", "preview-covers/"}
    assert api["staging/"] == {"s3:GetObject", "s3:DeleteObject"}
    for prefix in ("sources/", "builds/", "checks/"):
        assert {"s3:GetObject*", "s3:PutObject", "s3:DeleteObject"} <= api[prefix], prefix
    assert api["preview-covers/"] == {"s3:GetObject", "s3:PutObject", "s3:DeleteObject"}
    sweep = object_prefixes(synth, SWEEP, bucket)
    assert set(sweep) == {"sources/", "staging/", "builds/", "checks/", "preview-covers/"}
    for prefix, actions in sweep.items():
        assert "s3:DeleteObject" in actions, prefix
        assert not {a for a in actions if a.startswith("s3:Put")}, prefix
    assert sweep["preview-covers/"] == {"s3:DeleteObject"}  # listed by the bucket's grant


def test_build_leftovers_expire_after_a_day(synth: Synth) -> None:
    """A source zip or staging archive outlives its build only when the build failed
    midway; both go after a day, as does what the retired npm cache left."""
    (bucket,) = refs(env(synth, "run.sh")["ZEROCODE_BUILDS_BUCKET"])
    rules = synth.props(bucket)["LifecycleConfiguration"]["Rules"]
    expiring = {r["Prefix"]: r["ExpirationInDays"] for r in rules if "Prefix" in r}
    assert expiring == {"sources/": 1, "staging/": 1, "cache/": 1}
    assert all(r["Status"] == "Enabled" for r in rules)
    # No prefix rule reaches sites, check results and preview covers: deploys' live as long
    # as the app, previews' expire by their tag (tests/infra/test_housekeeping.py).
    for kept in ("builds/", "checks/", "preview-covers/"):
        assert not [r for r in rules if kept.startswith(r.get("Prefix", "-"))], kept


def object_prefixes(synth: Synth, handler: str, bucket: str) -> dict[str, set[str]]:
    """The object key prefixes of ``bucket`` each S3 action of the handler's role reaches."""
    out: dict[str, set[str]] = {}
    for statement in policy_statements(synth, role_of(synth, handler)):
        for resource in _list(statement["Resource"]):
            if bucket not in refs(resource) or "Fn::Join" not in resource:
                continue
            prefix = str(resource["Fn::Join"][1][1]).strip("/").removesuffix("*")
            for action in _list(statement["Action"]):
                out.setdefault(prefix, set()).add(str(action))
    return out


def test_versions_live_under_their_own_prefix_for_the_api_and_the_sweep(synth: Synth) -> None:
    """zerocode.adapters.aws.s3_versions writes ``versions/`` of the workspaces bucket: the
    API reads and writes it, the deletion sweep lists and deletes it (M8), nothing else."""
    from zerocode.adapters.aws.s3_versions import S3VersionStore

    assert S3VersionStore(None, "b").prefix == "versions/"
    (bucket,) = refs(env(synth, "run.sh")["ZEROCODE_WORKSPACE_BUCKET"])
    api = object_prefixes(synth, "run.sh", bucket)
    assert set(api) == {"workspaces/", "versions/"}
    assert {"s3:PutObject", "s3:DeleteObject"} <= api["versions/"]
    sweep = object_prefixes(synth, SWEEP, bucket)
    assert set(sweep) == {"workspaces/", "versions/"}
    assert "s3:DeleteObject" in sweep["versions/"]
    assert not {a for a in sweep["versions/"] if a.startswith("s3:Put")}
    assert object_prefixes(synth, "handler.handler", bucket) == {}  # build_events


def test_no_role_may_delete_an_object_version(synth: Synth) -> None:
    """Issue 42, point 5: no code deletes an object's version, and in the versioned buckets
    a noncurrent version is how a mistaken delete is undone, so no role's policy holds
    ``s3:DeleteObjectVersion`` (not by ``s3:DeleteObject*`` or any wildcard either); the
    roles that delete objects hold ``s3:DeleteObject``."""
    from fnmatch import fnmatchcase

    deleting = 0
    for where, statement in all_statements(synth):
        if statement["Effect"] != "Allow":
            continue
        actions = [str(a) for a in _list(statement["Action"])]
        for forbidden in ("s3:DeleteObjectVersion", "s3:DeleteObjectVersionTagging"):
            assert not any(fnmatchcase(forbidden, a) for a in actions), (where, actions)
        deleting += "s3:DeleteObject" in actions
    assert deleting >= 3  # the API, build_events (staging/), the deletion sweep


def test_only_the_api_may_read_the_model_key_or_call_cognito(synth: Synth) -> None:
    secret_id, _ = model_key(synth)
    (pool_id,) = synth.of_type("AWS::Cognito::UserPool")

    def reaches(handler: str) -> tuple[bool, bool]:
        statements = policy_statements(synth, role_of(synth, handler))
        actions = [str(a) for s in statements for a in _list(s["Action"])]
        targets = set().union(*(refs(s["Resource"]) for s in statements))
        secret = secret_id in targets or any(a.startswith("secretsmanager:") for a in actions)
        cognito = pool_id in targets or any(a.startswith("cognito-idp:") for a in actions)
        return secret, cognito

    assert reaches("run.sh") == (True, True)
    assert reaches("handler.handler") == (False, False)  # build_events (wiring.publishing)
    assert reaches(SWEEP) == (False, False)  # wiring.deletion_sweep
    assert reaches(PREVIEWS) == (False, False)  # wiring.preview_sweep


def schedule_of(synth: Synth, handler: str) -> dict[str, Any]:
    fn = function_id(synth, handler)
    (rule,) = [
        r["Properties"]
        for r in synth.of_type("AWS::Events::Rule").values()
        if "ScheduleExpression" in r["Properties"]
        and [refs(t["Arn"]) for t in r["Properties"]["Targets"]] == [{fn}]
    ]
    return dict(rule)


def test_the_deletion_sweep_runs_on_a_schedule_with_only_deletion_rights(synth: Synth) -> None:
    """Every 5 minutes: on AWS only this retries deletions that failed midway (M8)."""
    rule = schedule_of(synth, SWEEP)
    assert rule["ScheduleExpression"] == "rate(5 minutes)"
    assert rule["State"] == "ENABLED"
    variables = env(synth, SWEEP)
    assert not [k for k in variables if k.startswith(("ZEROCODE_COGNITO_", "ZEROCODE_MODEL_"))]
    assert "ZEROCODE_BUILD_DATA_ROLE_ARN" not in variables
    statements = policy_statements(synth, role_of(synth, SWEEP))
    actions = {str(a) for s in statements for a in _list(s["Action"])}
    assert not {
        a
        for a in actions
        if a.startswith(
            ("secretsmanager:", "cognito-idp:", "cloudfront-keyvaluestore:", "codebuild:", "sts:")
        )
    }
    assert not {"s3:PutObject", "s3:PutObject*"} & actions  # lists and deletes, never writes
    tables = {
        r
        for s in statements
        if any(str(a).startswith("dynamodb:") for a in _list(s["Action"]))
        for res in _list(s["Resource"])
        for r in refs(res)
    }
    by_name = {
        name: refs(env(synth, "run.sh")[f"ZEROCODE_{name.upper()}_TABLE"])
        for name in (
            "transcript",
            "display",
            "builds",
            "deletions",
            "checks",
            "app_data",
            "usage",
            "visits",
        )
    }
    assert tables == set().union(*by_name.values())  # not apps, leases: no app is reachable


# -- builds ------------------------------------------------------------------------------


def test_the_api_starts_builds_of_the_project(synth: Synth) -> None:
    """The environment itself (Lambda compute, the image, no cache, no timeouts, no
    credentials) is checked in test_build_isolation.py."""
    project_id, _ = synth.one("AWS::CodeBuild::Project")
    assert env(synth, "run.sh")["ZEROCODE_CODEBUILD_PROJECT"] == {"Ref": project_id}
    api = policy_statements(synth, role_of(synth, "run.sh"))
    (start,) = [s for s in api if "codebuild:StartBuild" in _list(s["Action"])]
    assert refs(start["Resource"]) == {project_id}


def test_build_state_changes_invoke_build_events(synth: Synth) -> None:
    (rule,) = [  # the other pattern is new visit logs' (tests/infra/test_visit_logs.py)
        r["Properties"]
        for r in synth.of_type("AWS::Events::Rule").values()
        if "EventPattern" in r["Properties"] and "aws.codebuild" in json.dumps(r["Properties"])
    ]
    project_id, _ = synth.one("AWS::CodeBuild::Project")
    assert rule["EventPattern"] == {
        "source": ["aws.codebuild"],
        "detail-type": ["CodeBuild Build State Change"],
        "detail": {"project-name": [{"Ref": project_id}], "build-status": FINAL_STATES},
    }
    (target,) = rule["Targets"]
    assert refs(target["Arn"]) == {function_id(synth, "handler.handler")}


# -- observability -----------------------------------------------------------------------


def test_alarms_cover_errors_throttles_turns_and_builds(synth: Synth) -> None:
    alarms = [a["Properties"] for a in synth.of_type("AWS::CloudWatch::Alarm").values()]
    by_metric = {(a.get("Namespace"), a.get("MetricName")): a for a in alarms}
    assert by_metric[("AWS/ApiGateway", "5XXError")]
    assert by_metric[("AWS/CodeBuild", "FailedBuilds")]
    turn = by_metric[("zerocode", "TurnDuration")]
    assert turn["ExtendedStatistic"] == "p90" and turn["Threshold"] == 600_000
    assert turn["Dimensions"] == [{"Name": "service", "Value": "zerocode"}]
    for handler in FUNCTIONS:
        fn = function_id(synth, handler)
        for metric in ("Errors", "Throttles"):
            assert any(
                a.get("MetricName") == metric
                and a["Namespace"] == "AWS/Lambda"
                and refs(a["Dimensions"]) == {fn}
                for a in alarms
            ), (handler, metric)
    pointers = by_metric[("zerocode", "SitePointerBytes")]
    assert pointers["Statistic"] == "Maximum" and pointers["Period"] == 86_400
    assert pointers["Threshold"] == 4_000_000  # 80 % of the store's 5 MB
    assert pointers["Dimensions"] == [{"Name": "service", "Value": "zerocode"}]
    assert by_metric[("AWS/SQS", "ApproximateNumberOfMessagesVisible")]
    # 5xx, turns, builds, failed build events, pointer store; errors and throttles of four
    # functions
    assert len(alarms) == 5 + 2 * len(FUNCTIONS)
    synth.template.resource_count_is("AWS::CloudWatch::Dashboard", 1)


# Deploy-time custom resource functions (CDK's AwsCustomResource, cdk-ecr-deployment's
# copier): CloudFormation calls them once per deploy, never a request; nothing to trace.
DEPLOY_TIME = ("AWS679f53fac002430cb0da5b7982bd2287", "CustomCDKECRDeployment")


def test_xray_tracing_on_functions_and_the_api_stage(synth: Synth) -> None:
    for logical_id, fn in synth.of_type("AWS::Lambda::Function").items():
        if fn["Properties"].get("Description", "").startswith("zerocode: /_edge/"):
            continue  # the Lambda@Edge router: no X-Ray set on it (test_edge_routing.py)
        if logical_id.startswith(DEPLOY_TIME):
            continue
        assert fn["Properties"]["TracingConfig"] == {"Mode": "Active"}
    synth.template.has_resource_properties("AWS::ApiGateway::Stage", {"TracingEnabled": True})


def test_outputs_name_what_an_operator_needs(synth: Synth) -> None:
    assert {
        "ApiUrl",
        "ConsoleUrl",
        "ConsoleBucket",
        "SitesUrl",
        "UserPoolId",
        "UserPoolClientId",
        "ModelKeySecretArn",
        "DashboardName",
        "ApiFunctionName",
        "BuildEventsFunctionName",
        "FailedBuildEventsQueueUrl",
    } <= set(synth.raw["Outputs"])


# -- cdk-nag -----------------------------------------------------------------------------


def test_cdk_nag_reports_no_unsuppressed_errors(synth: Synth) -> None:
    errors = Annotations.from_stack(synth.stack).find_error(
        "*", Match.string_like_regexp("AwsSolutions-.*")
    )
    found = [f"{e.id}: {e.entry.data}" for e in errors]
    assert found == [], "\n".join(found)


def test_synth_is_free_of_warnings(synth: Synth) -> None:
    warnings = Annotations.from_stack(synth.stack).find_warning("*", Match.any_value())
    assert [f"{w.id}: {w.entry.data}" for w in warnings] == []


def suppressions(synth: Synth) -> list[tuple[str, dict[str, Any]]]:
    found = [
        ("stack", rule)
        for rule in synth.raw.get("Metadata", {}).get("cdk_nag", {}).get("rules_to_suppress", [])
    ]
    for resource_id, resource in synth.resources.items():
        for rule in resource.get("Metadata", {}).get("cdk_nag", {}).get("rules_to_suppress", []):
            found.append((resource_id, rule))
    return found


def test_every_suppression_gives_a_reason_of_ten_words_or_more(synth: Synth) -> None:
    found = suppressions(synth)
    assert len(found) > 10
    for where, rule in found:
        assert rule["id"].startswith("AwsSolutions-"), (where, rule)
        assert len(rule["reason"].split()) >= 10, (where, rule)


def test_no_suppression_hides_a_whole_iam_rule(synth: Synth) -> None:
    """IAM4/IAM5 suppressions list the exact findings they accept."""
    for where, rule in suppressions(synth):
        if rule["id"] in ("AwsSolutions-IAM4", "AwsSolutions-IAM5"):
            assert rule.get("applies_to"), where


def test_a_short_reason_is_refused() -> None:
    from aws_cdk import App
    from zerocode_infra.nag import suppress

    with pytest.raises(ValueError, match="at least 10 words"):
        suppress(Stack(App(), "S"), "S1", "not needed")


# -- issue 16: buckets, the preview sweep -------------------------------------------------


def test_workspaces_and_transcript_payloads_keep_old_versions_for_thirty_days(
    synth: Synth,
) -> None:
    kept = set()
    for setting in ("ZEROCODE_WORKSPACE_BUCKET", "ZEROCODE_PAYLOAD_BUCKET"):
        (bucket,) = refs(env(synth, "run.sh")[setting])
        kept.add(bucket)
        props = synth.props(bucket)
        assert props["VersioningConfiguration"] == {"Status": "Enabled"}
        rules = {r["Id"]: r for r in props["LifecycleConfiguration"]["Rules"]}
        assert rules["OldVersions"]["NoncurrentVersionExpiration"] == {"NoncurrentDays": 30}
        assert rules["DeleteMarkers"]["ExpiredObjectDeleteMarker"] is True
        assert rules["IncompleteUploads"]["AbortIncompleteMultipartUpload"] == {
            "DaysAfterInitiation": 1
        }
        assert all(r["Status"] == "Enabled" for r in rules.values())
    assert len(kept) == 2
    for other, _ in synth.of_type("AWS::S3::Bucket").items():
        if other not in kept:  # only files and transcripts hold what a user may want back
            assert "VersioningConfiguration" not in synth.props(other), other


def test_the_preview_sweep_runs_daily_and_may_only_prune_pointers(synth: Synth) -> None:
    """functions/preview_sweep: reads the apps table, lists and deletes KeyValueStore keys;
    writes no pointer, touches no bucket, no secret, no Cognito; outside the VPC."""
    rule = schedule_of(synth, PREVIEWS)
    assert rule["ScheduleExpression"] == "rate(1 day)"
    _, fn = lambda_function(synth, PREVIEWS)
    assert "VpcConfig" not in fn
    statements = policy_statements(synth, role_of(synth, PREVIEWS))
    actions = {str(a) for s in statements for a in _list(s["Action"])}
    kvs_id, _ = synth.one("AWS::CloudFront::KeyValueStore")
    kvs = [s for s in statements if refs(s["Resource"]) == {kvs_id}]
    assert len(kvs) == 1 and set(kvs[0]["Action"]) == {
        "cloudfront-keyvaluestore:DescribeKeyValueStore",
        "cloudfront-keyvaluestore:ListKeys",
        "cloudfront-keyvaluestore:GetKey",
        "cloudfront-keyvaluestore:DeleteKey",
    }
    assert not {a for a in actions if a.startswith(("s3:", "secretsmanager:", "cognito-idp:"))}
    writes = {"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"}
    assert not writes & actions
    tables = {
        r
        for s in statements
        if any(str(a).startswith("dynamodb:") for a in _list(s["Action"]))
        for res in _list(s["Resource"])
        for r in refs(res)
    }
    assert tables == refs(env(synth, "run.sh")["ZEROCODE_APPS_TABLE"])
    variables = env(synth, PREVIEWS)
    assert variables["ZEROCODE_SITES_KVS_ARN"] == {"Fn::GetAtt": [kvs_id, "Arn"]}
    for handler in ("run.sh", PREVIEWS):  # the sweep removes, the API puts back: one figure
        assert env(synth, handler)["ZEROCODE_PREVIEW_IDLE_DAYS"] == "30"
    assert "ZEROCODE_REDIS_URL" not in variables


def test_the_console_is_served_with_a_content_security_policy(synth: Synth) -> None:
    """On AWS the console comes from CloudFront: the same CSP rules as `zerocode serve`
    (frame-ancestors 'none', previews the only frames, the API Gateway the only other
    connection), nosniff, no referrer."""
    (console,) = [
        d["Properties"]["DistributionConfig"]
        for d in synth.of_type("AWS::CloudFront::Distribution").values()
        if d["Properties"]["DistributionConfig"].get("Comment") == "zerocode console"
    ]
    (policy_id,) = refs(console["DefaultCacheBehavior"]["ResponseHeadersPolicyId"])
    config = synth.of_type("AWS::CloudFront::ResponseHeadersPolicy")[policy_id]["Properties"][
        "ResponseHeadersPolicyConfig"
    ]["SecurityHeadersConfig"]
    csp = json.dumps(config["ContentSecurityPolicy"]["ContentSecurityPolicy"])
    for directive in (
        "default-src 'self'",
        "script-src 'self'",
        "frame-ancestors 'none'",
        "object-src 'none'",
        "frame-src https://",
        "connect-src 'self' https://*.execute-api.",
    ):
        assert directive in csp, directive
    assert "unsafe" not in csp
    assert config["ContentTypeOptions"]["Override"] is True
    assert config["FrameOptions"]["FrameOption"] == "DENY"
    assert config["ReferrerPolicy"]["ReferrerPolicy"] == "no-referrer"
