"""The CheckStore contract (issue 25: an app's suite of acceptance checks), on SQLite (a real
file, two instances as two processes would have): numbered per app, kept in order, retired
with a reason and never lost, bounded, and gone with its app."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.unit.engine.test_acceptance import TODO
from zerocode.adapters.sqlite.checks import SqliteCheckStore
from zerocode.adapters.sqlite.database import SqliteDatabase
from zerocode.engine.acceptance import MAX_CHECKS, CheckInvalid, CheckStore, parse_check
from zerocode.errors import Conflict, NotFound

Stores = Callable[[], CheckStore]
CHECK = parse_check(TODO)
OTHER = parse_check({**TODO, "description": "The list starts empty", "steps": []})


@pytest.fixture
def stores(tmp_path: Path) -> Iterator[Stores]:
    dbs: list[SqliteDatabase] = []

    def sqlite() -> CheckStore:
        dbs.append(SqliteDatabase(tmp_path / "zerocode.sqlite3"))
        return SqliteCheckStore(dbs[-1])

    yield sqlite
    for db in dbs:
        db.close()


def test_checks_are_numbered_per_app_and_listed_in_order(stores: Stores) -> None:
    one, two = stores(), stores()
    assert one.list("app1") == []
    first = one.add("app1", CHECK, turn=1)
    second = two.add("app1", OTHER, turn=3)
    assert (first.id, second.id) == ("c1", "c2")
    assert one.add("app2", OTHER, turn=1).id == "c1"
    listed = two.list("app1")
    assert [c.id for c in listed] == ["c1", "c2"] and listed == [first, second]
    assert listed[0].check == CHECK and listed[1].added_turn == 3


def test_a_retired_check_keeps_its_record_and_cannot_be_retired_again(stores: Stores) -> None:
    store = stores()
    store.add("app1", CHECK, turn=1)
    retired = store.retire("app1", "c1", "the user asked for a different list", turn=4)
    assert retired.retired == "the user asked for a different list" and retired.retired_turn == 4
    assert stores().list("app1") == [retired]
    with pytest.raises(Conflict, match="retired already"):
        store.retire("app1", "c1", "again", turn=5)
    for missing in ("c2", "x1", "c", "c1" + "0" * 20):
        with pytest.raises(NotFound):
            store.retire("app1", missing, "why", turn=5)
    store.add("app1", OTHER, turn=5)
    with pytest.raises(CheckInvalid, match="reason"):
        store.retire("app1", "c2", "  ", turn=6)
    assert store.add("app1", OTHER, turn=7).id == "c3"  # numbers are never reused


def test_live_checks_are_bounded_and_retiring_one_makes_room(stores: Stores) -> None:
    store = stores()
    for turn in range(MAX_CHECKS):
        store.add("app1", CHECK, turn=turn + 1)
    with pytest.raises(CheckInvalid, match="retire one"):
        store.add("app1", OTHER, turn=99)
    store.retire("app1", "c7", "no longer asked for", turn=99)
    assert store.add("app1", OTHER, turn=100).id == f"c{MAX_CHECKS + 1}"
    assert store.add("app2", OTHER, turn=1).id == "c1"  # another app's suite is its own


def test_a_deleted_app_leaves_no_check(stores: Stores) -> None:
    store = stores()
    store.add("app1", CHECK, turn=1)
    store.add("app2", CHECK, turn=1)
    store.delete_app("app1")
    assert store.list("app1") == [] and len(store.list("app2")) == 1
    assert store.add("app1", CHECK, turn=2).id == "c1"
