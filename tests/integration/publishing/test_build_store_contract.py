"""BuildStore contract: SQLite and DynamoDB keep build records alike."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from zerocode.apps.records import CodeGenType
from zerocode.errors import InvalidInput
from zerocode.publishing.builds import Build, BuildPurpose, BuildState, BuildStore, new_build_id


@pytest.fixture(params=["sqlite", "dynamodb"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BuildStore]:
    if request.param == "sqlite":
        from zerocode.adapters.sqlite.builds import SqliteBuildStore
        from zerocode.adapters.sqlite.database import SqliteDatabase

        db = SqliteDatabase(tmp_path / "zc.sqlite3")
        yield SqliteBuildStore(db)
        db.close()
    else:
        request.getfixturevalue("aws")
        import boto3

        from zerocode.adapters.dynamodb.builds import DynamoBuildStore, create_builds_table

        client = boto3.client("dynamodb", region_name="us-east-1")
        create_builds_table(client, "zc-builds")
        yield DynamoBuildStore(client, "zc-builds")


def build(app_id: str, at: float, purpose: BuildPurpose = BuildPurpose.DEPLOY) -> Build:
    return Build(
        id=new_build_id(at),
        app_id=app_id,
        purpose=purpose,
        kind=CodeGenType.VUE_PROJECT,
        source_digest="d" * 64,
        created_at=at,
    )


def test_a_record_round_trips_through_its_states(store: BuildStore) -> None:
    queued = build("app-1", 1_000.0)
    store.put(queued)
    assert store.get("app-1", queued.id) == queued
    running = queued.running()
    store.put(running)
    done = running.succeeded("/data/builds/app-1/" + queued.id, "vite v8 built in 1.2s\n")
    store.put(done)
    got = store.get("app-1", queued.id)
    assert got == done and got is not None
    assert got.state is BuildState.SUCCEEDED and got.seconds is not None and got.seconds >= 0
    failed = running.failed("the project did not build", "x" * 10_000)
    store.put(failed)
    got = store.get("app-1", queued.id)
    assert got is not None and got.error == "the project did not build"
    assert len(got.log_tail) == 4000  # only the tail is kept
    assert store.get("app-1", "b0000000000000000000") is None
    assert store.get("app-2", queued.id) is None


def test_lists_newest_first_with_a_cursor_and_a_purpose_filter(store: BuildStore) -> None:
    made = [
        build("app-1", 1_000.0 + i, BuildPurpose.PREVIEW if i % 2 else BuildPurpose.DEPLOY)
        for i in range(7)
    ]
    for b in made:
        store.put(b)
    store.put(build("app-2", 5_000.0))
    newest_first = [b.id for b in reversed(made)]
    first = store.list("app-1", limit=3)
    assert [b.id for b in first.builds] == newest_first[:3] and first.next_cursor
    second = store.list("app-1", cursor=first.next_cursor, limit=3)
    third = store.list("app-1", cursor=second.next_cursor, limit=3)
    assert [b.id for b in second.builds + third.builds] == newest_first[3:]
    assert third.next_cursor is None
    deploys = store.list("app-1", limit=2, purpose=BuildPurpose.DEPLOY)
    assert [b.id for b in deploys.builds] == [made[6].id, made[4].id]
    rest = store.list("app-1", cursor=deploys.next_cursor, limit=2, purpose=BuildPurpose.DEPLOY)
    assert [b.id for b in rest.builds] == [made[2].id, made[0].id] and rest.next_cursor is None


def test_bad_cursors_are_refused(store: BuildStore) -> None:
    for bad in ("x", "b123", "' OR 1=1 --"):
        with pytest.raises(InvalidInput):
            store.list("app-1", cursor=bad)


def test_delete_app_removes_only_that_app(store: BuildStore) -> None:
    for i in range(30):  # more than one DynamoDB batch
        store.put(build("app-1", 1_000.0 + i))
    keep = build("app-2", 1_000.0)
    store.put(keep)
    assert store.delete_app("app-1") == 30
    assert store.list("app-1").builds == []
    assert store.get("app-2", keep.id) == keep


def test_build_ids_sort_in_request_order() -> None:
    ids = [new_build_id(1_000.0 + i / 1000) for i in range(50)]
    assert sorted(ids) == ids and len(set(ids)) == 50


def test_build_ids_asked_for_in_one_millisecond_stay_in_order() -> None:
    ids = [new_build_id() for _ in range(200)]  # far more than one per millisecond
    assert sorted(ids) == ids and len(set(ids)) == 200
