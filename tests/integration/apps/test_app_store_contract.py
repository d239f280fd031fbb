"""AppStore contract (plus ``by_preview_key``), run against every adapter."""

from __future__ import annotations

import base64
import inspect
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from zerocode.apps.records import FEATURED_PRIORITY, App, AppPage, CodeGenType, new_app_id
from zerocode.errors import InvalidInput

OWNER = "user-1"
T0 = 1_700_000_000.123456


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Every test against SQLite and DynamoDB; those that filter by name also against
    "dynamodb-narrow", which reads one item per Query under a name filter, so a filtered page
    has to take many Query round trips (a filter applies after Limit) and still find every
    match. (Without a filter it reads as "dynamodb" does: no need to run it twice.)"""
    if "store" in metafunc.fixturenames:
        kinds = ["sqlite", "dynamodb"]
        if "query=" in inspect.getsource(metafunc.function):
            kinds.append("dynamodb-narrow")
        metafunc.parametrize("store", kinds, indirect=True)


@pytest.fixture
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "sqlite":
        from zerocode.adapters.sqlite.apps import SqliteAppStore
        from zerocode.adapters.sqlite.database import SqliteDatabase

        db = SqliteDatabase(tmp_path / "zc.sqlite3")
        yield SqliteAppStore(db)
        db.close()
        return
    request.getfixturevalue("aws")
    import boto3

    from zerocode.adapters.dynamodb.apps import DynamoAppStore, create_apps_table

    client = boto3.client("dynamodb", region_name="us-east-1")
    create_apps_table(client, "zc-apps")
    create_apps_table(client, "zc-apps")  # idempotent: a second start must not fail
    yield DynamoAppStore(
        client, "zc-apps", **({"filtered_read": 1} if request.param == "dynamodb-narrow" else {})
    )


def make_app(owner: str = OWNER, created_at: float = T0, **kw: Any) -> App:
    kw.setdefault("updated_at", created_at)
    return App(
        id=new_app_id(),
        owner=owner,
        name=kw.pop("name", "My app"),
        code_gen_type=CodeGenType.VUE_PROJECT,
        init_prompt="a todo list",
        created_at=created_at,
        **kw,
    )


def pages_of(list_page: Callable[..., AppPage], limit: int, **kw: Any) -> tuple[list[App], int]:
    """Follow ``next_cursor`` to the end: every app seen, in order, and the page count."""
    seen: list[App] = []
    cursor, pages = None, 0
    while True:
        page = list_page(cursor=cursor, limit=limit, **kw)
        assert len(page.apps) <= limit
        assert page.apps or pages == 0, "an empty page after a cursor"
        seen += page.apps
        pages += 1
        if page.next_cursor is None:
            return seen, pages
        cursor = page.next_cursor


def all_pages(store: Any, owner: str, limit: int, **kw: Any) -> tuple[list[App], int]:
    return pages_of(lambda **k: store.list_by_owner(owner, **k), limit, **kw)


def listers(store: Any) -> dict[str, Callable[..., AppPage]]:
    return {
        "by_owner": lambda **k: store.list_by_owner(OWNER, **k),
        "featured": store.list_featured,
        "all": store.list_all,
    }


LISTS = ["by_owner", "featured", "all"]


def test_every_field_round_trips(store: Any) -> None:
    full = make_app(
        deploy_key="dk-1",
        deploy_url="https://sites.example/dk-1/",
        cover="covers/x.png",
        preview_cover="b1700000000123abcdef",
        priority=99,
        name="Ünïcode ✓ app",
        created_at=T0,
        updated_at=T0 + 0.000001,
    )
    bare = make_app(created_at=0.5)  # None fields, and a timestamp far from "now"
    store.put(full)
    store.put(bare)
    assert store.get(full.id) == full
    assert store.get(bare.id) == bare
    assert store.get(bare.id).deploy_key is None
    assert isinstance(store.get(full.id).code_gen_type, CodeGenType)
    assert store.get("nosuchappid000000000") is None


def test_put_replaces_and_can_clear_fields(store: Any) -> None:
    app = make_app(
        deploy_key="dk-1",
        deploy_url="https://x/",
        cover="c.png",
        preview_cover="b1700000000123abcdef",
    )
    store.put(app)
    renamed = replace(
        app.renamed("New name"), deploy_key=None, deploy_url=None, cover=None, preview_cover=None
    )
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


@pytest.mark.parametrize("lister", LISTS)
@pytest.mark.parametrize(
    "cursor", ["", "!!!", "abc", b64(b"\xff\xfe"), b64(b"[1, 2, 3]"), b64(b"not a cursor")]
)
def test_bad_cursor_is_refused(store: Any, cursor: str, lister: str) -> None:
    store.put(make_app(priority=FEATURED_PRIORITY))
    with pytest.raises(InvalidInput):
        listers(store)[lister](cursor=cursor, limit=10)


@pytest.mark.parametrize("lister", LISTS)
@pytest.mark.parametrize("limit", [0, -1, 51])
def test_limit_out_of_range_is_refused(store: Any, limit: int, lister: str) -> None:
    with pytest.raises(InvalidInput):
        listers(store)[lister](limit=limit)


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


# --- featured -------------------------------------------------------------------------------


def test_featured_highest_priority_then_newest(store: Any) -> None:
    p99_old = make_app(priority=99, created_at=T0)
    p150_old = make_app(priority=150, created_at=T0 + 1)
    p99_new = make_app(priority=99, created_at=T0 + 2, owner="user-2")
    p10 = make_app(priority=10, created_at=T0 + 3)
    p150_new = make_app(priority=150, created_at=T0 + 4, owner="user-3")
    p98 = make_app(priority=FEATURED_PRIORITY - 1, created_at=T0 + 5)
    p1000 = make_app(priority=1000, created_at=T0 - 100)
    plain = make_app(created_at=T0 + 6)
    for app in [p99_old, p150_old, p99_new, p10, p150_new, p98, p1000, plain]:
        store.put(app)
    expected = [p1000, p150_new, p150_old, p99_new, p99_old]
    assert store.list_featured(limit=50) == AppPage(expected, None)
    for limit, page_count in [(1, 5), (2, 3), (4, 2), (5, 1)]:
        assert pages_of(store.list_featured, limit) == (expected, page_count)


def test_featured_ties_page_without_duplicates_or_gaps(store: Any) -> None:
    """Equal priority and time: the order among them is the adapter's; the set is not."""
    ties = [make_app(priority=120, created_at=T0) for _ in range(5)]
    top = make_app(priority=121, created_at=T0 - 50)
    low = make_app(priority=119, created_at=T0 + 50)
    for app in [*ties, top, low]:
        store.put(app)
    seen, _ = pages_of(store.list_featured, 2)
    assert seen[0] == top and seen[-1] == low
    assert sorted(a.id for a in seen[1:-1]) == sorted(a.id for a in ties)


def test_featured_follows_priority_changes_and_deletes(store: Any) -> None:
    app = make_app(priority=150, created_at=T0)
    other = make_app(priority=99, created_at=T0 + 1)
    store.put(app)
    store.put(other)
    assert store.list_featured(limit=10).apps == [app, other]
    lowered = replace(app, priority=FEATURED_PRIORITY - 1)
    store.put(lowered)
    assert store.list_featured(limit=10).apps == [other]
    assert store.get(app.id) == lowered  # still an app, only no longer featured
    assert lowered in store.list_all(limit=10).apps
    store.put(replace(lowered, priority=0))
    raised = replace(app, priority=200)
    store.put(raised)
    assert store.list_featured(limit=10).apps == [raised, other]
    store.put(replace(raised, priority=100))  # reordered, not duplicated
    assert store.list_featured(limit=10).apps == [replace(raised, priority=100), other]
    store.delete(other.id)
    assert store.list_featured(limit=10).apps == [replace(raised, priority=100)]


def test_no_featured_apps(store: Any) -> None:
    store.put(make_app(priority=FEATURED_PRIORITY - 1))
    assert store.list_featured(limit=10) == AppPage([], None)


# --- every app (admin) ----------------------------------------------------------------------


def test_list_all_spans_owners_newest_first(store: Any) -> None:
    apps = [
        make_app(owner=f"user-{i % 3}", created_at=T0 + i * 0.5, priority=150 if i % 4 == 0 else 0)
        for i in range(7)
    ]
    for app in apps:
        store.put(app)
    for limit, page_count in [(1, 7), (2, 4), (7, 1), (50, 1)]:
        assert pages_of(store.list_all, limit) == (list(reversed(apps)), page_count)
    store.delete(apps[3].id)
    assert store.list_all(limit=50).apps == [a for a in reversed(apps) if a != apps[3]]


def test_list_all_equal_creation_times_page_without_duplicates_or_gaps(store: Any) -> None:
    apps = [make_app(owner=f"user-{i}", created_at=T0) for i in range(5)]
    newest = make_app(created_at=T0 + 1)
    for app in [*apps, newest]:
        store.put(app)
    seen, _ = pages_of(store.list_all, 2)
    assert seen[0] == newest
    assert sorted(a.id for a in seen[1:]) == sorted(a.id for a in apps)


def test_list_all_when_empty(store: Any) -> None:
    assert store.list_all(limit=10) == AppPage([], None)


# --- name search ----------------------------------------------------------------------------


def put_named(store: Any) -> dict[str, App]:
    """Matches for "todo" spread among apps that do not match, across owners and priorities."""
    specs = [
        ("Todo list", OWNER, 150),
        ("Weather", OWNER, 150),
        ("my TODO app", OWNER, 0),
        ("Shopping", OWNER, 0),
        ("Recipes", "user-2", 150),
        ("Notes", OWNER, 0),
        ("toDOs for work", "user-2", 120),
        ("Chess", OWNER, 99),
        ("Pomodoro", OWNER, 99),
        ("Photo todo", OWNER, 99),
        ("Blog", "user-2", 0),
        ("Calendar", OWNER, 0),
        ("The TODOLIST", "user-3", 0),
    ]
    apps = {
        name: make_app(name=name, owner=owner, priority=priority, created_at=T0 + i)
        for i, (name, owner, priority) in enumerate(specs)
    }
    for app in apps.values():
        store.put(app)
    return apps


def newest_first(apps: list[App]) -> list[App]:
    return sorted(apps, key=lambda a: a.created_at, reverse=True)


def featured_order(apps: list[App]) -> list[App]:
    return sorted(apps, key=lambda a: (a.priority, a.created_at), reverse=True)


def test_name_search_by_owner(store: Any) -> None:
    apps = put_named(store)
    todo = newest_first([apps[n] for n in ["Todo list", "my TODO app", "Photo todo"]])
    for query in ["todo", "TODO", "ToDo"]:
        assert all_pages(store, OWNER, 2, query=query) == (todo, 2)
        assert all_pages(store, OWNER, 1, query=query) == (todo, 3)
        assert all_pages(store, OWNER, 3, query=query) == (todo, 1)
    assert all_pages(store, OWNER, 2, query="odo")[0] == newest_first(
        [apps[n] for n in ["Todo list", "my TODO app", "Pomodoro", "Photo todo"]]
    )
    assert store.list_by_owner("user-2", limit=10, query="todo").apps == [apps["toDOs for work"]]


def test_name_search_featured(store: Any) -> None:
    apps = put_named(store)
    todo = featured_order([apps[n] for n in ["Todo list", "toDOs for work", "Photo todo"]])
    assert [a.name for a in todo] == ["Todo list", "toDOs for work", "Photo todo"]
    assert pages_of(store.list_featured, 2, query="tOdO") == (todo, 2)
    assert pages_of(store.list_featured, 1, query="todo") == (todo, 3)
    # "my TODO app" and "The TODOLIST" match but are not featured.
    assert pages_of(store.list_featured, 2, query="e")[0] == featured_order(
        [apps[n] for n in ["Weather", "Recipes", "Chess"]]
    )


def test_name_search_all(store: Any) -> None:
    apps = put_named(store)
    todo = newest_first([a for a in apps.values() if "todo" in a.name.lower()])
    assert len(todo) == 5
    assert pages_of(store.list_all, 2, query="TODO") == (todo, 3)
    assert pages_of(store.list_all, 5, query="todo") == (todo, 1)
    assert pages_of(store.list_all, 4, query="todolist") == ([apps["The TODOLIST"]], 1)


@pytest.mark.parametrize("lister", LISTS)
def test_no_query_or_empty_query_matches_everything(store: Any, lister: str) -> None:
    put_named(store)
    list_page = listers(store)[lister]
    everything = pages_of(list_page, 50)
    assert everything[0]
    assert pages_of(list_page, 50, query=None) == everything
    assert pages_of(list_page, 50, query="") == everything
    assert pages_of(list_page, 3, query="")[0] == everything[0]


@pytest.mark.parametrize("lister", LISTS)
def test_query_matching_nothing_is_an_empty_last_page(store: Any, lister: str) -> None:
    put_named(store)
    assert listers(store)[lister](limit=2, query="zzz") == AppPage([], None)
    assert listers(store)[lister](limit=2, query="todo list x") == AppPage([], None)


@pytest.mark.parametrize("lister", LISTS)
def test_name_search_is_a_plain_substring(store: Any, lister: str) -> None:
    """No wildcard or pattern meaning: "%", "_" and "*" are only characters."""
    plain = make_app(name="Sales report", priority=150, created_at=T0)
    percent = make_app(name="100% done", priority=150, created_at=T0 + 1)
    underscore = make_app(name="snake_case", priority=150, created_at=T0 + 2)
    for app in [plain, percent, underscore]:
        store.put(app)
    list_page = listers(store)[lister]
    assert list_page(limit=10, query="%").apps == [percent]
    assert list_page(limit=10, query="_").apps == [underscore]
    assert list_page(limit=10, query="s_l").apps == []
    assert list_page(limit=10, query="*").apps == []
    assert list_page(limit=10, query="0% D").apps == [percent]


@pytest.mark.parametrize("lister", LISTS)
def test_name_search_folds_case_beyond_ascii(store: Any, lister: str) -> None:
    """As ``name_matches``: casefold, not ASCII-only lower-casing."""
    uber = make_app(name="Über App", priority=150, created_at=T0)
    strasse = make_app(name="Straße map", priority=150, created_at=T0 + 1)
    store.put(uber)
    store.put(strasse)
    list_page = listers(store)[lister]
    assert list_page(limit=10, query="über").apps == [uber]
    assert list_page(limit=10, query="ÜBER").apps == [uber]
    assert list_page(limit=10, query="STRASSE").apps == [strasse]


@pytest.mark.parametrize("lister", LISTS)
def test_name_search_follows_renames(store: Any, lister: str) -> None:
    app = make_app(name="Old name", priority=150)
    store.put(app)
    renamed = app.renamed("Brand new")
    store.put(renamed)
    list_page = listers(store)[lister]
    assert list_page(limit=10, query="old").apps == []
    assert list_page(limit=10, query="NEW").apps == [renamed]
