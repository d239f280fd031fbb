"""The Lambda@Edge origin-request router (functions/edge_router/router.py), with a stand-in
pointer table and a clock of its own: parsing, the TTL and LRU cache, misses, absent keys,
publish and rollback seen within the TTL, a failing table."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from functions.edge_router import router
from functions.edge_router.router import (
    Config,
    PointerLookup,
    TtlCache,
    handler,
    not_found,
    route,
)

TABLE = "pointers"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Table:
    """``get_item`` as boto3's DynamoDB client answers it, over a dict; counts reads."""

    def __init__(
        self, items: dict[str, tuple[str, str]] | None = None, routes: dict[str, str] | None = None
    ) -> None:
        self.items = dict(items or {})
        self.routes = dict(routes or {})  # "routes:{appId}/{buildId}" -> names
        self.reads = 0
        self.fail = False
        self.requests: list[dict[str, Any]] = []

    def get_item(self, **kwargs: Any) -> Mapping[str, Any]:
        self.reads += 1
        self.requests.append(kwargs)
        if self.fail:
            raise ConnectionError("throttled")
        key = kwargs["Key"]["pointer"]["S"]
        if key in self.routes:
            return {"Item": {"routes": {"S": self.routes[key]}}}
        found = self.items.get(key)
        if found is None:
            return {}
        return {"Item": {"app_id": {"S": found[0]}, "build_id": {"S": found[1]}}}


def lookup(
    table: Table, clock: Clock, *, ttl: float = 30, neg: float = 10, size: int = 100
) -> PointerLookup:
    cache = TtlCache(size, clock)
    return PointerLookup(table, TABLE, cache, ttl_seconds=ttl, negative_ttl_seconds=neg)


def request(uri: str) -> dict[str, Any]:
    return {"uri": uri, "method": "GET", "headers": {}, "querystring": ""}


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def table() -> Table:
    return Table({"site:deploykey1": ("app1", "b1"), "preview:previewkey1": ("app1", "p7")})


@pytest.mark.parametrize(
    ("uri", "origin"),
    [
        ("/_edge/site/deploykey1/index.html", "/builds/app1/b1/index.html"),
        ("/_edge/site/deploykey1/assets/index-abc.js", "/builds/app1/b1/assets/index-abc.js"),
        ("/_edge/site/deploykey1/docs/index.html", "/builds/app1/b1/docs/index.html"),
        ("/_edge/site/deploykey1/a%20b.png", "/builds/app1/b1/a%20b.png"),
        ("/_edge/preview/previewkey1/index.html", "/builds/app1/p7/index.html"),
    ],
)
def test_a_key_in_the_table_routes_to_its_build(
    table: Table, clock: Clock, uri: str, origin: str
) -> None:
    out = route(request(uri), lookup(table, clock))
    assert out["uri"] == origin and out["method"] == "GET"


def test_the_table_is_read_with_the_namespaced_key_and_only_what_routing_needs(
    table: Table, clock: Clock
) -> None:
    route(request("/_edge/preview/previewkey1/index.html"), lookup(table, clock))
    assert table.requests == [
        {
            "TableName": TABLE,
            "Key": {"pointer": {"S": "preview:previewkey1"}},
            "ProjectionExpression": "app_id, build_id",
        }
    ]


def test_a_uri_the_viewer_resolved_from_the_key_value_store_passes_untouched(
    table: Table, clock: Clock
) -> None:
    req = request("/builds/app9/b9/index.html")
    assert route(req, lookup(table, clock)) is req
    assert table.reads == 0


@pytest.mark.parametrize(
    "uri",
    [
        "/_edge/site/unknownkey1/index.html",  # absent
        "/_edge/site/previewkey1/index.html",  # a preview key as a site
        "/_edge/preview/deploykey1/index.html",  # and back
        "/_edge/site/short/index.html",
        "/_edge/other/deploykey1/index.html",
        "/_edge/site/deploykey1/",
        "/_edge/site/deploykey1/../b2/index.html",
        "/_edge/site/deploykey1/%2e%2e/b2/index.html",
        "/_edge/site/deploykey1/a%2f..%2f..%2fx.js",
        "/_edge/site/deploykey1//etc/passwd",
        "/_edge/site/deploykey1/a\\b.js",
        "/_edge/site/deploykey1/a%5cb.js",
        "/_edge/site/deploykey1/bad%E0%A4.js",
        "/",
        "/index.html",
        "/sites/deploykey1/",
    ],
)
def test_anything_else_is_not_found(table: Table, clock: Clock, uri: str) -> None:
    assert route(request(uri), lookup(table, clock)) == not_found()


def test_the_404_may_be_cached_briefly() -> None:
    answer = not_found()
    assert answer["status"] == "404"
    assert answer["headers"]["cache-control"] == [{"key": "Cache-Control", "value": "max-age=10"}]


def test_a_malformed_item_serves_nothing(clock: Clock) -> None:
    table = Table({"site:deploykey1": ("../x", "b1"), "site:deploykey2": ("app1", "")})
    edge = lookup(table, clock)
    assert route(request("/_edge/site/deploykey1/index.html"), edge) == not_found()
    assert route(request("/_edge/site/deploykey2/index.html"), edge) == not_found()


def test_hits_within_the_ttl_read_the_table_once(table: Table, clock: Clock) -> None:
    edge = lookup(table, clock, ttl=30)
    for _ in range(5):
        route(request("/_edge/site/deploykey1/index.html"), edge)
        clock.now += 5
    assert table.reads == 1 and edge.reads == 1


def test_publish_and_rollback_are_seen_within_the_ttl(table: Table, clock: Clock) -> None:
    edge = lookup(table, clock, ttl=30)
    uri = "/_edge/site/deploykey1/index.html"
    assert route(request(uri), edge)["uri"] == "/builds/app1/b1/index.html"
    table.items["site:deploykey1"] = ("app1", "b2")  # publish
    clock.now += 29
    assert route(request(uri), edge)["uri"] == "/builds/app1/b1/index.html"  # still cached
    clock.now += 1
    assert route(request(uri), edge)["uri"] == "/builds/app1/b2/index.html"
    table.items["site:deploykey1"] = ("app1", "b1")  # rollback
    clock.now += 30
    assert route(request(uri), edge)["uri"] == "/builds/app1/b1/index.html"


def test_an_absent_key_is_remembered_for_the_negative_ttl_only(table: Table, clock: Clock) -> None:
    edge = lookup(table, clock, ttl=30, neg=10)
    uri = "/_edge/site/newsite0001/index.html"
    assert route(request(uri), edge) == not_found()
    assert route(request(uri), edge) == not_found()
    assert table.reads == 1
    table.items["site:newsite0001"] = ("app2", "b1")  # first deploy
    clock.now += 10
    assert route(request(uri), edge)["uri"] == "/builds/app2/b1/index.html"


def test_the_cache_is_bounded_and_evicts_the_least_recently_used(clock: Clock) -> None:
    table = Table({f"site:key{i:08d}": ("app", f"b{i}") for i in range(10)})
    edge = lookup(table, clock, size=3)
    for i in (0, 1, 2):
        route(request(f"/_edge/site/key{i:08d}/index.html"), edge)
    route(request("/_edge/site/key00000000/index.html"), edge)  # 0 is now the newest
    route(request("/_edge/site/key00000003/index.html"), edge)  # evicts 1
    assert len(edge.cache) == 3 and table.reads == 4
    route(request("/_edge/site/key00000000/index.html"), edge)
    assert table.reads == 4
    route(request("/_edge/site/key00000001/index.html"), edge)
    assert table.reads == 5


def test_a_failing_table_serves_the_stale_entry_or_503(table: Table, clock: Clock) -> None:
    edge = lookup(table, clock, ttl=30)
    route(request("/_edge/site/deploykey1/index.html"), edge)
    table.fail = True
    clock.now += 60
    out = route(request("/_edge/site/deploykey1/index.html"), edge)
    assert out["uri"] == "/builds/app1/b1/index.html"  # stale if error
    failed = route(request("/_edge/preview/previewkey1/index.html"), edge)
    assert failed["status"] == "503"
    assert failed["headers"]["cache-control"][0]["value"] == "no-store"


def test_the_cache_refuses_a_zero_bound() -> None:
    with pytest.raises(ValueError):
        TtlCache(0)


def test_the_handler_reads_its_config_once_and_routes_a_cloudfront_event(
    table: Table, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The Lambda entry point: config.json beside the module, one lookup per environment."""
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"table": TABLE, "region": "us-east-1", "ttl_seconds": 45}))
    loaded = Config.load(config)
    assert (loaded.table, loaded.ttl_seconds, loaded.negative_ttl_seconds) == (TABLE, 45, 10)
    monkeypatch.setattr(
        router,
        "_LOOKUP",
        PointerLookup(table, TABLE, TtlCache(10), ttl_seconds=45, negative_ttl_seconds=10),
    )
    event = {"Records": [{"cf": {"request": request("/_edge/site/deploykey1/x.css")}}]}
    assert handler(event, None)["uri"] == "/builds/app1/b1/x.css"
    assert handler(event, None)["uri"] == "/builds/app1/b1/x.css"
    assert table.reads == 1


def test_a_replica_in_the_region_it_runs_in_is_read_else_the_home_table() -> None:
    config = Config("pointers", "us-east-1", replicas=("eu-west-1", "ap-southeast-1"))
    assert config.read_region("eu-west-1") == "eu-west-1"
    assert config.read_region("sa-east-1") == "us-east-1"
    assert config.read_region(None) == "us-east-1"
    assert Config("pointers", "us-east-1").read_region("eu-west-1") == "us-east-1"


def test_a_prerendered_deploys_routes_get_their_pages_and_others_the_shell(clock: Clock) -> None:
    """Issue 44, point 3: a cold site's routes, as the hot set's are (site_router.js): the
    build's routes item says which have a page; its route list is read once per build."""
    table = Table(
        {"site:deploykey1": ("app1", "b1"), "site:olderkey01": ("app1", "b0")},
        routes={"routes:app1/b1": "about notes/5 关于"},
    )
    look = lookup(table, clock)

    def served(path: str) -> str:
        return str(route(request(f"/_edge/site/{path}"), look)["uri"])

    assert served("deploykey1/_api/route/about") == "/builds/app1/b1/about/index.html"
    assert served("deploykey1/_api/route/notes/5") == "/builds/app1/b1/notes/5/index.html"
    assert served("deploykey1/_api/route/%E5%85%B3%E4%BA%8E") == (
        "/builds/app1/b1/%E5%85%B3%E4%BA%8E/index.html"
    )
    assert served("deploykey1/_api/route/notes/6") == "/builds/app1/b1/.shell.html"
    assert served("deploykey1/index.html") == "/builds/app1/b1/index.html"  # a file is a file
    # A build with no routes item (a preview, an html site, one from before): index.html.
    assert served("olderkey01/_api/route/about") == "/builds/app1/b0/index.html"
    reads = table.reads
    served("deploykey1/_api/route/about")
    served("olderkey01/_api/route/x")
    assert table.reads == reads  # both lists kept (a build's never changes)
    # A table that cannot be read for the routes: the app's page, which routes in the browser.
    table.fail = True
    fresh = lookup(table, clock)
    fresh.cache.put("site:deploykey1", ("app1", "b1"), 30)
    out = route(request("/_edge/site/deploykey1/_api/route/about"), fresh)
    assert out["uri"] == "/builds/app1/b1/index.html"
