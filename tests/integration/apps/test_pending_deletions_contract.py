"""PendingDeletions contract: SQLite and DynamoDB remember unfinished deletions alike."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from zerocode.apps.deletion import PendingDeletions


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["sqlite", "dynamodb"])
def make(
    request: pytest.FixtureRequest, tmp_path: Any
) -> Iterator[Callable[[Clock], PendingDeletions]]:
    if request.param == "sqlite":
        from zerocode.adapters.sqlite.database import SqliteDatabase
        from zerocode.adapters.sqlite.deletions import SqlitePendingDeletions

        db = SqliteDatabase(tmp_path / "zc.sqlite3")
        yield lambda clock: SqlitePendingDeletions(db, clock)
        db.close()
    else:
        request.getfixturevalue("aws")
        import boto3

        from zerocode.adapters.dynamodb.deletions import (
            DynamoPendingDeletions,
            create_deletions_table,
        )

        client = boto3.client("dynamodb", region_name="us-east-1")
        create_deletions_table(client, "zc-deletions")
        yield lambda clock: DynamoPendingDeletions(client, "zc-deletions", clock)


def test_pending_lists_oldest_first_until_done(make: Callable[[Clock], PendingDeletions]) -> None:
    clock = Clock()
    deletions = make(clock)
    assert deletions.pending() == []
    for app_id in ("app-b", "app-a", "app-c"):
        deletions.add(app_id)
        clock.now += 1
    assert deletions.pending() == ["app-b", "app-a", "app-c"]
    assert deletions.pending(limit=2) == ["app-b", "app-a"]
    deletions.done("app-a")
    assert deletions.pending() == ["app-b", "app-c"]


def test_adding_twice_keeps_the_first_age(make: Callable[[Clock], PendingDeletions]) -> None:
    clock = Clock()
    deletions = make(clock)
    deletions.add("app-1")
    clock.now += 10
    deletions.add("app-2")
    clock.now += 10
    deletions.add("app-1")  # a second delete request while the first is unfinished
    assert deletions.pending() == ["app-1", "app-2"]


def test_failures_keep_the_app_pending_and_done_is_idempotent(
    make: Callable[[Clock], PendingDeletions],
) -> None:
    deletions = make(Clock())
    deletions.add("app-1")
    deletions.failed("app-1", "S3 unavailable")
    deletions.failed("app-1", "S3 unavailable again")
    assert deletions.pending() == ["app-1"]
    deletions.done("app-1")
    deletions.done("app-1")
    deletions.failed("app-1", "late report from a slower process")  # must not resurrect it
    assert deletions.pending() == []


def test_a_new_instance_sees_what_an_earlier_one_recorded(
    make: Callable[[Clock], PendingDeletions],
) -> None:
    make(Clock()).add("app-9")
    assert make(Clock()).pending() == ["app-9"]
