"""cdk-nag suppressions with their reasons next to the resource they excuse.

A suppression is a decision, so its reason has to say why in a sentence: ``suppress``
refuses one of fewer than ten words (the infra tests check the synthesized metadata too).
"""

from __future__ import annotations

from collections.abc import Sequence

from aws_cdk import Stack, Token
from aws_cdk import aws_dynamodb as ddb
from aws_cdk import aws_s3 as s3
from cdk_nag import NagPackSuppression, NagSuppressions
from constructs import IConstruct

MIN_REASON_WORDS = 10


def suppress(
    construct: IConstruct,
    rule: str,
    reason: str,
    *,
    applies_to: Sequence[str] | None = None,
    children: bool = False,
) -> None:
    """Suppress AwsSolutions-``rule`` on ``construct`` (and its children if asked)."""
    if len(reason.split()) < MIN_REASON_WORDS:
        raise ValueError(
            f"the reason for suppressing {rule} needs at least {MIN_REASON_WORDS} words: {reason!r}"
        )
    NagSuppressions.add_resource_suppressions(
        construct,
        [
            NagPackSuppression(
                id=f"AwsSolutions-{rule}",
                reason=reason,
                applies_to=list(applies_to) if applies_to else None,
            )
        ],
        apply_to_children=children,
    )


def managed_policy(name: str) -> str:
    """An AWS managed policy as cdk-nag names it in IAM4 findings."""
    return f"Policy::arn:<AWS::Partition>:iam::aws:policy/{name}"


# The wildcard actions CDK's bucket and key grants use (object-level verbs, not a service).
S3_GRANT_ACTIONS = [
    f"Action::s3:{a}" for a in ("GetObject*", "GetBucket*", "List*", "DeleteObject*", "Abort*")
]
KMS_GRANT_ACTIONS = ["Action::kms:ReEncrypt*", "Action::kms:GenerateDataKey*"]


def ref(resource: IConstruct) -> str:
    """``<LogicalId>``: how cdk-nag writes a reference to the resource in a finding."""
    child = resource.node.default_child
    assert child is not None
    return f"<{Stack.of(resource).get_logical_id(child)}>"  # type: ignore[arg-type]


def _arn(resource: IConstruct) -> str:
    return f"{ref(resource)[:-1]}.Arn>"


def account_and_region(scope: IConstruct) -> tuple[str, str]:
    """The stack's account and region as findings show them (pseudo parameters if unset)."""
    stack = Stack.of(scope)
    account = "<AWS::AccountId>" if Token.is_unresolved(stack.account) else stack.account
    region = "<AWS::Region>" if Token.is_unresolved(stack.region) else stack.region
    return account, region


def objects(bucket: s3.IBucket, prefix: str) -> str:
    """The IAM5 finding of a grant on the objects under ``prefix`` of ``bucket``."""
    return f"Resource::{_arn(bucket)}/{prefix}*"


def indexes(table: ddb.ITable) -> str:
    """The IAM5 finding of a grant on a table's indexes (``table/index/*``)."""
    return f"Resource::{_arn(table)}/index/*"
