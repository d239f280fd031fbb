"""Routing past the KeyValueStore (infra/zerocode_infra/routing.py, issue 27): the pointer
table, the Lambda@Edge router on origin request, its read-only grant, the viewer function
falling through to it, and the cache policy that bounds how long a routed object lives."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.infra.conftest import Synth, site_router
from tests.infra.test_site_router import run_code
from tests.infra.test_stack import distribution, env, lambda_function, policy_statements, refs

ROOT = Path(__file__).resolve().parents[2]
NODE = shutil.which("node")
EDGE_DESCRIPTION = "zerocode: /_edge/{kind}/{key}/ -> builds/{appId}/{buildId}/"


def pointer_table(synth: Synth) -> tuple[str, dict[str, Any]]:
    (table_id,) = refs(env(synth, "run.sh")["ZEROCODE_POINTERS_TABLE"])
    return table_id, synth.props(table_id)


def edge_function(synth: Synth) -> tuple[str, dict[str, Any]]:
    return synth.one("AWS::Lambda::Function", Description=EDGE_DESCRIPTION)


def test_the_pointer_table_has_the_adapters_key_and_a_fixed_name(synth: Synth) -> None:
    from tests.infra.test_stack import CapturingDynamo
    from zerocode.adapters.dynamodb.pointers import create_pointers_table

    client = CapturingDynamo()
    create_pointers_table(client, "pointers")
    _, table = pointer_table(synth)
    assert table["KeySchema"] == client.created["pointers"]["KeySchema"]
    assert table["TableName"] == "ZerocodeStack-site-pointers"  # named in the edge's config
    assert table["BillingMode"] == "PAY_PER_REQUEST"
    assert table["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    assert table["SSESpecification"]["SSEEnabled"] is True


def test_the_api_and_build_events_write_pointers_there(synth: Synth) -> None:
    table_id, _ = pointer_table(synth)
    for handler in ("run.sh", "handler.handler"):
        assert refs(env(synth, handler)["ZEROCODE_POINTERS_TABLE"]) == {table_id}
        actions = {
            a
            for s in policy_statements(synth, role_of(synth, handler))
            if table_id in refs(s["Resource"])
            for a in (s["Action"] if isinstance(s["Action"], list) else [s["Action"]])
        }
        assert actions == {"dynamodb:GetItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"}


def role_of(synth: Synth, handler: str) -> str:
    _, fn = lambda_function(synth, handler)
    (role,) = refs(fn["Role"])
    return role


def test_the_edge_router_is_a_lambda_at_edge_function_in_us_east_1(synth: Synth) -> None:
    _, fn = edge_function(synth)
    assert synth.stack.region == "us-east-1"  # Lambda@Edge functions live there only
    assert fn["Handler"] == "router.handler"
    assert fn["Runtime"] == "python3.13"
    assert fn["MemorySize"] == 256 and fn["Timeout"] == 5
    assert "Environment" not in fn  # Lambda@Edge takes none: config.json instead
    assert "Layers" not in fn and "VpcConfig" not in fn
    (role_id,) = refs(fn["Role"])
    trust = synth.props(role_id)["AssumeRolePolicyDocument"]["Statement"]
    principals = {p for s in trust for p in _list(s["Principal"]["Service"])}
    assert principals == {"lambda.amazonaws.com", "edgelambda.amazonaws.com"}


def test_the_edge_router_may_only_read_pointers(synth: Synth) -> None:
    _, fn = edge_function(synth)
    (role_id,) = refs(fn["Role"])
    table_id, _ = pointer_table(synth)
    statements = policy_statements(synth, role_id)
    assert [(s["Action"], refs(s["Resource"])) for s in statements] == [
        ("dynamodb:GetItem", {table_id})
    ]


def test_both_sites_behaviors_call_it_on_origin_request(synth: Synth) -> None:
    function_id, _ = edge_function(synth)
    sites = distribution(synth, "zerocode published sites and previews")
    behaviors = [sites["DefaultCacheBehavior"], *sites["CacheBehaviors"]]
    (data_api,) = [b for b in behaviors if b.get("PathPattern") == "/_api/*"]
    assert "LambdaFunctionAssociations" not in data_api  # the data API is no site's file
    for behavior in [b for b in behaviors if b is not data_api]:
        (association,) = behavior["LambdaFunctionAssociations"]
        assert association["EventType"] == "origin-request"
        (version,) = refs(association["LambdaFunctionARN"])
        assert synth.resources[version]["Type"] == "AWS::Lambda::Version"  # never $LATEST
        assert refs(synth.props(version)["FunctionName"]) == {function_id}
        assert behavior["FunctionAssociations"][0]["EventType"] == "viewer-request"


def test_routed_objects_live_a_minute_at_most_in_cloudfront(synth: Synth) -> None:
    """/_edge/ objects are cached by key, not by build: a publish must reach visitors."""
    sites = distribution(synth, "zerocode published sites and previews")
    (policy_id,) = refs(sites["DefaultCacheBehavior"]["CachePolicyId"])
    config = synth.props(policy_id)["CachePolicyConfig"]
    assert config["MaxTTL"] == 60 and config["DefaultTTL"] == 60 and config["MinTTL"] == 0


def test_the_viewer_function_falls_through_to_the_edge_router(synth: Synth) -> None:
    from zerocode_infra.hosting import router_code

    _, fn = site_router(synth)
    assert fn["FunctionCode"] == router_code("", edge_routing=True)
    assert "const EDGE_ROUTING = true;" in fn["FunctionCode"]


def test_the_bundle_is_the_router_and_its_config(tmp_path: Path) -> None:
    from zerocode_infra.routing import ROUTER, bundle

    directory = bundle({"table": "t", "region": "eu-west-1", "ttl_seconds": 30})
    try:
        assert sorted(p.name for p in directory.iterdir()) == ["config.json", "router.py"]
        assert (directory / "router.py").read_text() == ROUTER.read_text()
        config = json.loads((directory / "config.json").read_text())
        assert config == {"table": "t", "region": "eu-west-1", "ttl_seconds": 30}
    finally:
        shutil.rmtree(directory)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


# -- the viewer function with edge routing, under Node ------------------------------------

KVS = {"site:deploykey1": "app1/b1"}


def run(code: str, tmp_path: Path, requests: list[tuple[str, str]]) -> list[dict[str, Any]]:
    return run_code(code, tmp_path, requests, KVS)


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_a_key_the_store_lacks_goes_to_the_edge_router_resolved(tmp_path: Path) -> None:
    from zerocode_infra.hosting import router_code

    results = run(
        router_code("", edge_routing=True),
        tmp_path,
        [
            ("", "/sites/deploykey1/about"),  # in the hot set: straight to the build
            ("", "/sites/otherkey01/"),
            ("", "/sites/otherkey01/about"),
            ("", "/sites/otherkey01/docs/"),
            ("", "/sites/otherkey01/a%20b.png"),
            ("", "/preview/previewkey1/assets/x.js"),
            ("", "/sites/otherkey01/../b2/index.html"),  # still refused at the viewer
            ("", "/elsewhere"),
        ],
    )
    assert [r.get("uri", r.get("statusCode")) for r in results] == [
        "/builds/app1/b1/index.html",
        "/_edge/site/otherkey01/index.html",
        "/_edge/site/otherkey01/_api/route/about",
        "/_edge/site/otherkey01/docs/index.html",
        "/_edge/site/otherkey01/a%20b.png",
        "/_edge/preview/previewkey1/assets/x.js",
        404,
        404,
    ]
    hosts = run(
        router_code("apps.example.net", edge_routing=True),
        tmp_path,
        [
            ("p-previewkey1.apps.example.net", "/"),
            ("otherkey01.apps.example.net", "/x.css"),
            ("apps.example.net", "/"),
        ],
    )
    assert [r.get("uri", r.get("statusCode")) for r in hosts] == [
        "/_edge/preview/previewkey1/index.html",
        "/_edge/site/otherkey01/x.css",
        404,
    ]


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_what_the_viewer_sends_the_edge_router_routes(tmp_path: Path) -> None:
    """The two functions agree on the /_edge/ form: the viewer's output, fed to the Python
    router with a stand-in table, reaches the build."""
    from zerocode_infra.hosting import router_code

    from functions.edge_router.router import PointerLookup, TtlCache, route

    (viewer,) = run(router_code("", edge_routing=True), tmp_path, [("", "/sites/otherkey01/a")])

    class Table:
        def get_item(self, **kwargs: Any) -> dict[str, Any]:
            if kwargs["Key"] == {"pointer": {"S": "routes:app2/b9"}}:  # issue 44
                return {"Item": {"routes": {"S": "a b"}}}
            assert kwargs["Key"] == {"pointer": {"S": "site:otherkey01"}}
            return {"Item": {"app_id": {"S": "app2"}, "build_id": {"S": "b9"}}}

    lookup = PointerLookup(Table(), "t", TtlCache(10), ttl_seconds=30, negative_ttl_seconds=10)
    assert route(viewer, lookup)["uri"] == "/builds/app2/b9/a/index.html"


def test_a_redeploy_after_destroy_adopts_the_kept_pointer_table(tmp_path: Path) -> None:
    """Issue 42, point 4: the table's fixed name (the edge router's config holds it before
    deploy) would make a redeploy after ``cdk destroy`` fail on the table the destroy kept;
    ``pointerTable=import`` uses that table instead, its pointers and all."""
    from tests.infra.test_waf import _synth

    adopted = _synth(tmp_path / "import", pointerTable="import")
    tables = adopted.of_type("AWS::DynamoDB::Table").values()
    assert "ZerocodeStack-site-pointers" not in [t["Properties"].get("TableName") for t in tables]
    for handler in ("run.sh", "handler.handler"):
        assert env(adopted, handler)["ZEROCODE_POINTERS_TABLE"] == "ZerocodeStack-site-pointers"
        granted = [
            s
            for s in policy_statements(adopted, role_of(adopted, handler))
            if "table/ZerocodeStack-site-pointers" in json.dumps(s["Resource"])
        ]
        actions = {a for s in granted for a in s["Action"]}
        assert {"dynamodb:GetItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"} <= actions
    with pytest.raises(ValueError, match="pointerTable must be create or import"):
        _synth(tmp_path / "bad", pointerTable="adopt")
