"""AWS build isolation on the synthesized template (issue 11, docs/security.md).

CodeBuild's own role holds no tenant data: it cannot list the builds bucket, read
``sources/`` or write ``builds/``. A build's data access comes only from the build data
role, which only the API function (the one that starts builds) may assume, for no longer
than a build can last, and whose policy bounds every per-build session policy.
"""

from __future__ import annotations

import json
from fnmatch import fnmatchcase
from typing import Any

from tests.infra.conftest import Synth
from tests.infra.test_stack import (
    _list,
    env,
    policy_statements,
    refs,
    role_of,
)
from zerocode.adapters.aws.codebuild_builder import CREDENTIAL_SECONDS, session_policy

BUCKET_ARN = "arn:aws:s3:::zc-builds"
LAMBDA_MANAGED = ("/AWSLambdaBasicExecutionRole", "/AWSLambdaVPCAccessExecutionRole")


def codebuild_role(synth: Synth) -> str:
    _, project = synth.one("AWS::CodeBuild::Project")
    (role,) = refs(project["ServiceRole"])
    return role


def data_role(synth: Synth) -> str:
    (role,) = refs(env(synth, "run.sh")["ZEROCODE_BUILD_DATA_ROLE_ARN"])
    assert synth.resources[role]["Type"] == "AWS::IAM::Role"
    return role


def builds_bucket(synth: Synth) -> str:
    (bucket,) = refs(env(synth, "run.sh")["ZEROCODE_BUILDS_BUCKET"])
    return bucket


def every_statement(synth: Synth, role: str) -> list[dict[str, Any]]:
    """The role's statements: attached policies, inline policies, managed policies made in
    the stack. Of AWS managed policies only Lambda's execution policies (logs, network
    interfaces) may be attached."""
    props = synth.props(role)
    for arn in props.get("ManagedPolicyArns", []):
        assert any(f'{name}"' in json.dumps(arn) for name in LAMBDA_MANAGED), (role, arn)
    inline = [s for p in props.get("Policies", []) for s in p["PolicyDocument"]["Statement"]]
    return [*policy_statements(synth, role), *inline]  # policy_statements: managed ones too


def grants(statement: dict[str, Any], action: str) -> bool:
    return statement["Effect"] == "Allow" and any(
        fnmatchcase(action, str(a)) for a in _list(statement["Action"])
    )


def rendered(resource: Any, synth: Synth) -> str:
    """An S3 resource of the template as an ARN of the bucket "zc-builds" (other buckets
    render as their logical id, so they never match)."""
    if isinstance(resource, str):
        return resource
    if "Fn::GetAtt" in resource:
        (target,) = refs(resource)
        return BUCKET_ARN if target == builds_bucket(synth) else f"<{target}>"
    if "Fn::Join" in resource:
        separator, parts = resource["Fn::Join"]
        return str(separator).join(rendered(p, synth) for p in parts)
    return f"<{sorted(refs(resource))}>"


def s3_resources(synth: Synth, statements: list[dict[str, Any]]) -> set[tuple[str, str]]:
    return {
        (str(a), rendered(r, synth))
        for s in statements
        if s["Effect"] == "Allow"
        for a in _list(s["Action"])
        if str(a).startswith("s3:")
        for r in _list(s["Resource"])
    }


def allowed_by(statements: list[dict[str, Any]], synth: Synth, action: str, resource: str) -> bool:
    return any(
        grants(s, action)
        and any(fnmatchcase(resource, rendered(r, synth)) for r in _list(s["Resource"]))
        for s in statements
    )


# -- CodeBuild's role ----------------------------------------------------------------------


def test_codebuild_role_holds_no_tenant_data_rights(synth: Synth) -> None:
    role = codebuild_role(synth)
    statements = every_statement(synth, role)
    assert s3_resources(synth, statements) == {
        ("s3:GetObject", f"{BUCKET_ARN}/cache/*"),
        ("s3:PutObject", f"{BUCKET_ARN}/cache/*"),
        ("s3:GetBucketAcl", BUCKET_ARN),
        ("s3:GetBucketLocation", BUCKET_ARN),
    }
    for action, key in (
        ("s3:ListBucket", ""),
        ("s3:ListBucketVersions", ""),
        ("s3:GetObject", "/sources/app1/b1.zip"),
        ("s3:GetObject", "/builds/app1/b1/index.html"),
        ("s3:PutObject", "/builds/app1/b1/index.html"),
        ("s3:PutObject", "/sources/app1/b1.zip"),
        ("s3:DeleteObject", "/builds/app1/b1/index.html"),
        ("s3:GetObject", "/workspaces/app1/src/App.vue"),
    ):
        assert not allowed_by(statements, synth, action, BUCKET_ARN + key), (action, key)
    # ... and it cannot borrow the data role either.
    assert not any(grants(s, "sts:AssumeRole") for s in statements)
    trusted = synth.props(data_role(synth))["AssumeRolePolicyDocument"]["Statement"]
    assert role not in refs(trusted)
    assert "codebuild.amazonaws.com" not in str(trusted)


def test_the_project_has_no_source_and_no_artifacts(synth: Synth) -> None:
    _, project = synth.one("AWS::CodeBuild::Project")
    assert project["Source"]["Type"] == "NO_SOURCE"
    assert project["Artifacts"] == {"Type": "NO_ARTIFACTS"}


# -- the build data role -------------------------------------------------------------------


def test_the_build_data_role_trusts_the_api_function_for_as_long_as_a_build(synth: Synth) -> None:
    props = synth.props(data_role(synth))
    (trust,) = props["AssumeRolePolicyDocument"]["Statement"]
    assert trust == {
        "Action": "sts:AssumeRole",
        "Effect": "Allow",
        "Principal": {"AWS": {"Fn::GetAtt": [role_of(synth, "run.sh"), "Arn"]}},
    }
    _, project = synth.one("AWS::CodeBuild::Project")
    longest_build = 60 * (project["TimeoutInMinutes"] + project["QueuedTimeoutInMinutes"])
    # The builder asks for credentials that outlive a queued and running build; IAM's
    # least maximum session (one hour) allows that, and nothing longer is allowed.
    assert longest_build <= CREDENTIAL_SECONDS <= props["MaxSessionDuration"] == 3600


def test_only_the_api_function_may_assume_the_build_data_role(synth: Synth) -> None:
    role = data_role(synth)
    holders = set()
    for policy in synth.role_policies().values():
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            if grants(statement, "sts:AssumeRole"):
                assert "*" not in _list(statement["Resource"])
                if role in refs(statement["Resource"]):
                    holders |= refs(policy["Properties"]["Roles"])
    assert holders == {role_of(synth, "run.sh")}
    events = role_of(synth, "handler.handler")
    assert not any(grants(s, "sts:AssumeRole") for s in every_statement(synth, events))
    assert "ZEROCODE_BUILD_DATA_ROLE_ARN" not in env(synth, "handler.handler")


def test_the_build_data_role_reads_sources_and_writes_outputs_only(synth: Synth) -> None:
    statements = every_statement(synth, data_role(synth))
    assert s3_resources(synth, statements) == {
        ("s3:GetObject", f"{BUCKET_ARN}/sources/*"),
        ("s3:PutObject", f"{BUCKET_ARN}/builds/*"),
    }
    ((key_id, _),) = synth.of_type("AWS::KMS::Key").items()
    kms = [s for s in statements if any(str(a).startswith("kms:") for a in _list(s["Action"]))]
    assert [(s["Action"], refs(s["Resource"])) for s in kms] == [
        (["kms:Decrypt", "kms:GenerateDataKey"], {key_id})
    ]
    assert len(statements) == 3
    assert not allowed_by(statements, synth, "s3:ListBucket", BUCKET_ARN)


def test_every_session_policy_lies_within_the_build_data_role(synth: Synth) -> None:
    """A build's session policy (what the builder sends to STS) names only objects the data
    role's own policy covers, so the session is exactly the build's source and prefix."""
    statements = every_statement(synth, data_role(synth))
    policy = session_policy(
        "zc-builds", "sources/app1/b1700000000000abcdef.zip", "builds/app1/b1700000000000abcdef/"
    )
    for statement in policy["Statement"]:
        for action in _list(statement["Action"]):
            if str(action).startswith("s3:"):
                assert allowed_by(statements, synth, action, statement["Resource"]), action
