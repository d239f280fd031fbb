"""The data API in the stack (infra/zerocode_infra/data_api.py): the sites distribution's
``/_api/*`` to the data function's URL, with nothing cached, the viewer's Host handed on by
a viewer-request function, CloudFront's secret as a dynamic reference (never the value in
the template), and a role that reaches the app-data table, one pointer read and that
secret, and nothing else."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.infra.conftest import Synth
from tests.infra.test_site_router import HARNESS, NODE
from tests.infra.test_stack import (
    CACHING_DISABLED,
    _list,
    distribution,
    env,
    lambda_function,
    policy_statements,
    refs,
)

SITES = "zerocode published sites and previews"


def data_behavior(synth: Synth) -> dict[str, Any]:
    sites = distribution(synth, SITES)
    (behavior,) = [b for b in sites["CacheBehaviors"] if b["PathPattern"] == "/_api/*"]
    return dict(behavior)


def data_origin(synth: Synth) -> dict[str, Any]:
    sites = distribution(synth, SITES)
    behavior = data_behavior(synth)
    (origin,) = [o for o in sites["Origins"] if o["Id"] == behavior["TargetOriginId"]]
    return dict(origin)


def test_api_paths_reach_the_function_url_uncached_for_every_method(synth: Synth) -> None:
    behavior = data_behavior(synth)
    assert behavior["CachePolicyId"] == CACHING_DISABLED
    assert set(behavior["AllowedMethods"]) == {
        "GET",
        "HEAD",
        "OPTIONS",
        "PUT",
        "PATCH",
        "POST",
        "DELETE",
    }
    assert behavior["ViewerProtocolPolicy"] == "https-only"  # a POST is never redirected
    assert "ResponseHeadersPolicyId" not in behavior  # no CORS header, ever
    assert "LambdaFunctionAssociations" not in behavior
    origin = data_origin(synth)
    fn_id, _ = lambda_function(synth, "serve.sh")
    (url_id,) = refs(origin["DomainName"])
    url = synth.props(url_id)
    assert synth.resources[url_id]["Type"] == "AWS::Lambda::Url"
    assert refs(url["TargetFunctionArn"]) == {fn_id} and url["AuthType"] == "NONE"
    assert origin["CustomOriginConfig"]["OriginProtocolPolicy"] == "https-only"


def test_cloudfronts_secret_is_a_reference_to_secrets_manager_never_a_value(
    synth: Synth,
) -> None:
    from zerocode.entrypoints.lambda_data_api import ORIGIN_SECRET

    (header,) = data_origin(synth)["OriginCustomHeaders"]
    assert header["HeaderName"] == ORIGIN_SECRET
    value = json.dumps(header["HeaderValue"])
    assert "{{resolve:secretsmanager:" in value
    (secret_id,) = refs(header["HeaderValue"])
    assert synth.resources[secret_id]["Type"] == "AWS::SecretsManager::Secret"
    generated = synth.props(secret_id)["GenerateSecretString"]
    assert generated["PasswordLength"] >= 32
    assert refs(env(synth, "serve.sh")["ZEROCODE_DATA_ORIGIN_SECRET_ARN"]) == {secret_id}


def test_the_forwarded_headers_are_those_the_api_reads_and_never_host(synth: Synth) -> None:
    (policy_id,) = refs(data_behavior(synth)["OriginRequestPolicyId"])
    config = synth.props(policy_id)["OriginRequestPolicyConfig"]
    headers = {h.lower() for h in config["HeadersConfig"]["Headers"]}
    assert headers == {
        "origin",
        "content-type",
        "x-zerocode-host",
        "x-zerocode-check",
        "cloudfront-viewer-address",
    }
    assert config["HeadersConfig"]["HeaderBehavior"] == "whitelist"
    assert config["CookiesConfig"]["CookieBehavior"] == "all"  # the session cookie
    assert config["QueryStringsConfig"]["QueryStringBehavior"] == "all"  # filters, cursors


def test_the_data_function_reaches_its_table_one_pointer_read_and_its_secret(
    synth: Synth,
) -> None:
    fn_id, fn = lambda_function(synth, "serve.sh")
    (role_id,) = refs(fn["Role"])
    variables = env(synth, "serve.sh")
    (app_data,) = refs(variables["ZEROCODE_APP_DATA_TABLE"])
    granted: dict[str, set[str]] = {}
    for statement in policy_statements(synth, role_id):
        for action in _list(statement["Action"]):
            for resource in _list(statement["Resource"]):
                granted.setdefault(action, set()).update(refs(resource) or {str(resource)})
    services = {a.split(":")[0] for a in granted}
    assert services == {"dynamodb", "secretsmanager", "xray"}
    assert granted["dynamodb:PutItem"] == {app_data}
    assert granted["dynamodb:Query"] == {app_data}
    assert not any(a.startswith("dynamodb:Scan") for a in granted)
    pointer_tables = granted["dynamodb:GetItem"] - {app_data}
    assert len(pointer_tables) == 1  # the pointer table, read only
    (pointers,) = pointer_tables
    writes = ("dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem")
    assert not any(pointers in granted.get(a, set()) for a in writes)
    # No distribution, bucket, user pool or model key is named in its settings.
    names = set(variables)
    assert not {n for n in names if "BUCKET" in n or "COGNITO" in n or "MODEL" in n}
    assert "ZEROCODE_SITES_URL" not in names  # no sites domain in this profile: 404s
    assert fn_id


def test_the_settings_it_is_given_are_real_settings(synth: Synth) -> None:
    from zerocode.bootstrap.settings import Settings

    fields = {f"ZEROCODE_{name.upper()}" for name in Settings.model_fields}
    given = {n for n in env(synth, "serve.sh") if n.startswith("ZEROCODE_")}
    assert given <= fields, given - fields


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_the_viewer_function_hands_on_the_viewers_host_over_a_forged_one(
    synth: Synth, tmp_path: Path
) -> None:
    behavior = data_behavior(synth)
    ((association,),) = [behavior["FunctionAssociations"]]
    assert association["EventType"] == "viewer-request"
    (function_id,) = refs(association["FunctionARN"])
    code = synth.props(function_id)["FunctionCode"]
    function = tmp_path / "data_api_viewer.js"
    function.write_text("import cf from 'cloudfront';\n" + code)  # the harness's loader
    events = [
        {
            "request": {
                "uri": "/_api/data/notes",
                "method": "POST",
                "querystring": {},
                "headers": {
                    "host": {"value": "deploykey1.sites.example.com"},
                    "x-zerocode-host": {"value": "victim1.sites.example.com"},
                },
            }
        },
        {"request": {"uri": "/_api/auth/me", "method": "GET", "querystring": {}, "headers": {}}},
    ]
    assert NODE is not None
    proc = subprocess.run(
        [NODE, str(HARNESS), str(function)],
        input=json.dumps({"kvs": {}, "events": events}),
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    first, second = json.loads(proc.stdout)
    assert first["headers"]["x-zerocode-host"] == {"value": "deploykey1.sites.example.com"}
    assert first["uri"] == "/_api/data/notes"  # the path is left as it came
    assert second["headers"]["x-zerocode-host"] == {"value": ""}
