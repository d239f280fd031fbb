"""The stack's log groups, all encrypted with one customer-managed key of their own.

Build logs carry what a build printed about model-written code, and the API's logs name
accounts and apps: reading them should need a grant on this key as well as
``logs:GetLogEvents``, and deleting the key (or disabling it) makes every log unreadable at
once. The key is the logs' alone (builds, the npm cache and the model secret have their
own: ``keys.py``). CloudWatch Logs uses it on the log groups' behalf, so its key policy
admits the Region's logs service for log groups of this account only
(<https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/encrypt-log-data-kms.html>).
"""

from __future__ import annotations

from aws_cdk import RemovalPolicy, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_logs as logs
from constructs import Construct

from zerocode_infra.keys import KEY_ACTIONS

KEY_ID = "LogsKey"
RETENTION = logs.RetentionDays.ONE_MONTH


def logs_key(scope: Construct, removal_policy: RemovalPolicy) -> kms.Key:
    """The stack's logs key, made on first use (one per stack)."""
    stack = Stack.of(scope)
    existing = stack.node.try_find_child(KEY_ID)
    if isinstance(existing, kms.Key):
        return existing
    key = kms.Key(
        stack,
        KEY_ID,
        enable_key_rotation=True,
        removal_policy=removal_policy,
        description="zerocode: the CloudWatch log groups",
    )
    key.add_to_resource_policy(
        iam.PolicyStatement(
            sid="CloudWatchLogsOfThisAccount",
            principals=[iam.ServicePrincipal(f"logs.{stack.region}.amazonaws.com")],
            actions=KEY_ACTIONS,
            resources=["*"],
            conditions={
                "ArnLike": {
                    "kms:EncryptionContext:aws:logs:arn": (
                        f"arn:{stack.partition}:logs:{stack.region}:{stack.account}:log-group:*"
                    )
                }
            },
        )
    )
    return key


def log_group(scope: Construct, id: str, *, removal_policy: RemovalPolicy) -> logs.LogGroup:
    """A log group kept a month, encrypted with the logs key."""
    return logs.LogGroup(
        scope,
        id,
        retention=RETENTION,
        removal_policy=removal_policy,
        encryption_key=logs_key(scope, removal_policy),
    )
