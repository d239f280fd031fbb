"""The synthesized ZerocodeStack made real on moto's server, from the template itself.

:func:`synthesize` runs the CDK app as ``make synth`` does (bundling skipped, as in
tests/infra). :func:`create_on_moto` then creates what the platform's code talks to from
the template's own resource properties, so key schemas, indexes, TTL attributes, bucket
encryption and versioning, the user pool's password policy and username rules, the app
client's auth flows, the admin group and the model secret are what infra/ defines, not a
copy of it:

=====================================  =========================================================
AWS::KMS::Key                          moto KMS
AWS::DynamoDB::Table                   moto DynamoDB (keys, GSIs, billing, SSE, TTL)
AWS::S3::Bucket                        moto S3 (encryption, versioning, public access block)
AWS::Cognito::UserPool / Client /      moto Cognito (every property the API takes; triggers
UserPoolGroup                          left out: no Lambda runs here)
AWS::SecretsManager::Secret            moto Secrets Manager (its GenerateSecretString)
AWS::CloudFront::KeyValueStore         moto CloudFront (control plane); its data plane is
                                       tests/aws_standins.py
AWS::CodeBuild::Project                tests/aws_standins.py (registered by the caller)
AWS::IAM::Role                         moto IAM, by name only (a CodeBuild run's session of
                                       the project's role names it; no policy is enforced)
=====================================  =========================================================

Resources nothing here calls (distributions, the cache) get names or attributes of
the right form so the functions' environments resolve. :meth:`MotoStack.function_environment`
is a function's ``Environment.Variables`` with every ``Ref`` / ``Fn::GetAtt`` / ``Fn::Join``
resolved to what was created; a reference to a resource of a type this module does not know
fails, naming it, so a new kind of resource in infra/ shows up here rather than silently.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
ACCOUNT, REGION = "123456789012", "us-east-1"


def synthesize(outdir: Path, context: dict[str, Any] | None = None) -> dict[str, Any]:
    """The stack's CloudFormation template, as tests/infra synthesizes it (``context``:
    values over the defaults, a sites domain say)."""
    infra = str(ROOT / "infra")
    if infra not in sys.path:
        sys.path.append(infra)
    os.environ.setdefault("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "18,20")
    from aws_cdk.assertions import Template
    from zerocode_infra.config import DEFAULTS
    from zerocode_infra.stack import build_app

    values = {**DEFAULTS, "region": REGION, "aws:cdk:bundling-stacks": [], **(context or {})}
    _, stack = build_app(values, outdir=str(outdir))
    return dict(Template.from_stack(stack).to_json())


def _api_members(client: Any, operation: str) -> set[str]:
    return set(client.meta.service_model.operation_model(operation).input_shape.members)


def _only(client: Any, operation: str, props: dict[str, Any]) -> dict[str, Any]:
    """The properties the API operation takes under the same name (CloudFormation's names
    for Cognito and Secrets Manager follow their APIs)."""
    members = _api_members(client, operation)
    return {k: v for k, v in props.items() if k in members}


@dataclass
class MotoStack:
    template: dict[str, Any]
    prefix: str
    refs: dict[str, str] = field(default_factory=dict)  # logical id -> what Ref gives
    attributes: dict[tuple[str, str], str] = field(default_factory=dict)

    @property
    def resources(self) -> dict[str, dict[str, Any]]:
        resources: dict[str, dict[str, Any]] = self.template["Resources"]
        return resources

    def of_type(self, kind: str) -> dict[str, dict[str, Any]]:
        return {k: v.get("Properties", {}) for k, v in self.resources.items() if v["Type"] == kind}

    def physical(self, logical_id: str) -> str:
        return re.sub(r"[^a-z0-9-]", "-", f"{self.prefix}-{logical_id}".lower())[:63]

    def resolve(self, value: Any) -> Any:
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        if not isinstance(value, dict):
            return value
        if set(value) == {"Ref"}:
            return self._ref(value["Ref"])
        if set(value) == {"Fn::GetAtt"}:
            logical_id, attribute = value["Fn::GetAtt"]
            return self._attribute(logical_id, attribute)
        if set(value) == {"Fn::Join"}:
            separator, parts = value["Fn::Join"]
            return separator.join(str(self.resolve(p)) for p in parts)
        return {k: self.resolve(v) for k, v in value.items()}

    def _ref(self, name: str) -> str:
        pseudo = {
            "AWS::Region": REGION,
            "AWS::AccountId": ACCOUNT,
            "AWS::Partition": "aws",
            "AWS::URLSuffix": "amazonaws.com",
        }
        if name in pseudo:
            return pseudo[name]
        if name not in self.refs:
            raise KeyError(f"{name} ({self._type(name)}) is not made by tests/aws_stack.py")
        return self.refs[name]

    def _attribute(self, logical_id: str, attribute: str) -> str:
        if (logical_id, attribute) not in self.attributes:
            raise KeyError(
                f"{logical_id}.{attribute} ({self._type(logical_id)}) is not made by "
                "tests/aws_stack.py"
            )
        return self.attributes[(logical_id, attribute)]

    def _type(self, logical_id: str) -> str:
        return str(self.resources.get(logical_id, {}).get("Type", "not in the template"))

    def function_environment(self, description: str) -> dict[str, str]:
        """The resolved environment of the Lambda function with this Description."""
        (props,) = [
            p
            for p in self.of_type("AWS::Lambda::Function").values()
            if p.get("Description") == description
        ]
        variables: dict[str, Any] = props["Environment"]["Variables"]
        return {name: str(self.resolve(value)) for name, value in variables.items()}

    def tables(self) -> dict[str, str]:
        return {k: self.refs[k] for k in self.of_type("AWS::DynamoDB::Table")}

    def buckets(self) -> dict[str, str]:
        return {k: self.refs[k] for k in self.of_type("AWS::S3::Bucket")}


def create_on_moto(
    template: dict[str, Any],
    client: Callable[[str], Any],
    prefix: str,
    codebuild_project: Callable[[str, dict[str, Any]], None],
    key_value_store: Callable[[str], None],
) -> MotoStack:
    """Create the template's data, identity and secret resources with ``client(service)``
    (boto3 clients on moto's server); CodeBuild projects and KeyValueStore data planes are
    handed to the stand-ins' callbacks (name and definition; ARN)."""
    stack = MotoStack(template, prefix)
    _placeholders(stack)
    for logical_id in stack.of_type("AWS::IAM::Role"):  # real ones: sessions name them
        made = client("iam").create_role(
            RoleName=stack.physical(logical_id), AssumeRolePolicyDocument="{}"
        )["Role"]
        stack.attributes[(logical_id, "Arn")] = made["Arn"]
        stack.attributes[(logical_id, "RoleId")] = made["RoleId"]
    for logical_id, props in stack.of_type("AWS::KMS::Key").items():
        kms = client("kms")
        key = kms.create_key(
            # The key policy names the stack's roles; its tags are another shape in KMS's API.
            **_only(
                kms, "CreateKey", {k: v for k, v in props.items() if k not in ("KeyPolicy", "Tags")}
            )
        )["KeyMetadata"]
        if props.get("EnableKeyRotation"):
            kms.enable_key_rotation(KeyId=key["KeyId"])
        stack.refs[logical_id] = key["KeyId"]
        stack.attributes[(logical_id, "Arn")] = key["Arn"]
    for logical_id, props in stack.of_type("AWS::DynamoDB::Table").items():
        _table(stack, client("dynamodb"), logical_id, props)
    for logical_id, props in stack.of_type("AWS::S3::Bucket").items():
        _bucket(stack, client("s3"), logical_id, props)
    _cognito(stack, client("cognito-idp"))
    for logical_id, props in stack.of_type("AWS::SecretsManager::Secret").items():
        _secret(stack, client("secretsmanager"), logical_id, props)
    for logical_id, props in stack.of_type("AWS::CloudFront::KeyValueStore").items():
        made = client("cloudfront").create_key_value_store(
            Name=props.get("Name", stack.physical(logical_id)), Comment=props.get("Comment", "")
        )["KeyValueStore"]
        stack.refs[logical_id] = made["Name"]
        stack.attributes[(logical_id, "Arn")] = made["ARN"]
        stack.attributes[(logical_id, "Id")] = made["Id"]
        key_value_store(made["ARN"])
    for logical_id, props in stack.of_type("AWS::CodeBuild::Project").items():
        name = props.get("Name", stack.physical(logical_id))
        stack.refs[logical_id] = name
        stack.attributes[(logical_id, "Arn")] = (
            f"arn:aws:codebuild:{REGION}:{ACCOUNT}:project/{name}"
        )
        codebuild_project(name, props)
    return stack


def _placeholders(stack: MotoStack) -> None:
    """Names and attributes of the right form for resources nothing here calls."""
    for logical_id in stack.of_type("AWS::IAM::Role"):
        name = stack.physical(logical_id)
        stack.refs[logical_id] = name
        stack.attributes[(logical_id, "Arn")] = f"arn:aws:iam::{ACCOUNT}:role/{name}"
    for logical_id in stack.of_type("AWS::CloudFront::Distribution"):
        stack.refs[logical_id] = logical_id.upper()[:14]
        stack.attributes[(logical_id, "DomainName")] = (
            f"{stack.physical(logical_id)}.cloudfront.net"
        )
    for logical_id in stack.of_type("AWS::ElastiCache::ServerlessCache"):
        stack.refs[logical_id] = stack.physical(logical_id)
        stack.attributes[(logical_id, "Endpoint.Address")] = f"{stack.physical(logical_id)}.cache"
        stack.attributes[(logical_id, "Endpoint.Port")] = "6379"


def _table(stack: MotoStack, ddb: Any, logical_id: str, props: dict[str, Any]) -> None:
    name = stack.physical(logical_id)
    params: dict[str, Any] = {
        "TableName": name,
        "KeySchema": props["KeySchema"],
        "AttributeDefinitions": props["AttributeDefinitions"],
        "BillingMode": props.get("BillingMode", "PROVISIONED"),
    }
    for key in ("GlobalSecondaryIndexes", "LocalSecondaryIndexes", "ProvisionedThroughput"):
        if key in props:
            params[key] = props[key]
    if "DeletionProtectionEnabled" in props:
        params["DeletionProtectionEnabled"] = props["DeletionProtectionEnabled"]
    if props.get("SSESpecification", {}).get("SSEEnabled"):
        params["SSESpecification"] = {"Enabled": True}
    ddb.create_table(**params)
    ttl = props.get("TimeToLiveSpecification")
    if ttl and ttl.get("Enabled"):
        ddb.update_time_to_live(
            TableName=name,
            TimeToLiveSpecification={"Enabled": True, "AttributeName": ttl["AttributeName"]},
        )
    stack.refs[logical_id] = name
    stack.attributes[(logical_id, "Arn")] = f"arn:aws:dynamodb:{REGION}:{ACCOUNT}:table/{name}"


def _bucket(stack: MotoStack, s3: Any, logical_id: str, props: dict[str, Any]) -> None:
    name = props.get("BucketName") or stack.physical(logical_id)
    s3.create_bucket(Bucket=name)
    encryption = stack.resolve(props.get("BucketEncryption", {}))
    rules = [
        {
            "ApplyServerSideEncryptionByDefault": rule["ServerSideEncryptionByDefault"],
            **(
                {"BucketKeyEnabled": rule["BucketKeyEnabled"]} if "BucketKeyEnabled" in rule else {}
            ),
        }
        for rule in encryption.get("ServerSideEncryptionConfiguration", [])
    ]
    if rules:
        s3.put_bucket_encryption(Bucket=name, ServerSideEncryptionConfiguration={"Rules": rules})
    if "VersioningConfiguration" in props:
        s3.put_bucket_versioning(
            Bucket=name,
            VersioningConfiguration={"Status": props["VersioningConfiguration"]["Status"]},
        )
    if "PublicAccessBlockConfiguration" in props:
        s3.put_public_access_block(
            Bucket=name, PublicAccessBlockConfiguration=props["PublicAccessBlockConfiguration"]
        )
    stack.refs[logical_id] = name
    stack.attributes[(logical_id, "Arn")] = f"arn:aws:s3:::{name}"
    stack.attributes[(logical_id, "DomainName")] = f"{name}.s3.amazonaws.com"
    stack.attributes[(logical_id, "RegionalDomainName")] = f"{name}.s3.{REGION}.amazonaws.com"


# Pool properties the API takes that this e2e cannot honour: triggers invoke Lambda functions.
_POOL_LEFT_OUT = {"LambdaConfig"}


def _cognito(stack: MotoStack, cognito: Any) -> None:
    for logical_id, props in stack.of_type("AWS::Cognito::UserPool").items():
        params = _only(
            cognito,
            "CreateUserPool",
            {k: v for k, v in stack.resolve(props).items() if k not in _POOL_LEFT_OUT},
        )
        pool = cognito.create_user_pool(
            PoolName=props.get("UserPoolName", stack.physical(logical_id)), **params
        )["UserPool"]
        stack.refs[logical_id] = pool["Id"]
        stack.attributes[(logical_id, "Arn")] = pool["Arn"]
        stack.attributes[(logical_id, "ProviderName")] = pool.get("ProviderName", "")
    for logical_id, props in stack.of_type("AWS::Cognito::UserPoolClient").items():
        resolved = stack.resolve(props)
        app = cognito.create_user_pool_client(
            **_only(
                cognito,
                "CreateUserPoolClient",
                {"ClientName": stack.physical(logical_id), **resolved},
            )
        )["UserPoolClient"]
        stack.refs[logical_id] = app["ClientId"]
    for logical_id, props in stack.of_type("AWS::Cognito::UserPoolGroup").items():
        group = cognito.create_group(**_only(cognito, "CreateGroup", stack.resolve(props)))
        stack.refs[logical_id] = group["Group"]["GroupName"]


def _secret(stack: MotoStack, secrets: Any, logical_id: str, props: dict[str, Any]) -> None:
    resolved = stack.resolve(props)
    value = resolved.get("SecretString")
    generate = resolved.get("GenerateSecretString")
    if value is None and generate is not None:
        password = secrets.get_random_password(**_only(secrets, "GetRandomPassword", generate))[
            "RandomPassword"
        ]
        if "SecretStringTemplate" in generate:  # a JSON secret with the password at a key
            document = json.loads(generate["SecretStringTemplate"])
            document[generate["GenerateStringKey"]] = password
            password = json.dumps(document)
        value = password
    params = _only(secrets, "CreateSecret", resolved)
    params.pop("SecretString", None)
    made = secrets.create_secret(
        Name=resolved.get("Name", stack.physical(logical_id)),
        SecretString=value or "",
        **{k: v for k, v in params.items() if k != "Name"},
    )
    stack.refs[logical_id] = made["ARN"]
    stack.attributes[(logical_id, "Id")] = made["ARN"]
