"""The model endpoint's API key, in Secrets Manager, under a KMS key of its own.

The stack creates it with a random placeholder; the operator stores the real key
(docs/operations.md). Functions read it once per container, at cold start, and cache it.
Its KMS key encrypts this secret and nothing else (the builds bucket has its own,
``storage.Storage.key``), and the API function, its one reader, may use it only through
Secrets Manager (``keys.only_through``).
"""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_kms as kms
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from zerocode_infra.nag import suppress


def model_key_secret(scope: Construct, *, removal_policy: RemovalPolicy) -> secretsmanager.Secret:
    key = kms.Key(
        scope,
        "ModelApiKeyEncryption",
        enable_key_rotation=True,
        removal_policy=removal_policy,
        description="zerocode: the model API key's secret, nothing else",
    )
    secret = secretsmanager.Secret(
        scope,
        "ModelApiKey",
        encryption_key=key,
        removal_policy=removal_policy,
        description="API key of the zerocode model endpoint (store the real key here)",
        generate_secret_string=secretsmanager.SecretStringGenerator(
            exclude_punctuation=True, password_length=40
        ),
    )
    suppress(
        secret,
        "SMG4",
        "The secret is a third-party model provider's API key; only "
        "the provider can issue a new one, so rotation is the operator's "
        "documented manual step, not a Lambda rotation function.",
    )
    return secret
