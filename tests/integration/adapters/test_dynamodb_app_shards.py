"""The DynamoDB AppStore's sharded all-apps index (issue 27): writes spread over
``ALL_SHARDS`` partitions, lists merged across them, and the backfill from the one-key
index. The AppStore contract (tests/integration/apps) runs the same lists over SQLite."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from tests.integration.apps.test_app_store_contract import pages_of
from zerocode.adapters.dynamodb.apps import (
    ALL_APPS,
    ALL_SHARDS,
    DynamoAppStore,
    _backfill_one,
    _item,
    all_shard,
    backfill_all_shards,
    create_apps_table,
    created_key,
)
from zerocode.apps.records import App, AppPage, CodeGenType, new_app_id

TABLE = "zc-apps"
T0 = 1_700_000_000.123456


class Counting:
    """A DynamoDB client that counts its calls by operation and can hold back keys."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.calls: Counter[str] = Counter()
        self.unprocessed_rounds = 0  # BatchGetItem answers that leave all but one key out

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.client, name)

        def call(**kw: Any) -> Any:
            self.calls[name] += 1
            if name == "batch_get_item" and self.unprocessed_rounds:
                self.unprocessed_rounds -= 1
                ((table, wanted),) = kw["RequestItems"].items()
                first, rest = wanted["Keys"][:1], wanted["Keys"][1:]
                answer = method(RequestItems={table: {"Keys": first}})
                answer["UnprocessedKeys"] = {table: {"Keys": rest}} if rest else {}
                return answer
            return method(**kw)

        return call


@pytest.fixture
def client(aws: None) -> Iterator[Any]:
    import boto3

    ddb = boto3.client("dynamodb", region_name="us-east-1")
    create_apps_table(ddb, TABLE)
    yield ddb


def make_app(created_at: float, **kw: Any) -> App:
    return App(
        id=new_app_id(),
        owner=kw.pop("owner", "user-1"),
        name=kw.pop("name", "My app"),
        code_gen_type=CodeGenType.HTML,
        init_prompt="a todo list",
        created_at=created_at,
        updated_at=created_at,
        **kw,
    )


def every_page(store: DynamoAppStore, limit: int, **kw: Any) -> tuple[list[App], int]:
    return pages_of(store.list_all, limit, **kw)


def newest_first(apps: list[App]) -> list[App]:
    return sorted(apps, key=created_key, reverse=True)


def test_the_shard_is_a_stable_hash_of_the_id_and_spreads_apps() -> None:
    # sha256, not hash(): the same in every process (PYTHONHASHSEED differs per run).
    assert all_shard("aaaaaaaaaaaaaaaaaaaa") == all_shard("aaaaaaaaaaaaaaaaaaaa")
    assert all_shard("abcdefghij0123456789") == "app#4"  # sha256, first 8 bytes, mod 16
    counts = Counter(all_shard(new_app_id()) for _ in range(3200))
    assert set(counts) == {f"app#{n}" for n in range(ALL_SHARDS)}
    assert max(counts.values()) < 2 * 3200 / ALL_SHARDS  # near even: no shard is hot


def test_a_write_lands_on_its_shard_with_only_keys_and_the_name_in_the_index(client: Any) -> None:
    store = DynamoAppStore(client, TABLE)
    app = make_app(T0, name="Sales Report")
    store.put(app)
    item = client.get_item(TableName=TABLE, Key={"id": {"S": app.id}})["Item"]
    assert item["all_shard"] == {"S": all_shard(app.id)}
    assert "all_pk" not in item  # out of the one-key index
    (entry,) = client.query(
        TableName=TABLE,
        IndexName=ALL_APPS,
        KeyConditionExpression="all_shard = :s",
        ExpressionAttributeValues={":s": {"S": all_shard(app.id)}},
    )["Items"]
    assert entry["id"] == {"S": app.id}
    assert entry["name_lower"] == {"S": "sales report"}
    assert set(entry) == {"id", "all_shard", "created_key", "name_lower"}
    others = [f"app#{n}" for n in range(ALL_SHARDS) if f"app#{n}" != all_shard(app.id)]
    for shard in others:
        assert not client.query(
            TableName=TABLE,
            IndexName=ALL_APPS,
            KeyConditionExpression="all_shard = :s",
            ExpressionAttributeValues={":s": {"S": shard}},
        )["Items"]


def test_many_apps_across_shards_page_fully_in_order(client: Any) -> None:
    rng = random.Random(27)
    apps = [make_app(T0 + rng.randrange(60) * 0.5) for _ in range(90)]  # many equal times
    apps += [make_app(T0 + 100 + i) for i in range(10)]
    while len({all_shard(a.id) for a in apps}) < ALL_SHARDS:  # ids are random: fill any gap
        apps.append(make_app(T0 + rng.randrange(60) * 0.5))
    store = DynamoAppStore(client, TABLE)
    for app in apps:
        store.put(app)
    assert len({all_shard(a.id) for a in apps}) == ALL_SHARDS
    expected = newest_first(apps)
    for limit in (7, 16, 50):
        seen, pages = every_page(store, limit)
        assert seen == expected, limit
        assert pages == -(-len(apps) // limit)


def test_filtered_pages_across_shards_find_every_match_in_order(client: Any) -> None:
    apps = [make_app(T0 + i, name="Todo app" if i % 7 == 0 else "Weather") for i in range(80)]
    narrow = DynamoAppStore(client, TABLE, filtered_read=1)
    for app in apps:
        narrow.put(app)
    todo = newest_first([a for a in apps if a.name == "Todo app"])
    for store in (narrow, DynamoAppStore(client, TABLE)):
        assert every_page(store, 3, query="TODO")[0] == todo
        assert every_page(store, 50, query="todo") == (todo, 1)
        assert store.list_all(limit=5, query="nothing") == AppPage([], None)


def counted_store(client: Any, apps: int) -> tuple[Counting, DynamoAppStore, list[App]]:
    """A store whose client counts its calls, holding ``apps`` apps a second apart."""
    counting = Counting(client)
    store = DynamoAppStore(counting, TABLE)
    put = [make_app(T0 + i) for i in range(apps)]
    for app in put:
        store.put(app)
    return counting, store, put


def test_a_page_is_one_query_per_shard_and_one_batch_get(client: Any) -> None:
    counting, store, apps = counted_store(client, 40)
    page = store.list_all(limit=20)
    assert page.apps == newest_first(apps)[:20]
    assert counting.calls["query"] == ALL_SHARDS
    assert counting.calls["batch_get_item"] == 1


def test_keys_left_unprocessed_by_batch_get_item_are_read_again(client: Any) -> None:
    counting, store, apps = counted_store(client, 4)
    counting.unprocessed_rounds = 2
    assert store.list_all(limit=10).apps == newest_first(apps)
    assert counting.calls["batch_get_item"] == 3


def test_an_app_deleted_between_the_index_and_the_table_is_left_out(client: Any) -> None:
    store = DynamoAppStore(client, TABLE)
    apps = [make_app(T0 + i) for i in range(3)]
    for app in apps:
        store.put(app)
    # The index answered before the delete: the table read finds the app gone.
    assert store._get_many([a.id for a in apps]) == apps
    client.delete_item(TableName=TABLE, Key={"id": {"S": apps[1].id}})
    assert store._get_many([a.id for a in apps]) == [apps[0], apps[2]]
    assert store._get_many([]) == []


def legacy_item(app: App, *, with_derived: bool = True) -> dict[str, Any]:
    """An item as written before the shards: ``all_pk`` = "app", no ``all_shard``."""
    item = _item(app)
    del item["all_shard"]
    item["all_pk"] = {"S": "app"}
    if not with_derived:  # written before created_key and name_lower existed
        del item["created_key"], item["name_lower"]
    return item


def test_backfill_moves_legacy_items_to_their_shards(client: Any) -> None:
    store = DynamoAppStore(client, TABLE)
    legacy = [make_app(T0 + i, name=f"Old Todo {i}") for i in range(30)]
    for i, app in enumerate(legacy):
        client.put_item(TableName=TABLE, Item=legacy_item(app, with_derived=i % 3 != 0))
    current = make_app(T0 + 50)
    store.put(current)
    assert store.list_all(limit=50).apps == [current]  # the old ones are not in the index

    assert backfill_all_shards(client, TABLE) == len(legacy)
    expected = newest_first([*legacy, current])
    assert every_page(store, 7)[0] == expected
    assert every_page(store, 50, query="old todo")[0] == newest_first(legacy)
    for app in legacy:
        item = client.get_item(TableName=TABLE, Key={"id": {"S": app.id}})["Item"]
        assert "all_pk" not in item
        assert item["all_shard"] == {"S": all_shard(app.id)}
        assert store.get(app.id) == app
    assert backfill_all_shards(client, TABLE) == 0  # nothing left: safe to run again


def test_backfill_never_brings_back_an_app_deleted_since_its_scan(client: Any) -> None:
    gone = make_app(T0)
    scanned = {"id": {"S": gone.id}, "name": {"S": gone.name}, "created_at": {"N": str(T0)}}
    assert _backfill_one(client, TABLE, scanned) == 0
    assert "Item" not in client.get_item(TableName=TABLE, Key={"id": {"S": gone.id}})


def test_backfill_keeps_a_name_renamed_since_its_scan(client: Any) -> None:
    app = make_app(T0, name="Old name")
    client.put_item(TableName=TABLE, Item=legacy_item(app))
    scanned = {"id": {"S": app.id}, "name": {"S": "Old name"}, "created_at": {"N": str(T0)}}
    renamed = app.renamed("New name")
    client.put_item(TableName=TABLE, Item=legacy_item(renamed))
    assert _backfill_one(client, TABLE, scanned) == 1
    store = DynamoAppStore(client, TABLE)
    assert store.list_all(limit=5, query="new").apps == [renamed]
    assert store.list_all(limit=5, query="old").apps == []
