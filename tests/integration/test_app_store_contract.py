"""AppStore contract (plus ``by_preview_key``), run against every adapter."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from zerocode.apps import App, CodeGenType, new_app_id
from zerocode.errors import InvalidInput

OWNER = "user-1"
T0 = 1_700_000_000.123456


@pytest.fixture(params=["sqlite", "dynamodb"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "sqlite":
        from zerocode.adapters.sqlite import SqliteAppStore, SqliteDatabase

        db = SqliteDatabase(tmp_path / "zc.sqlite3")
        yield SqliteAppStore(db)
        db.close()
        return
    request.getfixturevalue("aws")
    import boto3

    from zerocode.adapters.dynamodb_apps import DynamoAppStore, create_apps_table

    client = boto3.client("dynamodb", region_name="us-east-1")
    create_apps_table(client, "zc-apps")
    create_apps_table(client, "zc-apps")  # idempotent: a second start must not fail
    yield DynamoAppStore(client, "zc-apps")


def make_app(owner: str = OWNER, created_at: float = T0, **kw: Any) -> App:
    kw.setdefault("updated_at", created_at)
    return App(new_app_id(), owner, kw.pop("name", "My app"), CodeGenType.VUE_PROJECT,
               "a todo list", created_at=created_at, **kw)


def all_pages(store: Any, owner: str, limit: int) -> tuple[list[App], int]:
    seen: list[App] = []
    cursor, pages = None, 0
    while True:
        page = store.list_by_owner(owner, cursor=cursor, limit=limit)
        seen += page.apps
        pages += 1
        if page.next_cursor is None:
            return seen, pages
        cursor = page.next_cursor


def test_every_field_round_trips(store: Any) -> None:
    full = make_app(deploy_key="dk-1", deploy_url="https://sites.example/dk-1/",
                    cover="covers/x.png", priority=99, name="Ünïcode ✓ app",
                    created_at=T0, updated_at=T0 + 0.000001)
    bare = make_app(created_at=0.5)  # None fields, and a timestamp far from "now"
    store.put(full)
    store.put(bare)
    assert store.get(full.id) == full
    assert store.get(bare.id) == bare
    assert store.get(bare.id).deploy_key is None
    assert isinstance(store.get(full.id).code_gen_type, CodeGenType)
    assert store.get("nosuchappid000000000") is None


def test_put_replaces_and_can_clear_fields(store: Any) -> None:
    app = make_app(deploy_key="dk-1", deploy_url="https://x/", cover="c.png")
    store.put(app)
    renamed = replace(app.renamed("New name"), deploy_key=None, deploy_url=None, cover=None)
    store.put(renamed)
    assert store.get(app.id) == renamed
    page = store.list_by_owner(OWNER, limit=10)
    assert page.apps == [renamed]


def test_by_preview_key(store: Any) -> None:
    a, b = make_app(), make_app(owner="user-2")
    store.put(a)
    store.put(b)
    assert store.by_preview_key(a.preview_key) == a
    assert store.by_preview_key(b.preview_key) == b
    assert store.by_preview_key("no-such-preview-key") is None
    store.delete(a.id)
    assert store.by_preview_key(a.preview_key) is None


def test_pages_newest_first_without_duplicates_or_gaps(store: Any) -> None:
    apps = [make_app(created_at=T0 + i * 1.5) for i in range(7)]
    for app in apps:
        store.put(app)
    seen, pages = all_pages(store, OWNER, 2)
    assert pages == 4
    assert seen == list(reversed(apps))


def test_exact_multiple_of_limit_has_no_empty_last_page(store: Any) -> None:
    for i in range(4):
        store.put(make_app(created_at=T0 + i))
    seen, pages = all_pages(store, OWNER, 2)
    assert (len(seen), pages) == (4, 2)


def test_equal_creation_times_page_without_duplicates_or_gaps(store: Any) -> None:
    """Order among equal times is the adapter's; the set of apps is not."""
    apps = [make_app(created_at=T0) for _ in range(5)] + [make_app(created_at=T0 + 1)]
    for app in apps:
        store.put(app)
    seen, _ = all_pages(store, OWNER, 2)
    assert seen[0] == apps[-1]
    assert sorted(a.id for a in seen) == sorted(a.id for a in apps)


def test_owners_are_isolated(store: Any) -> None:
    mine = [make_app(created_at=T0 + i) for i in range(3)]
    theirs = make_app(owner="user-2", created_at=T0 + 10)
    for app in [*mine, theirs]:
        store.put(app)
    assert all_pages(store, OWNER, 2)[0] == list(reversed(mine))
    assert store.list_by_owner("user-2", limit=10).apps == [theirs]
    empty = store.list_by_owner("nobody", limit=10)
    assert (empty.apps, empty.next_cursor) == ([], None)


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode()


@pytest.mark.parametrize("cursor", ["", "!!!", "abc", b64(b"\xff\xfe"), b64(b"[1, 2, 3]"),
                                    b64(b"not a cursor")])
def test_bad_cursor_is_refused(store: Any, cursor: str) -> None:
    store.put(make_app())
    with pytest.raises(InvalidInput):
        store.list_by_owner(OWNER, cursor=cursor, limit=10)


@pytest.mark.parametrize("limit", [0, -1, 51])
def test_limit_out_of_range_is_refused(store: Any, limit: int) -> None:
    with pytest.raises(InvalidInput):
        store.list_by_owner(OWNER, limit=limit)


def test_limit_bounds_are_accepted(store: Any) -> None:
    for i in range(3):
        store.put(make_app(created_at=T0 + i))
    assert len(store.list_by_owner(OWNER, limit=1).apps) == 1
    assert len(store.list_by_owner(OWNER, limit=50).apps) == 3


def test_delete_says_whether_it_existed(store: Any) -> None:
    app, other = make_app(), make_app()
    store.put(app)
    store.put(other)
    assert store.delete(app.id) is True
    assert store.get(app.id) is None
    assert store.delete(app.id) is False
    assert store.list_by_owner(OWNER, limit=10).apps == [other]
