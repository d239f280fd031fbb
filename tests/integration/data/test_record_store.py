"""The RecordStore contract (zerocode/data/records.py), on SQLite and on DynamoDB (moto):
what one app keeps in one space and collection stays there; lists walk creation order by
pages with a cursor; the record past a collection's bound is refused and nothing is
dropped, even when creates race."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from zerocode.adapters.sqlite.database import SqliteDatabase
from zerocode.adapters.sqlite.records import SqliteRecordStore
from zerocode.data.records import (
    CollectionFull,
    Query,
    Record,
    RecordStore,
    Space,
    after_cursor,
    changed,
    cursor_of,
    new_record,
)
from zerocode.errors import InvalidInput


@pytest.fixture(params=["sqlite", "dynamodb"])
def stores(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], RecordStore]]:
    """Makes stores over one database (each as another process would hold it)."""
    if request.param == "sqlite":
        yield lambda: SqliteRecordStore(SqliteDatabase(tmp_path / "zc.sqlite3"))
        return
    request.getfixturevalue("aws")
    import boto3

    from tests.integration.backends import OneRequestAtATime
    from zerocode.adapters.dynamodb.app_data import create_app_data_table
    from zerocode.adapters.dynamodb.records import DynamoRecordStore

    client = OneRequestAtATime(boto3.client("dynamodb", region_name="us-east-1"))
    create_app_data_table(client, "app-data")
    yield lambda: DynamoRecordStore(client, "app-data")


@pytest.fixture
def store(stores: Callable[[], RecordStore]) -> RecordStore:
    return stores()


def test_a_record_is_kept_read_changed_and_deleted(store: RecordStore) -> None:
    note = new_record("u1", {"title": "Milk", "done": False})
    store.create("app1", "live", "notes", note, most=10)
    assert store.get("app1", "live", "notes", note.id) == note
    shown = note.shown()
    assert shown["owner"] == "u1" and shown["title"] == "Milk" and shown["id"] == note.id
    done = changed(note, {"done": True, "title": None})
    assert done.fields == {"done": True} and done.created_at == note.created_at
    assert done.updated_at >= note.updated_at
    assert store.replace("app1", "live", "notes", done)
    assert store.get("app1", "live", "notes", note.id) == done
    assert store.delete("app1", "live", "notes", note.id)
    assert store.get("app1", "live", "notes", note.id) is None
    assert not store.delete("app1", "live", "notes", note.id)
    assert not store.replace("app1", "live", "notes", done)


def test_apps_spaces_and_collections_never_see_each_other(store: RecordStore) -> None:
    note = new_record(None, {"title": "A's"})
    store.create("app1", "preview", "notes", note, most=10)
    elsewhere: list[tuple[str, Space, str]] = [
        ("app2", "preview", "notes"),
        ("app1", "live", "notes"),
        ("app1", "preview", "todos"),
    ]
    for app, space, collection in elsewhere:
        assert store.get(app, space, collection, note.id) is None
        assert store.list(app, space, collection, Query()).records == ()
        assert not store.delete(app, space, collection, note.id)
    assert store.count("app1", "preview", "notes") == 1
    store.create("app1", "live", "notes", new_record(None, {"title": "live"}), most=10)
    assert store.clear("app1", "preview") == 1
    assert store.count("app1", "live", "notes") == 1
    assert store.clear("app1") == 1


def test_lists_walk_creation_order_by_pages_either_way(store: RecordStore) -> None:
    made = []
    for i in range(7):
        record = new_record("u1" if i % 2 else "u2", {"n": i, "even": i % 2 == 0})
        store.create("app1", "live", "notes", record, most=100)
        made.append(record)
    seen: list[int] = []
    cursor: str | None = None
    while True:
        after = after_cursor(cursor) if cursor is not None else None
        page = store.list("app1", "live", "notes", Query(limit=3, after=after))
        seen += [r.fields["n"] for r in page.records]
        if page.cursor is None:
            break
        cursor = page.cursor
    assert seen == list(range(7))
    newest = store.list("app1", "live", "notes", Query(newest=True, limit=2))
    assert [r.fields["n"] for r in newest.records] == [6, 5] and newest.cursor is not None
    rest = store.list(
        "app1", "live", "notes", Query(newest=True, limit=10, after=after_cursor(newest.cursor))
    )
    assert [r.fields["n"] for r in rest.records] == [4, 3, 2, 1, 0] and rest.cursor is None
    mine = store.list("app1", "live", "notes", Query(owner="u1"))
    assert [r.fields["n"] for r in mine.records] == [1, 3, 5]
    even = store.list("app1", "live", "notes", Query(equals={"even": True}))
    assert [r.fields["n"] for r in even.records] == [0, 2, 4, 6]
    three = store.list("app1", "live", "notes", Query(equals={"n": 3}, owner="u1"))
    assert [r.id for r in three.records] == [made[3].id]
    assert store.list("app1", "live", "notes", Query(equals={"n": 3}, owner="u2")).records == ()


def test_the_record_past_the_bound_is_refused_and_nothing_is_dropped(store: RecordStore) -> None:
    for i in range(3):
        store.create("app1", "live", "notes", new_record(None, {"n": i}), most=3)
    with pytest.raises(CollectionFull) as full:
        store.create("app1", "live", "notes", new_record(None, {"n": 3}), most=3)
    assert full.value.status == 409 and "notes holds 3 records" in full.value.message
    assert store.count("app1", "live", "notes") == 3
    store.create("app1", "preview", "notes", new_record(None, {"n": 0}), most=3)  # its own bound


def test_creates_racing_for_the_last_place_get_one_each_at_most(
    stores: Callable[[], RecordStore],
) -> None:
    held = [stores() for _ in range(4)]
    outcomes: list[str] = []

    def create(store: RecordStore) -> None:
        for _ in range(5):
            try:
                store.create("app1", "live", "notes", new_record(None, {}), most=10)
                outcomes.append("kept")
            except CollectionFull:
                outcomes.append("full")

    threads = [threading.Thread(target=create, args=(s,)) for s in held]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outcomes.count("kept") == 10 and outcomes.count("full") == 10
    assert held[0].count("app1", "live", "notes") == 10


CUT = cursor_of(Record("0123456789abcdef", None, "2026-12-05T10:00:00.000000Z", "x"))[:-2]


@pytest.mark.parametrize("cursor", ["", "x", "bm90IGpzb24", CUT])
def test_a_cursor_this_api_never_gave_is_a_clear_error(cursor: str) -> None:
    with pytest.raises(InvalidInput, match="cursor is not one this API returned"):
        after_cursor(cursor)
