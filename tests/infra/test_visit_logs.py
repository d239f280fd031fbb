"""The sites' visits on AWS (issue 44, point 4), on the synthesized stack: the sites
distribution logs to a bucket of its own that keeps a file a day at most; each new file is
told to EventBridge (no notification custom resource), whose rule invokes the visit logs
function; the function may read and delete those files, write the visits table and read the
pointer table, nothing else; the API reads the visits and the deletion sweep deletes an
app's."""

from __future__ import annotations

import json
from typing import Any

from zerocode_infra.storage import VISIT_LOG_DAYS, VISIT_LOGS

from tests.infra.conftest import REGION, Synth
from tests.infra.test_stack import (
    SWEEP,
    VISITS,
    _list,
    env,
    function_id,
    lambda_function,
    policy_statements,
    refs,
    role_of,
)


def visit_logs_bucket(synth: Synth) -> tuple[str, dict[str, Any]]:
    ((bucket_id, bucket),) = [
        (k, v["Properties"])
        for k, v in synth.of_type("AWS::S3::Bucket").items()
        if k.startswith("StorageVisitLogs")
    ]
    return bucket_id, bucket


def test_the_sites_distribution_logs_to_a_bucket_that_keeps_them_a_day(synth: Synth) -> None:
    bucket_id, bucket = visit_logs_bucket(synth)
    assert VISIT_LOG_DAYS == 1
    rules = {r["Id"]: r for r in bucket["LifecycleConfiguration"]["Rules"]}
    assert rules["VisitLogs"]["ExpirationInDays"] == 1 and rules["VisitLogs"]["Status"] == "Enabled"
    assert "VersioningConfiguration" not in bucket  # a deleted file is gone
    assert bucket["OwnershipControls"]["Rules"] == [{"ObjectOwnership": "BucketOwnerPreferred"}]
    assert bucket["NotificationConfiguration"] == {
        "EventBridgeConfiguration": {"EventBridgeEnabled": True}
    }
    assert "LoggingConfiguration" in bucket  # its own accesses, in the access log bucket
    assert not synth.of_type("Custom::S3BucketNotifications")
    logging = {}
    for distribution in synth.of_type("AWS::CloudFront::Distribution").values():
        config = distribution["Properties"]["DistributionConfig"]
        logging[config["Comment"]] = config["Logging"]
    sites = logging["zerocode published sites and previews"]
    assert refs(sites["Bucket"]) == {bucket_id} and sites["Prefix"] == VISIT_LOGS
    console = logging["zerocode console"]
    assert bucket_id not in refs(console["Bucket"])  # the console's stay with the others


def test_each_new_log_file_invokes_the_visit_logs_function(synth: Synth) -> None:
    bucket_id, _ = visit_logs_bucket(synth)
    fn = function_id(synth, VISITS)
    (rule,) = [
        r["Properties"]
        for r in synth.of_type("AWS::Events::Rule").values()
        if "aws.s3" in json.dumps(r["Properties"].get("EventPattern", {}))
    ]
    assert rule["EventPattern"] == {
        "source": ["aws.s3"],
        "detail-type": ["Object Created"],
        "detail": {
            "bucket": {"name": [{"Ref": bucket_id}]},
            "object": {"key": [{"prefix": VISIT_LOGS}]},
        },
    }
    (target,) = rule["Targets"]
    assert refs(target["Arn"]) == {fn}
    assert target["RetryPolicy"]["MaximumRetryAttempts"] == 2
    permissions = [
        p["Properties"]
        for p in synth.of_type("AWS::Lambda::Permission").values()
        if refs(p["Properties"]["FunctionName"]) == {fn}
    ]
    assert [p["Principal"] for p in permissions] == ["events.amazonaws.com"]


def test_the_function_reads_and_deletes_log_files_and_writes_visits_only(synth: Synth) -> None:
    _, props = lambda_function(synth, VISITS)
    assert props["Handler"] == "handler.handler" and "VpcConfig" not in props
    assert props["TracingConfig"] == {"Mode": "Active"}
    variables = env(synth, VISITS)
    assert set(variables) == {
        "ZEROCODE_MODE",
        "ZEROCODE_AWS_REGION",
        "ZEROCODE_VISITS_TABLE",
        "ZEROCODE_POINTERS_TABLE",
    }
    assert variables["ZEROCODE_MODE"] == "aws" and variables["ZEROCODE_AWS_REGION"] == REGION
    (visits,) = refs(variables["ZEROCODE_VISITS_TABLE"])
    (pointers,) = refs(variables["ZEROCODE_POINTERS_TABLE"])
    bucket_id, _ = visit_logs_bucket(synth)
    statements = policy_statements(synth, role_of(synth, VISITS))
    by_service: dict[str, set[str]] = {}
    for s in statements:
        for action in _list(s["Action"]):
            by_service.setdefault(str(action).split(":")[0], set()).add(str(action))
            if str(action).startswith("s3:"):
                assert [refs(r) for r in _list(s["Resource"])] == [{bucket_id}], s
                assert f'"/{VISIT_LOGS}*"' in json.dumps(s["Resource"]), s
            if str(action).startswith("dynamodb:"):
                assert {r for res in _list(s["Resource"]) for r in refs(res)} <= {
                    visits,
                    pointers,
                }, s
    assert set(by_service) == {"s3", "dynamodb", "xray"}
    assert by_service["s3"] == {"s3:GetObject", "s3:DeleteObject"}
    assert "dynamodb:Scan" not in by_service["dynamodb"]
    assert "dynamodb:DeleteTable" not in by_service["dynamodb"]


def test_the_api_reads_the_visits_and_the_sweep_deletes_an_apps(synth: Synth) -> None:
    table = env(synth, VISITS)["ZEROCODE_VISITS_TABLE"]
    for handler in ("run.sh", SWEEP):
        assert env(synth, handler)["ZEROCODE_VISITS_TABLE"] == table, handler
        (visits,) = refs(table)
        granted = {
            str(a)
            for s in policy_statements(synth, role_of(synth, handler))
            if visits in {r for res in _list(s["Resource"]) for r in refs(res)}
            for a in _list(s["Action"])
        }
        assert {"dynamodb:Query", "dynamodb:BatchWriteItem"} <= granted, handler
    assert "ZEROCODE_VISITS_TABLE" not in env(synth, "handler.handler")  # build events
