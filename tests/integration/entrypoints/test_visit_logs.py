"""Visits counted from CloudFront's logs on AWS (issue 44, point 4), on moto: the function
``functions/visit_logs`` gets EventBridge's event of a new gzip'd log file in the visit logs bucket,
counts its page views of published sites into the visits table (the site's key resolved to
its app by the pointer table, the day's salt shared in the table), deletes the file, and the
API answers the counts. A file notified twice is counted once; previews, assets, HEADs and
errors are no views; bots are counted apart."""

from __future__ import annotations

import asyncio
import gzip
import importlib.util
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote_plus

import boto3
import pytest

from tests.unit.publishing.test_visit_logs import HEADER, line
from zerocode.adapters.dynamodb.pointers import DynamoPointerStore, create_pointers_table
from zerocode.adapters.dynamodb.visits import create_visits_table
from zerocode.bootstrap.aws_wiring import visit_store
from zerocode.bootstrap.settings import Settings
from zerocode.publishing.pointers import SiteTarget, preview_pointer, site_pointer
from zerocode.publishing.site_visits import SiteVisits
from zerocode.publishing.visits import DayVisits

BUCKET = "t-visit-logs"
CHROME = "Mozilla/5.0%20(X11;%20Linux%20x86_64)%20Chrome/126.0"
FIREFOX = "Mozilla/5.0%20(Windows%20NT%2010.0;%20rv:128.0)%20Gecko/20100101%20Firefox/128.0"
BOT = "Mozilla/5.0%20(compatible;%20bingbot/2.0)"


@pytest.fixture
def function(aws: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The function as the stack configures it (its environment), over moto."""
    ddb = boto3.client("dynamodb", region_name="us-east-1")
    create_visits_table(ddb, "t-visits")
    create_pointers_table(ddb, "t-pointers")
    pointers = DynamoPointerStore(ddb, "t-pointers")
    pointers.point(site_pointer("sitekey01"), SiteTarget("app-1", "b1"))
    pointers.point(site_pointer("sitekey02"), SiteTarget("app-2", "b7"))
    pointers.point(preview_pointer("previewkey1"), SiteTarget("app-1", "b2"))
    boto3.client("s3", region_name="us-east-1").create_bucket(Bucket=BUCKET)
    for name, value in {
        "MODE": "aws",
        "AWS_REGION": "us-east-1",
        "VISITS_TABLE": "t-visits",
        "POINTERS_TABLE": "t-pointers",
        "SITES_DOMAIN": "sites.example.com",
    }.items():
        monkeypatch.setenv(f"ZEROCODE_{name}", value)
    path = Path(__file__).parents[3] / "functions" / "visit_logs" / "handler.py"
    spec = importlib.util.spec_from_file_location("visit_logs_handler", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    yield module
    module._logs.cache_clear()


def put_log(key: str, lines: list[str], *, bridged: bool = True) -> dict[str, Any]:
    """A log file as CloudFront writes it, and the event its arrival sends: EventBridge's
    (what the stack routes to the function) or S3's own notification."""
    body = gzip.compress(("\n".join(lines) + "\n").encode())
    boto3.client("s3", region_name="us-east-1").put_object(Bucket=BUCKET, Key=key, Body=body)
    if bridged:
        return {
            "version": "0",
            "detail-type": "Object Created",
            "source": "aws.s3",
            "resources": [f"arn:aws:s3:::{BUCKET}"],
            "detail": {"bucket": {"name": BUCKET}, "object": {"key": key, "size": len(body)}},
        }
    return {
        "Records": [
            {
                "eventSource": "aws:s3",
                "eventName": "ObjectCreated:Put",
                "s3": {"bucket": {"name": BUCKET}, "object": {"key": quote_plus(key)}},
            }
        ]
    }


TODAY = time.strftime("%Y-%m-%d", time.gmtime())  # the day's salt is alive while it lasts


def at(hour: int, minute: int = 0) -> str:
    return f"{TODAY}\t{hour:02d}:{minute:02d}:00"


def test_a_log_file_is_counted_into_the_table_and_deleted(function: Any) -> None:
    host = "sitekey01.sites.example.com"
    first = put_log(
        f"sites/E2ABCDEF.{TODAY}-12.a1b2c3d4.gz",
        [
            *HEADER,
            line("/", host=host, agent=CHROME, ip="203.0.113.1", when=at(12)),
            line("/about", host=host, agent=CHROME, ip="203.0.113.1", when=at(12, 1)),
            line("/", host=host, status=304, kind="-", agent=CHROME, ip="203.0.113.1", when=at(9)),
            line("/", host=host, agent=FIREFOX, ip="203.0.113.1", when=at(12, 2)),
            line("/", host=host, agent=CHROME, ip="2001:db8::5", when=at(12, 3)),
            line("/assets/index-abcdefgh.js", host=host, kind="text/javascript", agent=CHROME),
            line("/", host=host, method="HEAD", agent=CHROME),
            line("/nope.html", host=host, status=404, kind="text/plain", agent=CHROME),
            line("/", host="p-previewkey1.sites.example.com", agent=CHROME),
            line("/", host=host, agent=BOT, ip="40.77.167.1", when=at(11)),
            line(
                "/",
                host="sitekey02.sites.example.com",
                agent=CHROME,
                ip="203.0.113.1",
                when=at(12, 4),
            ),
            line("/", host="nosuchsite.sites.example.com", agent=CHROME),
        ],
    )
    assert function.handler(first, None) == {"files": 1, "views": 7}
    s3 = boto3.client("s3", region_name="us-east-1")
    assert s3.list_objects_v2(Bucket=BUCKET).get("KeyCount") == 0  # read, then deleted
    assert function.handler(first, None) == {"files": 1, "views": 0}  # S3 told it twice
    # A later file of the same day: a visitor already counted is not counted again.
    second = put_log(
        f"sites/E2ABCDEF.{TODAY}-13.e5f6a7b8.gz",
        [
            *HEADER,
            line("/", host=host, agent=CHROME, ip="203.0.113.1", when=at(13)),
            line("/", host=host, agent=CHROME, ip="203.0.113.9", when=at(13, 5)),
        ],
        bridged=False,  # S3's own notification names a file as well
    )
    assert function.handler(second, None) == {"files": 1, "views": 2}
    store = visit_store(Settings(), boto3.client("dynamodb", region_name="us-east-1"))
    assert store is not None
    assert store.days("app-1", TODAY, TODAY) == [DayVisits(TODAY, views=7, visitors=4, bot_views=1)]
    assert store.days("app-2", TODAY, TODAY) == [DayVisits(TODAY, 1, 1, 0)]
    items = boto3.client("dynamodb", region_name="us-east-1").scan(TableName="t-visits")["Items"]
    kept = repr(items)
    for secret in ("203.0.113", "2001:db8", "Mozilla", "Chrome", "bingbot", "sitekey"):
        assert secret not in kept, secret
    # The API's view of the same table (SiteVisits without a counter: it only reads).
    visits = SiteVisits(store)
    assert visits.counter is None
    shown = asyncio.run(visits.report("app-1", 7))
    assert [d.day for d in shown.days][-1] == TODAY and len(shown.days) == 7
    assert shown.total == DayVisits("", views=7, visitors=4, bot_views=1)
