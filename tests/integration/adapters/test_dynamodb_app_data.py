"""What only the DynamoDB stores of the apps' data do (the contracts run on both stores in
tests/integration/data): seeds past one transaction, filters and search within a read
budget, a request path that never scans, sessions and scratch spaces that expire by TTL,
and an app's deletion that leaves no item of it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from zerocode.adapters.dynamodb import records as dynamo_records
from zerocode.adapters.dynamodb.app_data import create_app_data_table
from zerocode.adapters.dynamodb.build_models import DynamoBuildModels
from zerocode.adapters.dynamodb.end_users import DynamoEndUserStore
from zerocode.adapters.dynamodb.records import DynamoRecordStore
from zerocode.data.end_users import EndUser
from zerocode.data.records import Query, after_cursor, new_record, seed_records

TABLE = "app-data"


class Counted:
    """A client that notes each operation it is asked for."""

    def __init__(self, client: Any) -> None:
        self.client, self.calls = client, []  # type: ignore[var-annotated]

    def __getattr__(self, name: str) -> Any:
        self.calls.append(name)
        return getattr(self.client, name)


@pytest.fixture
def client(aws: None) -> Iterator[Counted]:
    raw = boto3.client("dynamodb", region_name="us-east-1")
    create_app_data_table(raw, TABLE)
    yield Counted(raw)


def items(client: Counted) -> list[dict[str, Any]]:
    return list(client.client.scan(TableName=TABLE)["Items"])  # the test may scan; code never


def test_a_hundred_seeds_land_in_order_once_in_several_transactions(client: Counted) -> None:
    store = DynamoRecordStore(client, TABLE)
    seeds = seed_records([{"n": n} for n in range(100)])
    assert store.seed("app1", "preview", "notes", seeds)
    assert not store.seed("app1", "preview", "notes", seeds)  # once
    assert store.count("app1", "preview", "notes") == 100
    page = store.list("app1", "preview", "notes", Query(limit=100))
    assert [r.fields["n"] for r in page.records] == list(range(100)) and page.cursor is None
    assert client.calls.count("transact_write_items") >= 5  # 25 items at most in one
    assert store.clear("app1", "preview") == 100
    assert store.seed("app1", "preview", "notes", seeds)  # seeded again after a clear


def test_filters_and_search_fill_a_page_within_a_read_budget(
    client: Counted, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = DynamoRecordStore(client, TABLE)
    for n in range(30):
        store.create(
            "app1",
            "live",
            "notes",
            new_record(None, {"n": n, "tag": "x" if n % 10 == 0 else "y"}),
            100,
        )
    found = store.list("app1", "live", "notes", Query(equals={"tag": "x"}, limit=2))
    assert [r.fields["n"] for r in found.records] == [0, 10] and found.cursor is not None
    rest = store.list(
        "app1",
        "live",
        "notes",
        Query(equals={"tag": "x"}, limit=2, after=after_cursor(found.cursor)),
    )
    assert [r.fields["n"] for r in rest.records] == [20] and rest.cursor is None
    searched = store.list("app1", "live", "notes", Query(search='"TAG":"X"', limit=10))
    assert [r.fields["n"] for r in searched.records] == [0, 10, 20]
    monkeypatch.setattr(dynamo_records, "READ_BUDGET", 5)
    short = store.list("app1", "live", "notes", Query(equals={"tag": "x"}, limit=2))
    assert [r.fields["n"] for r in short.records] == [0] and short.cursor is not None
    walked = [0]
    cursor: str | None = short.cursor
    while cursor is not None:
        page = store.list(
            "app1", "live", "notes", Query(equals={"tag": "x"}, limit=2, after=after_cursor(cursor))
        )
        walked += [r.fields["n"] for r in page.records]
        cursor = page.cursor
    assert walked == [0, 10, 20]  # a short page with a cursor loses nothing


def test_no_request_path_scans(client: Counted) -> None:
    store, users = DynamoRecordStore(client, TABLE), DynamoEndUserStore(client, TABLE)
    note = new_record("u1", {"t": "a"})
    store.create("app1", "live", "notes", note, 10)
    store.get("app1", "live", "notes", note.id)
    store.list("app1", "live", "notes", Query(owner="u1", equals={"t": "a"}))
    store.list("app1", "live", "notes", Query(search="a", newest=True))
    ada = EndUser("0123456789abcdef", "ada", "2026-12-05T10:00:00.000000Z", "scrypt$x")
    users.create("app1", "live", ada, 10)
    users.put_session("app1", "live", "sha", ada.id, 2e9)
    users.session_user("app1", "live", "sha", 1e9)
    users.list("app1", "live", None, 10)
    store.clear("app1")
    users.delete_app("app1")
    assert "scan" not in client.calls and "query" in client.calls


def test_sessions_and_scratch_spaces_carry_their_expiry(client: Counted) -> None:
    ttl = client.client.describe_time_to_live(TableName=TABLE)["TimeToLiveDescription"]
    assert ttl["AttributeName"] == "expires_at" and ttl["TimeToLiveStatus"] == "ENABLED"
    users = DynamoEndUserStore(client, TABLE, now=lambda: 1_000.0)
    store = DynamoRecordStore(client, TABLE, now=lambda: 1_000.0)
    ada = EndUser("0123456789abcdef", "ada", "2026-12-05T10:00:00.000000Z", "scrypt$x")
    users.create("app1", "live", ada, 10)
    users.put_session("app1", "live", "sha", ada.id, 5_000.5)
    store.create("app1", "live", "notes", new_record(None, {}), 10)
    users.create("app1", "check-run1", ada, 10)
    store.create("app1", "check-run1", "notes", new_record(None, {}), 10)
    store.seed("app1", "check-run1", "seeded", seed_records([{"n": 1}]))
    expiring = {
        (i["scope"]["S"], i["key"]["S"][:2]): i.get("expires_at", {}).get("N")
        for i in items(client)
    }
    assert expiring[("app1#live", "s#")] == "5001"  # the session's own end
    assert all(v is None for (s, p), v in expiring.items() if s == "app1#live" and p != "s#")
    scratch = [v for (s, _), v in expiring.items() if s == "app1#check-run1"]
    assert len(scratch) >= 5 and set(scratch) == {str(1_000 + 86_400)}  # a day, every item
    assert users.session_user("app1", "live", "sha", 5_001.0) is None  # refused at its end
    assert ("app1#live", "s#") not in {(i["scope"]["S"], i["key"]["S"][:2]) for i in items(client)}


def test_deleting_an_app_leaves_no_item_of_it(client: Counted) -> None:
    store, users = DynamoRecordStore(client, TABLE), DynamoEndUserStore(client, TABLE)
    models = DynamoBuildModels(client, TABLE)
    ada = EndUser("0123456789abcdef", "ada", "2026-12-05T10:00:00.000000Z", "scrypt$x")
    for app in ("app1", "app2"):
        for space in ("preview", "live"):
            store.create(app, space, "notes", new_record(ada.id, {"t": app}), 10)
            store.seed(app, space, "tips", seed_records([{"t": "seed"}]))
            users.create(app, space, ada, 10)
            users.put_session(app, space, f"sha-{app}", ada.id, 2e9)
        models.put(app, "b1", b'{"collections": {}}')
    assert models.get("app1", "b1") == b'{"collections": {}}' and models.get("app1", "b2") is None
    deleted = store.delete_app("app1") + users.delete_app("app1") + models.delete_app("app1")
    assert deleted == 4 + 2 + 1  # records (2 a space), users (1 a space), models
    left = {i["scope"]["S"] for i in items(client)}
    assert left == {"app2#preview", "app2#live", "app2#builds"}
    assert models.get("app1", "b1") is None and models.get("app2", "b1") is not None
