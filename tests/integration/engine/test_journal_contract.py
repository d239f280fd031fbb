"""StepJournal contract, on SQLite and on DynamoDB (moto): one record per app, replaced."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from zerocode.engine.journal import PendingCall, PendingStep, StepJournal


@pytest.fixture(params=["sqlite", "dynamodb"])
def journal(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StepJournal]:
    if request.param == "sqlite":
        from zerocode.adapters.sqlite.database import SqliteDatabase
        from zerocode.adapters.sqlite.journal import SqliteJournal

        db = SqliteDatabase(tmp_path / "zc.sqlite3")
        yield SqliteJournal(db)
        db.close()
        return
    request.getfixturevalue("aws")
    import boto3

    from zerocode.adapters.dynamodb.journal import DynamoJournal
    from zerocode.adapters.dynamodb.lease import create_leases_table

    client = boto3.client("dynamodb", region_name="us-east-1")
    create_leases_table(client, "zc-leases")
    yield DynamoJournal(client, "zc-leases")


STEP = PendingStep(
    turn=3, head=17, calls=(PendingCall("write_file", "src/App.vue"), PendingCall("exit", None))
)


def test_a_step_is_read_back_replaced_and_cleared(journal: StepJournal) -> None:
    assert journal.read("app-1") is None
    journal.write("app-1", STEP)
    assert journal.read("app-1") == STEP
    assert journal.read("app-2") is None
    later = PendingStep(turn=3, head=20, calls=(PendingCall("delete_file", "src/old.vue"),))
    journal.write("app-1", later)
    assert journal.read("app-1") == later
    journal.clear("app-1")
    assert journal.read("app-1") is None
    journal.clear("app-1")  # clearing nothing is harmless


def test_an_unreadable_record_is_no_record() -> None:
    assert PendingStep.decode("{not json") is None
    assert PendingStep.decode('{"turn": 1}') is None
    assert PendingStep.decode(STEP.encode()) == STEP
