"""DisplayHistoryStore contract, run against every adapter."""

from __future__ import annotations

import pytest

from tests.integration.backends import Backend
from zerocode.errors import InvalidInput
from zerocode.memory.display import DisplayRole, DisplayStatus

APP = "app-1"


def test_pages_newest_first_with_cursor_until_exhausted(backend: Backend) -> None:
    store = backend.display()
    written = [
        store.append(APP, DisplayRole.USER if i % 2 == 0 else DisplayRole.AI, f"m{i}", turn=i // 2)
        for i in range(120)
    ]
    seen, cursor, pages = [], None, 0
    while True:
        page = store.page(APP, before=cursor, limit=50)
        seen += page.entries
        pages += 1
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert pages == 3
    assert [e.content for e in seen] == [f"m{i}" for i in reversed(range(120))]
    assert seen == list(reversed(written))


def test_exact_multiple_of_limit_has_no_empty_last_page(backend: Backend) -> None:
    store = backend.display()
    for i in range(4):
        store.append(APP, DisplayRole.USER, f"m{i}")
    first = store.page(APP, limit=2)
    second = store.page(APP, before=first.next_cursor, limit=2)
    assert [e.content for e in second.entries] == ["m1", "m0"]
    assert second.next_cursor is None


def test_entry_fields_round_trip(backend: Backend) -> None:
    store = backend.display()
    element = {"pagePath": "/", "tag": "h1", "selector": "#app > h1", "text": "Hello"}
    made = store.append(APP, DisplayRole.USER, "rename", element=element, turn=3)
    failed = store.append(
        APP,
        DisplayRole.ERROR,
        "modify_file failed: old text not found",
        status=DisplayStatus.FAILED,
        turn=3,
    )
    page = store.page(APP, limit=10)
    assert page.entries == [failed, made]
    assert page.entries[1].element == element
    assert page.entries[0].status is DisplayStatus.FAILED
    assert page.next_cursor is None


def test_a_replys_usage_round_trips_and_is_none_where_not_said(backend: Backend) -> None:
    """Issue 43: a reply's usage, as its done said it, comes back as written."""
    store = backend.display()
    usage = {
        "requests": 2,
        "inputTokens": 3100,
        "outputTokens": 120,
        "cachedTokens": 1024,
        "estimated": False,
        "rounds": [
            {
                "round": 0,
                "requests": 2,
                "inputTokens": 3100,
                "outputTokens": 120,
                "cachedTokens": 1024,
                "estimated": False,
            }
        ],
    }
    said = store.append(APP, DisplayRole.AI, "Done.", turn=1, usage=usage)
    plain = store.append(APP, DisplayRole.USER, "again", turn=2)
    assert store.page(APP, limit=10).entries == [plain, said]
    assert store.page(APP, limit=10).entries[1].usage == usage and plain.usage is None


@pytest.mark.parametrize("limit", [0, 51, -1])
def test_limit_out_of_range_is_refused(backend: Backend, limit: int) -> None:
    with pytest.raises(InvalidInput):
        backend.display().page(APP, limit=limit)


@pytest.mark.parametrize("cursor", ["", "abc", "1" * 20, "x" * 29])
def test_bad_cursor_is_refused(backend: Backend, cursor: str) -> None:
    with pytest.raises(InvalidInput):
        backend.display().page(APP, before=cursor, limit=10)


def test_delete_app_removes_only_that_app(backend: Backend) -> None:
    store = backend.display()
    for i in range(3):
        store.append(APP, DisplayRole.USER, f"m{i}")
    kept = store.append("app-2", DisplayRole.AI, "other")
    assert store.delete_app(APP) == 3
    assert store.page(APP, limit=10).entries == []
    assert store.page("app-2", limit=10).entries == [kept]
