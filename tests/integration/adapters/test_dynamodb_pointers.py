"""The pointer table on moto (zerocode.adapters.dynamodb.pointers): publish, rollback,
conditional writes, removal; and the Lambda@Edge router reading it with boto3's client."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from functions.edge_router.router import PointerLookup, TtlCache, route
from zerocode.adapters.dynamodb.pointers import DynamoPointerStore, create_pointers_table
from zerocode.publishing.pointers import SiteTarget, preview_pointer, site_pointer

TABLE = "zc-pointers"
SITE = site_pointer("deploykey1")
PREVIEW = preview_pointer("previewkey1")
B1, B2 = SiteTarget("app1", "b1"), SiteTarget("app1", "b2")


@pytest.fixture
def client(aws: None) -> Iterator[Any]:
    import boto3

    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    create_pointers_table(dynamodb, TABLE)
    yield dynamodb


@pytest.fixture
def store(client: Any) -> DynamoPointerStore:
    return DynamoPointerStore(client, TABLE, now=lambda: 1_800_000_000.0)


def test_publish_and_rollback_are_one_write_each(store: DynamoPointerStore, client: Any) -> None:
    assert store.target(SITE) is None and store.version(SITE) == 0
    store.point(SITE, B1)
    store.point(SITE, B2)  # a second deploy
    assert store.target(SITE) == B2 and store.version(SITE) == 2
    store.point(SITE, B1)  # rollback
    assert store.target(SITE) == B1 and store.version(SITE) == 3
    item = client.get_item(TableName=TABLE, Key={"pointer": {"S": SITE}})["Item"]
    assert item == {
        "pointer": {"S": SITE},
        "app_id": {"S": "app1"},
        "build_id": {"S": "b1"},
        "updated_at": {"N": "1800000000.0"},
        "version": {"N": "3"},
    }


def test_a_conditional_flip_loses_to_a_write_in_between(store: DynamoPointerStore) -> None:
    assert store.point_if(SITE, B1, None)  # first publish: only if absent
    assert not store.point_if(SITE, B2, None)
    assert not store.point_if(SITE, B2, SiteTarget("app1", "b0"))  # stale expectation
    assert store.target(SITE) == B1
    assert store.point_if(SITE, B2, B1)
    assert store.target(SITE) == B2 and store.version(SITE) == 2


def test_remove_and_remove_if(store: DynamoPointerStore) -> None:
    store.point(SITE, B1)
    store.point(PREVIEW, B2)
    assert not store.remove_if(PREVIEW, B1)  # it names another build now
    assert not store.remove_if(PREVIEW, None)
    assert store.remove_if(PREVIEW, B2)
    assert store.target(PREVIEW) is None
    store.remove(SITE)
    store.remove(SITE)  # idempotent
    assert store.target(SITE) is None and store.version(SITE) == 0


def test_pointers_walks_one_namespace(store: DynamoPointerStore, client: Any) -> None:
    store.point(SITE, B1)
    store.point(PREVIEW, B2)
    client.put_item(
        TableName=TABLE,
        Item={"pointer": {"S": "preview:brokenkey1"}, "app_id": {"S": "../x"}},
    )
    assert sorted(store.pointers("preview:"), key=lambda p: p[0]) == [
        ("preview:brokenkey1", None),
        (PREVIEW, B2),
    ]
    assert list(store.pointers("site:")) == [(SITE, B1)]


def test_the_edge_router_reads_the_table_through_boto3(
    store: DynamoPointerStore, client: Any
) -> None:
    """The router's real client path: GetItem on moto, the cache in front of it."""
    now = [0.0]
    lookup = PointerLookup(
        client, TABLE, TtlCache(100, lambda: now[0]), ttl_seconds=30, negative_ttl_seconds=10
    )

    def serve(key: str) -> str:
        req = {"uri": f"/_edge/site/{key}/index.html", "method": "GET", "headers": {}}
        out = route(req, lookup)
        return str(out.get("uri", out.get("status")))

    assert serve("deploykey1") == "404"
    store.point(SITE, B1)
    assert serve("deploykey1") == "404"  # the negative entry, for 10 s
    now[0] += 10
    assert serve("deploykey1") == "/builds/app1/b1/index.html"
    store.point(SITE, B2)
    now[0] += 30
    assert serve("deploykey1") == "/builds/app1/b2/index.html"
    store.point(SITE, B1)  # rollback
    now[0] += 30
    assert serve("deploykey1") == "/builds/app1/b1/index.html"
    assert lookup.reads == 4


def test_a_deploys_routes_reach_the_edge_router_through_boto3(
    store: DynamoPointerStore, client: Any
) -> None:
    """Issue 44, point 3: the routes item the API writes is the one the router reads (its
    projection of a reserved-looking name included), and it is no pointer to a walk."""
    store.point(SITE, B1)
    store.put_routes(B1.app_id, B1.build_id, ["/", "/about", "/notes/5"])
    store.put_routes(B2.app_id, B2.build_id, ["/"])  # no route: no item
    lookup = PointerLookup(client, TABLE, TtlCache(100), ttl_seconds=30, negative_ttl_seconds=10)

    def serve(path: str) -> str:
        req = {"uri": f"/_edge/site/deploykey1/{path}", "method": "GET", "headers": {}}
        return str(route(req, lookup)["uri"])

    assert serve("_api/route/about") == "/builds/app1/b1/about/index.html"
    assert serve("_api/route/notes/5") == "/builds/app1/b1/notes/5/index.html"
    assert serve("_api/route/elsewhere") == "/builds/app1/b1/.shell.html"
    assert list(store.pointers("site:")) == [(SITE, B1)]
    assert (
        client.get_item(TableName=TABLE, Key={"pointer": {"S": "routes:app1/b2"}}).get("Item")
        is None
    )
