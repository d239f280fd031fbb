"""cdk-nag and checkov suppressions with their reasons next to the resource they excuse.

A suppression is a decision, so its reason has to say why in a sentence: ``suppress`` and
``skip_checkov`` refuse one of fewer than ten words (the infra tests check the synthesized
metadata too, and ``infra/checkov_gate.py`` every skip checkov reports).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from aws_cdk import CfnResource, Stack, Token
from aws_cdk import aws_dynamodb as ddb
from aws_cdk import aws_s3 as s3
from cdk_nag import NagPackSuppression, NagSuppressions
from constructs import IConstruct

MIN_REASON_WORDS = 10
CHECKOV_ID = re.compile(r"CKV2?_AWS_[0-9]+")


def _require_reason(what: str, reason: str) -> None:
    if len(reason.split()) < MIN_REASON_WORDS:
        raise ValueError(
            f"the reason for suppressing {what} needs at least {MIN_REASON_WORDS} words: {reason!r}"
        )


def suppress(
    construct: IConstruct,
    rule: str,
    reason: str,
    *,
    applies_to: Sequence[str] | None = None,
    children: bool = False,
) -> None:
    """Suppress AwsSolutions-``rule`` on ``construct`` (and its children if asked)."""
    _require_reason(rule, reason)
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


def skip_checkov(construct: IConstruct, check: str, reason: str) -> None:
    """Skip checkov's ``check`` on the CloudFormation resource behind ``construct``.

    checkov reads ``Metadata.checkov.skip`` (``[{id, comment}]``) of each resource and
    reports the check as skipped with the comment, so the reason travels with the template.
    """
    if not CHECKOV_ID.fullmatch(check):
        raise ValueError(f"not a checkov check id: {check!r}")
    _require_reason(check, reason)
    resource = _cfn_resource(construct)
    metadata = resource.get_metadata("checkov") or {}
    skips = [s for s in metadata.get("skip", []) if s["id"] != check]
    resource.add_metadata("checkov", {"skip": [*skips, {"id": check, "comment": reason}]})


def _cfn_resource(construct: IConstruct) -> CfnResource:
    """The CloudFormation resource a construct stands for: itself or its default child."""
    if isinstance(construct, CfnResource):
        return construct
    child = construct.node.default_child
    if isinstance(child, CfnResource):
        return child
    raise ValueError(f"no single CloudFormation resource behind {construct.node.path}")


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


# checkov's Lambda checks on a deploy-time custom resource function (CDK's own: the
# cross-region readers of SSM parameters, the build image's digest reader; the build
# image's copier), with why they do not apply.
CUSTOM_RESOURCE_SKIPS = {
    "CKV_AWS_115": "A deploy-time custom resource function runs once per deploy, invoked by "
    "CloudFormation; reserving concurrency for it would take from the account for nothing.",
    "CKV_AWS_116": "CloudFormation invokes the custom resource function and waits for its "
    "answer; a failure fails the deploy, so there is nothing for a dead-letter queue.",
    "CKV_AWS_117": "The deploy-time custom resource function calls SSM or ECR over their "
    "public endpoints with TLS; it reaches no private resource and needs no VPC.",
}
# CDK's AwsCustomResource singleton function (its fixed uuid, the construct id in the stack).
AWS_CUSTOM_RESOURCE_ID = "AWS679f53fac002430cb0da5b7982bd2287"
_EXPLAINED = "zerocode:explained"


def explain_custom_resource_function(scope: IConstruct) -> None:
    """CDK's AwsCustomResource function of ``scope``'s stack (one per stack, shared by its
    custom resources: SSM parameter readers, the build image's digest reader) to cdk-nag
    and checkov, once."""
    function = Stack.of(scope).node.try_find_child(AWS_CUSTOM_RESOURCE_ID)
    assert function is not None
    if any(entry.type == _EXPLAINED for entry in function.node.metadata):
        return
    function.node.add_metadata(_EXPLAINED, "yes")
    suppress(
        function,
        "IAM4",
        "CDK's custom resource function writes its logs by the AWS managed basic "
        "execution policy; it reads an SSM parameter or an image's digest, nothing else.",
        children=True,
        applies_to=[managed_policy("service-role/AWSLambdaBasicExecutionRole")],
    )
    suppress(
        function,
        "L1",
        "CDK picks the runtime of its own custom resource function; it runs for a few "
        "seconds at deploy time only, never on a request.",
        children=True,
    )
    resource = function.node.default_child
    assert resource is not None
    for check, reason in CUSTOM_RESOURCE_SKIPS.items():
        skip_checkov(resource, check, reason)
