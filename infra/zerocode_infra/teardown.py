"""Emptying the stack's buckets before ``cdk destroy`` (docs/operations.md, "Tearing down").

CloudFormation deletes only empty buckets, and the platform's buckets are versioned: ``aws
s3 rm --recursive`` leaves every noncurrent version and writes a delete marker for each
object, so the bucket is still not empty and the destroy fails on it. This deletes every
version and every delete marker of every bucket the stack owns, a thousand at a time, and
says how many. It touches nothing but the stack's own buckets (found from the stack's
resources, never by name) and refuses a stack still deployed with ``removalPolicy=retain``
(its buckets would be kept by the destroy anyway, and emptying them would lose the data
the policy exists to keep).

    .venv/bin/python infra/teardown.py ZerocodeStack [--region eu-west-1]
"""

from __future__ import annotations

from typing import Any

BATCH = 1_000  # DeleteObjects takes at most this many keys


def stack_buckets(cloudformation: Any, stack: str) -> list[str]:
    """The physical names of the stack's S3 buckets."""
    found = []
    paginator = cloudformation.get_paginator("list_stack_resources")
    for page in paginator.paginate(StackName=stack):
        for resource in page["StackResourceSummaries"]:
            if resource["ResourceType"] == "AWS::S3::Bucket" and resource.get("PhysicalResourceId"):
                found.append(str(resource["PhysicalResourceId"]))
    return found


def retained(cloudformation: Any, stack: str) -> bool:
    """Whether the deployed template keeps its buckets on delete (``removalPolicy=retain``)."""
    body = cloudformation.get_template(StackName=stack, TemplateStage="Original")["TemplateBody"]
    resources = body.get("Resources", {}) if isinstance(body, dict) else {}
    return any(
        r.get("Type") == "AWS::S3::Bucket" and r.get("DeletionPolicy") == "Retain"
        for r in resources.values()
    )


def empty(s3: Any, bucket: str) -> int:
    """Delete every version and delete marker of ``bucket``; how many. Each batch is listed
    afresh from the start (a listing's markers need not survive the deletes behind them).
    Raises on the first object S3 refuses (an object lock, a missing permission), naming it."""
    removed = 0
    while True:
        page = s3.list_object_versions(Bucket=bucket, MaxKeys=BATCH)
        batch = [
            {"Key": item["Key"], "VersionId": item["VersionId"]}
            for item in [*page.get("Versions", []), *page.get("DeleteMarkers", [])]
        ][:BATCH]
        if not batch:
            return removed
        answer = s3.delete_objects(Bucket=bucket, Delete={"Objects": batch, "Quiet": True})
        errors = answer.get("Errors", [])
        if errors:
            first = errors[0]
            raise RuntimeError(
                f"s3://{bucket}/{first.get('Key')} ({first.get('VersionId')}): "
                f"{first.get('Code')} {first.get('Message', '')}".rstrip()
            )
        removed += len(batch)


def empty_stack(cloudformation: Any, s3: Any, stack: str) -> dict[str, int]:
    """Empty every bucket of ``stack``: removed versions per bucket."""
    if retained(cloudformation, stack):
        raise SystemExit(
            f"{stack} is deployed with removalPolicy=retain: its buckets outlive a destroy. "
            "Deploy it with -c removalPolicy=destroy first (docs/operations.md, Tearing down)."
        )
    return {bucket: empty(s3, bucket) for bucket in stack_buckets(cloudformation, stack)}
