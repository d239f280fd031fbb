"""The stack's two customer KMS keys, and how a role may use them: through one service only.

The builds key (``storage.Storage.key``) encrypts the builds bucket; the model key
(``model_key``) encrypts the model API key's secret and nothing else, so a grant on one
never reaches the other. A role that uses a key gets :func:`only_through`: a Deny of the
key's data actions unless the request comes through the service that owns the data
(``kms:ViaService``: S3 for the builds bucket, Secrets Manager for the secret). It is a Deny
because CDK's bucket grants add the key's actions to a role without a condition; the Deny
covers those and any grant added later, and leaves the service's own calls (S3 decrypting
an object for the role, Secrets Manager the secret) untouched.
"""

from __future__ import annotations

from aws_cdk import Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_

# Every data action CDK's key grants can name (Decrypt, DescribeKey, Encrypt, ReEncrypt*,
# GenerateDataKey*), spelled out: no wildcard action in any policy of the stack.
KEY_ACTIONS = [
    "kms:Decrypt",
    "kms:DescribeKey",
    "kms:Encrypt",
    "kms:GenerateDataKey",
    "kms:GenerateDataKeyPair",
    "kms:GenerateDataKeyPairWithoutPlaintext",
    "kms:GenerateDataKeyWithoutPlaintext",
    "kms:ReEncryptFrom",
    "kms:ReEncryptTo",
]


def via(service: str, scope: kms.IKey) -> str:
    """The ``kms:ViaService`` value of ``service`` (``s3``, ``secretsmanager``) here."""
    return f"{service}.{Stack.of(scope).region}.amazonaws.com"


def only_through(fn: lambda_.Function, uses: list[tuple[kms.IKey, str]]) -> iam.Policy:
    """``fn``'s role may use each key only in requests its service makes for it. A policy
    of its own, so the role's default policy (and what CDK moves into overflow policies
    when that grows) stays as it was."""
    assert fn.role is not None
    return iam.Policy(
        fn,
        "KeysOnlyThroughTheirServices",
        roles=[fn.role],
        statements=[
            iam.PolicyStatement(
                sid=f"KeyOnlyThrough{service.capitalize()}",
                effect=iam.Effect.DENY,
                actions=KEY_ACTIONS,
                resources=[key.key_arn],
                conditions={"StringNotEquals": {"kms:ViaService": via(service, key)}},
            )
            for key, service in uses
        ],
    )
