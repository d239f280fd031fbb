"""Issue 27, points 4 and 6: preview outputs expire, the two KMS keys and how roles may use
them, the sweeps run alone and end before their next run, the Lambda Web Adapter layer and
its async init."""

from __future__ import annotations

import json
from typing import Any

from zerocode_infra.config import DEFAULTS, LWA_VERSION, RESTORE_MARGIN_DAYS
from zerocode_infra.keys import KEY_ACTIONS
from zerocode_infra.storage import PREVIEW_TAG
from zerocode_infra.teardown import retained

from tests.infra.conftest import REGION, Synth
from tests.infra.test_stack import (
    PREVIEWS,
    SWEEP,
    _list,
    env,
    lambda_function,
    policy_statements,
    refs,
    role_of,
)

MINUTES = {"minute": 60, "minutes": 60, "hour": 3600, "hours": 3600, "day": 86400, "days": 86400}


def seconds(rate: str) -> int:
    """``rate(5 minutes)`` in seconds."""
    value, unit = rate.removeprefix("rate(").removesuffix(")").split()
    return int(value) * MINUTES[unit]


# -- point 4: preview outputs expire ----------------------------------------------------------


def test_tagged_preview_outputs_expire_and_nothing_else_does_by_tag(synth: Synth) -> None:
    """One rule, filtered by the tag alone (a preview's site under builds/ and its check
    under checks/), after previewOutputDays; deploy builds are never tagged
    (tests/integration/adapters/test_codebuild_builder.py), so they have no rule at all."""
    from zerocode.adapters.aws.codebuild_builder import PREVIEW_TAG as WRITTEN

    assert PREVIEW_TAG == WRITTEN  # what the builder writes is what the rule expires
    (bucket,) = refs(env(synth, "run.sh")["ZEROCODE_BUILDS_BUCKET"])
    rules = synth.props(bucket)["LifecycleConfiguration"]["Rules"]
    tagged = [r for r in rules if "TagFilters" in r]
    assert tagged == [
        {
            "Id": "PreviewOutputs",
            "Status": "Enabled",
            "TagFilters": [{"Key": "zerocode:purpose", "Value": "preview"}],
            "ExpirationInDays": DEFAULTS["previewOutputDays"],
        }
    ]
    # Nothing else expires builds/ or checks/: no prefix rule reaches them.
    for kept in ("builds/", "checks/", "preview-covers/"):
        assert not [r for r in rules if kept.startswith(r.get("Prefix", "-"))], kept


def test_no_pointer_outlives_the_output_it_names() -> None:
    """The API stops restoring a preview RESTORE_MARGIN_DAYS before its output expires, and
    the sweep removes pointers after previewIdleDays; the defaults leave that window open,
    and infra and the platform agree on the margin."""
    from zerocode.publishing import eviction

    assert RESTORE_MARGIN_DAYS == eviction.RESTORE_MARGIN_DAYS
    assert DEFAULTS["previewOutputDays"] > DEFAULTS["previewIdleDays"] + RESTORE_MARGIN_DAYS


def test_the_api_knows_when_preview_outputs_expire(synth: Synth) -> None:
    from zerocode.bootstrap.settings import Settings

    variables = env(synth, "run.sh")
    assert variables["ZEROCODE_PREVIEW_OUTPUT_DAYS"] == str(DEFAULTS["previewOutputDays"])
    assert variables["ZEROCODE_PREVIEW_IDLE_DAYS"] == str(DEFAULTS["previewIdleDays"])
    assert Settings(preview_output_days=60).preview_output_days == 60


def test_previews_are_written_with_their_tag(synth: Synth) -> None:
    """A PutObject with a tag needs s3:PutObjectTagging: both writers of builds/ and checks/
    (the API as the poller, build_events) have it on exactly those prefixes; the API, which
    flips previews, may also take a tag off (s3:DeleteObjectTagging)."""
    from tests.infra.test_stack import object_prefixes

    (bucket,) = refs(env(synth, "run.sh")["ZEROCODE_BUILDS_BUCKET"])
    for handler in ("run.sh", "handler.handler"):
        prefixes = object_prefixes(synth, handler, bucket)
        for prefix in ("builds/", "checks/"):
            actions = prefixes[prefix]
            assert {"s3:PutObject", "s3:PutObjectTagging"} <= actions or "s3:PutObject*" in (
                actions
            ), (handler, prefix)
    api = object_prefixes(synth, "run.sh", bucket)
    for prefix in ("builds/", "checks/"):
        assert "s3:DeleteObjectTagging" in api[prefix], prefix


# -- point 6: two keys, each used only through its service -----------------------------------


def keys(synth: Synth) -> tuple[str, str]:
    """(the builds bucket's key, the model secret's key)."""
    (bucket,) = refs(env(synth, "run.sh")["ZEROCODE_BUILDS_BUCKET"])
    rule = synth.props(bucket)["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]
    (builds_key,) = refs(rule["ServerSideEncryptionByDefault"]["KMSMasterKeyID"])
    (secret,) = refs(env(synth, "run.sh")["ZEROCODE_MODEL_API_KEY_SECRET_ARN"])
    (model_key,) = refs(synth.props(secret)["KmsKeyId"])
    return builds_key, model_key


def logs_key(synth: Synth) -> str:
    """The one key every log group is encrypted with (zerocode_infra/log_groups.py)."""
    groups = synth.of_type("AWS::Logs::LogGroup")
    (key,) = {k for g in groups.values() for k in refs(g["Properties"]["KmsKeyId"])}
    return key


def test_builds_the_model_secret_and_the_logs_have_a_key_each(synth: Synth) -> None:
    builds_key, model_key = keys(synth)
    assert len({builds_key, model_key, logs_key(synth)}) == 3
    assert set(synth.of_type("AWS::KMS::Key")) == {builds_key, model_key, logs_key(synth)}
    for key in (builds_key, model_key, logs_key(synth)):
        assert synth.props(key)["EnableKeyRotation"] is True
    # CloudFront reads the builds bucket; nothing outside the account reads the secret.
    for key, cloudfront in ((builds_key, 1), (model_key, 0)):
        statements = synth.props(key)["KeyPolicy"]["Statement"]
        found = [
            s for s in statements if s.get("Principal") == {"Service": "cloudfront.amazonaws.com"}
        ]
        assert len(found) == cloudfront, key
    # Only the API reads the secret, and the key policy lets it only through Secrets Manager.
    api_role = role_of(synth, "run.sh")
    roles = set(synth.of_type("AWS::IAM::Role"))
    readers = [
        s
        for s in synth.props(model_key)["KeyPolicy"]["Statement"]
        if refs(s.get("Principal")) & roles
    ]
    assert [refs(s["Principal"]) for s in readers] == [{api_role}]
    assert "kms:Decrypt" in _list(readers[0]["Action"])
    assert readers[0]["Condition"]["StringEquals"]["kms:ViaService"] == (
        f"secretsmanager.{REGION}.amazonaws.com"
    )


def key_statements(synth: Synth, role: str, key: str) -> list[dict[str, Any]]:
    return [
        s
        for s in policy_statements(synth, role)
        if any(str(a).startswith("kms:") for a in _list(s["Action"])) and key in refs(s["Resource"])
    ]


def test_every_role_uses_a_key_only_through_its_service(synth: Synth) -> None:
    """A function role that may use a key carries a Deny of every data action on it unless
    kms:ViaService is the service owning the data; CDK's bucket grants add the key's
    actions unconditioned, which the Deny narrows. The model key is nobody's but the API's."""
    builds_key, model_key = keys(synth)
    s3 = f"s3.{REGION}.amazonaws.com"
    secrets = f"secretsmanager.{REGION}.amazonaws.com"
    expected = {
        "run.sh": {builds_key: s3, model_key: secrets},
        "handler.handler": {builds_key: s3},
        SWEEP: {builds_key: s3},
        PREVIEWS: {},
    }
    for handler, uses in expected.items():
        role = role_of(synth, handler)
        # No role holds the logs key: CloudWatch Logs uses it (the key policy, below).
        assert key_statements(synth, role, logs_key(synth)) == [], handler
        for key in (builds_key, model_key):
            statements = key_statements(synth, role, key)
            denies = [s for s in statements if s["Effect"] == "Deny"]
            if key not in uses:
                assert statements == [], (handler, key)
                continue
            assert denies == [
                {
                    "Sid": f"KeyOnlyThrough{uses[key].split('.')[0].capitalize()}",
                    "Effect": "Deny",
                    "Action": KEY_ACTIONS,
                    "Resource": denies[0]["Resource"],
                    "Condition": {"StringNotEquals": {"kms:ViaService": uses[key]}},
                }
            ], (handler, key)
            allowed = {
                str(a) for s in statements if s["Effect"] == "Allow" for a in _list(s["Action"])
            }
            # Every action an allow names is one the Deny covers.
            assert all(
                any(d == a or (a.endswith("*") and d.startswith(a[:-1])) for d in KEY_ACTIONS)
                for a in allowed
            ), (handler, allowed)


# -- point 6: the sweeps run alone, and end before their next run ----------------------------


def schedule_of(synth: Synth, function_id: str) -> str:
    (rule,) = [
        r["Properties"]
        for r in synth.of_type("AWS::Events::Rule").values()
        if "ScheduleExpression" in r["Properties"]
        and function_id in refs(r["Properties"]["Targets"][0]["Arn"])
    ]
    return str(rule["ScheduleExpression"])


def test_each_sweep_runs_alone_and_ends_before_its_next_run(synth: Synth) -> None:
    for handler, every in ((SWEEP, 300), (PREVIEWS, 86400)):
        function_id, fn = lambda_function(synth, handler)
        assert fn["ReservedConcurrentExecutions"] == 1, handler
        assert seconds(schedule_of(synth, function_id)) == every
        assert fn["Timeout"] < every, handler
    # A deletion sweep run that could not start within its period is dropped, not queued.
    deletion_id, _ = lambda_function(synth, SWEEP)
    (config,) = [
        c["Properties"]
        for c in synth.of_type("AWS::Lambda::EventInvokeConfig").values()
        if deletion_id in refs(c["Properties"]["FunctionName"])
    ]
    assert config["MaximumEventAgeInSeconds"] == 300


# -- point 6: the Lambda Web Adapter --------------------------------------------------------


def test_the_api_runs_the_current_adapter_layer_with_async_init(synth: Synth) -> None:
    _, api = lambda_function(synth, "run.sh")
    (adapter,) = [layer for layer in api["Layers"] if isinstance(layer, str)]
    assert adapter == f"arn:aws:lambda:{REGION}:753240598075:layer:LambdaAdapterLayerArm64:30"
    assert LWA_VERSION == 30
    assert api["Environment"]["Variables"]["AWS_LWA_ASYNC_INIT"] == "true"


def test_every_log_group_is_encrypted_with_a_key_only_cloudwatch_logs_uses(synth: Synth) -> None:
    """checkov CKV_AWS_158: the log groups' key admits the Region's logs service, for log
    groups of this account only, and no role (test above)."""
    key = logs_key(synth)
    groups = synth.of_type("AWS::Logs::LogGroup")
    assert len(groups) >= 6  # the four functions, the API's access logs, the builds
    assert all(refs(g["Properties"]["KmsKeyId"]) == {key} for g in groups.values())
    (logs,) = [
        s
        for s in synth.props(key)["KeyPolicy"]["Statement"]
        if s.get("Principal") == {"Service": f"logs.{REGION}.amazonaws.com"}
    ]
    assert logs["Action"] == KEY_ACTIONS
    (arn,) = logs["Condition"]["ArnLike"].values()
    assert list(logs["Condition"]["ArnLike"]) == ["kms:EncryptionContext:aws:logs:arn"]
    assert ":log-group:*" in json.dumps(arn) and f":logs:{REGION}:" in json.dumps(arn)
    others = [
        s
        for s in synth.props(key)["KeyPolicy"]["Statement"]
        if s is not logs and "Service" in s.get("Principal", {})
    ]
    assert others == []


class _Deployed:
    """CloudFormation's GetTemplate for the synthesized template (the teardown reads it)."""

    def __init__(self, raw: dict[str, Any]) -> None:
        self.raw = raw

    def get_template(self, **_: Any) -> dict[str, Any]:
        return {"TemplateBody": self.raw}


def test_the_teardown_refuses_the_default_stack_whose_buckets_are_retained(synth: Synth) -> None:
    """Every bucket of the default template is kept on delete, and the teardown
    (zerocode_infra/teardown.py) reads it so; tests/integration/operations runs it."""
    buckets = synth.of_type("AWS::S3::Bucket")
    assert buckets and all(b.get("DeletionPolicy") == "Retain" for b in buckets.values())
    assert retained(_Deployed(synth.raw), "ZerocodeStack")
    destroyable = {
        name: {**r, "DeletionPolicy": "Delete"} if r["Type"] == "AWS::S3::Bucket" else r
        for name, r in synth.resources.items()
    }
    assert not retained(_Deployed({**synth.raw, "Resources": destroyable}), "ZerocodeStack")
