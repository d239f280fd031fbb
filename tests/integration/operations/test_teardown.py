"""The teardown of docs/operations.md ("Tearing down") on moto, as far as moto goes: a stack
whose versioned buckets hold current and noncurrent versions and delete markers is emptied
by infra/teardown.py (what ``aws s3 rm --recursive`` leaves behind included) and then
deleted; a stack deployed with ``removalPolicy=retain`` is refused, its data untouched. The
synthesized template's own buckets are checked in tests/infra/test_housekeeping.py."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws
from zerocode_infra import teardown
from zerocode_infra.teardown import empty_stack, stack_buckets

REGION = "eu-west-1"
BATCH = 40  # DeleteObjects' 1,000, made small here: the same code, fewer moto requests
OBJECTS = (BATCH // 2 + 10, 5)  # the first bucket's versions take several batches


def template(policy: str) -> str:
    bucket = {
        "Type": "AWS::S3::Bucket",
        "DeletionPolicy": policy,
        "Properties": {"VersioningConfiguration": {"Status": "Enabled"}},
    }
    return json.dumps(
        {
            "Resources": {
                "Builds": bucket,
                "Workspaces": bucket,
                "Queue": {"Type": "AWS::SQS::Queue"},
            }
        }
    )


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "testing")
    monkeypatch.setattr(teardown, "BATCH", BATCH)
    with mock_aws():
        yield {
            "cloudformation": boto3.client("cloudformation", region_name=REGION),
            "s3": boto3.client("s3", region_name=REGION),
        }


def deployed(aws: dict[str, Any], policy: str) -> list[str]:
    """The stack, its two buckets holding what a year of use leaves in a versioned bucket:
    objects written again (noncurrent versions), deleted (delete markers), and more than
    one DeleteObjects batch of them."""
    aws["cloudformation"].create_stack(StackName="ZerocodeStack", TemplateBody=template(policy))
    buckets = stack_buckets(aws["cloudformation"], "ZerocodeStack")
    s3 = aws["s3"]
    for bucket, count in zip(buckets, OBJECTS, strict=True):
        # moto's CloudFormation leaves out VersioningConfiguration; S3 itself versions.
        s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
        for n in range(count):
            s3.put_object(Bucket=bucket, Key=f"builds/app{n}/index.html", Body=b"one")
            s3.put_object(Bucket=bucket, Key=f"builds/app{n}/index.html", Body=b"two")
        for n in range(0, count, 3):
            s3.delete_object(Bucket=bucket, Key=f"builds/app{n}/index.html")
    return buckets


def left_behind(count: int) -> int:
    """Versions and markers a bucket of ``count`` objects holds once ``aws s3 rm`` ran:
    two versions each, a marker for each deleted, and a marker for each removed after."""
    deleted = len(range(0, count, 3))
    return 2 * count + deleted + (count - deleted)


def test_the_stacks_versioned_buckets_are_emptied_and_the_stack_then_deletes(
    aws: dict[str, Any],
) -> None:
    buckets = deployed(aws, "Delete")
    assert len(buckets) == 2
    s3 = aws["s3"]
    other = "someone-elses-bucket"  # not the stack's: never touched
    s3.create_bucket(Bucket=other, CreateBucketConfiguration={"LocationConstraint": REGION})
    s3.put_object(Bucket=other, Key="keep", Body=b"x")
    # What the old recipe did: the current objects go, every version and marker stays.
    for bucket in buckets:
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
            for o in page.get("Contents", []):
                s3.delete_object(Bucket=bucket, Key=o["Key"])
        assert s3.list_objects_v2(Bucket=bucket)["KeyCount"] == 0
        assert s3.list_object_versions(Bucket=bucket).get("Versions")
    removed = empty_stack(aws["cloudformation"], s3, "ZerocodeStack")
    assert removed == {b: left_behind(n) for b, n in zip(buckets, OBJECTS, strict=True)}
    for bucket in buckets:
        listed = s3.list_object_versions(Bucket=bucket)
        assert not listed.get("Versions") and not listed.get("DeleteMarkers")
    aws["cloudformation"].delete_stack(StackName="ZerocodeStack")
    names = {b["Name"] for b in s3.list_buckets()["Buckets"]}
    assert names == {other}
    assert s3.list_objects_v2(Bucket=other)["KeyCount"] == 1


def test_a_stack_that_retains_its_buckets_is_refused_and_keeps_its_data(
    aws: dict[str, Any],
) -> None:
    buckets = deployed(aws, "Retain")
    with pytest.raises(SystemExit, match="removalPolicy=retain"):
        empty_stack(aws["cloudformation"], aws["s3"], "ZerocodeStack")
    for bucket in buckets:
        assert aws["s3"].list_object_versions(Bucket=bucket).get("Versions")
