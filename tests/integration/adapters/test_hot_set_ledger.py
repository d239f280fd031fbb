"""The hot set's ledger in the pointer table on moto (HotSetLedger), and a promotion through
the real KeyValueStore writer on botocore's Stubber (moto has no KeyValueStore data plane):
what a rollback's promotion sends, and that a store failing it raises with no copy left."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from botocore.stub import Stubber

from functions.edge_router.router import PointerLookup, TtlCache, route
from tests.integration.adapters.test_cloudfront_publisher import ARN, _client
from tests.integration.adapters.test_dynamodb_pointers import TABLE
from tests.integration.adapters.test_dynamodb_pointers import client as client  # the fixture
from zerocode.adapters.aws.cloudfront_publisher import HotSetLedger, KvsPublisher
from zerocode.adapters.dynamodb.pointers import DynamoPointerStore
from zerocode.publishing.hot_set import HotSetPublisher, Promotion, RingFull, Slot
from zerocode.publishing.pointers import SiteTarget, site_pointer

A, B, C = site_pointer("deploykeya"), site_pointer("deploykeyb"), site_pointer("deploykeyc")
B1 = SiteTarget("app1", "b1")


@pytest.fixture
def truth(client: Any) -> DynamoPointerStore:
    store = DynamoPointerStore(client, TABLE)
    for pointer in (A, B, C):
        store.point(pointer, B1)
    return store


def test_places_are_taken_in_turn_and_name_their_last_holder(
    client: Any, truth: DynamoPointerStore
) -> None:
    ledger = HotSetLedger(client, TABLE, slots=2)
    assert ledger.take(A, 0.0, -100.0) == Slot(1, None)
    assert ledger.take(B, 1.0, -99.0) == Slot(2, None)
    assert ledger.take(C, 200.0, 100.0) == Slot(3, (A, 1))  # A's place: the oldest


def test_a_place_held_by_a_kept_promotion_is_refused_and_stays_next(
    client: Any, truth: DynamoPointerStore
) -> None:
    ledger = HotSetLedger(client, TABLE, slots=1)
    ledger.take(A, 50.0, -50.0)
    with pytest.raises(RingFull):
        ledger.take(B, 60.0, 0.0)  # A was promoted after 0: kept
    assert ledger.take(B, 200.0, 100.0) == Slot(2, (A, 1))  # the refusal skipped nothing


def test_marks_live_on_the_pointer_and_go_with_it(client: Any, truth: DynamoPointerStore) -> None:
    ledger = HotSetLedger(client, TABLE)
    assert ledger.mark(A, 7) and ledger.holds(A, 7) and not ledger.holds(A, 6)
    truth.point(A, SiteTarget("app1", "b2"))  # a publish keeps the mark
    assert ledger.holds(A, 7) and truth.target(A) == SiteTarget("app1", "b2")
    ledger.unmark(A, 6)  # not its latest: kept
    assert ledger.holds(A, 7)
    ledger.unmark(A, 7)
    assert not ledger.holds(A, 7)
    truth.remove(B)
    assert not ledger.mark(B, 8)  # no pointer: no item is made for the mark
    assert client.get_item(TableName=TABLE, Key={"pointer": {"S": B}}).get("Item") is None


def test_ledger_items_are_no_pointers_for_the_edge_or_the_sweep(
    client: Any, truth: DynamoPointerStore
) -> None:
    ledger = HotSetLedger(client, TABLE)
    ledger.mark(A, ledger.take(A, 0.0, -1.0).seq)
    assert {p for p, _ in truth.pointers("site:")} == {A, B, C}
    assert {p for p, _ in truth.pointers("preview:")} == set()
    lookup = PointerLookup(client, TABLE, TtlCache(10), ttl_seconds=0, negative_ttl_seconds=0)
    request = {"uri": "/_edge/site/deploykeya/index.html", "headers": {}}
    assert route(request, lookup)["uri"] == "/builds/app1/b1/index.html"


class Hot:
    def __init__(self) -> None:
        self.items: dict[str, SiteTarget] = {}

    def point(self, pointer: str, target: SiteTarget) -> None:
        self.items[pointer] = target

    def target(self, pointer: str) -> SiteTarget | None:
        return self.items.get(pointer)

    def remove(self, pointer: str) -> None:
        self.items.pop(pointer, None)


def test_promotions_past_the_ring_demote_the_oldest(client: Any, truth: DynamoPointerStore) -> None:
    clock = iter([0.0, 10.0, 1_000.0])
    hot = Hot()
    pub = HotSetPublisher(
        truth, hot, HotSetLedger(client, TABLE, slots=2), keep_seconds=100, now=lambda: next(clock)
    )
    assert [pub.promote(p) for p in (A, B, C)] == [Promotion.PROMOTED] * 3
    assert set(hot.items) == {B, C}
    assert not HotSetLedger(client, TABLE).holds(A, 1)


# Through the KeyValueStore writer (Stubber)

SIZES = {"ItemCount": 1, "TotalSizeInBytes": 24}


def describe(stub: Stubber, etag: str = "e1") -> None:
    stub.add_response(
        "describe_key_value_store",
        {"KvsARN": ARN, "ETag": etag, "Created": datetime(2024, 1, 1, tzinfo=UTC), **SIZES},
        {"KvsARN": ARN},
    )


@pytest.fixture
def stub() -> Iterator[Stubber]:
    from botocore import UNSIGNED
    from botocore.config import Config

    with Stubber(_client(Config(signature_version=UNSIGNED))) as stubber:
        yield stubber


def test_a_promotion_measures_the_store_then_writes_the_key(
    client: Any, truth: DynamoPointerStore, stub: Stubber
) -> None:
    describe(stub)  # its size, against the high-water mark
    describe(stub)  # the ETag of the write
    stub.add_response(
        "put_key",
        {"ETag": "e2", **SIZES},
        {"KvsARN": ARN, "Key": A, "Value": "app1/b1", "IfMatch": "e1"},
    )
    ledger = HotSetLedger(client, TABLE)
    pub = HotSetPublisher(truth, KvsPublisher(stub.client, ARN), ledger)
    assert pub.promote(A) is Promotion.PROMOTED
    stub.assert_no_pending_responses()
    assert ledger.holds(A, 1)


def test_a_store_that_fails_the_write_is_raised_with_no_copy_left(
    client: Any, truth: DynamoPointerStore, stub: Stubber
) -> None:
    describe(stub)
    describe(stub)
    stub.add_client_error("put_key", "InternalServerException", http_status_code=500)
    describe(stub, "e1")  # the copy that may have landed is removed
    stub.add_response(
        "delete_key", {"ETag": "e2", **SIZES}, {"KvsARN": ARN, "Key": A, "IfMatch": "e1"}
    )
    pub = HotSetPublisher(truth, KvsPublisher(stub.client, ARN), HotSetLedger(client, TABLE))
    with pytest.raises(Exception, match="InternalServerException"):
        pub.promote(A)
    stub.assert_no_pending_responses()
    assert truth.target(A) == B1  # the truth is untouched: the edge serves it from the table
