"""Restore is O(window), not O(history) (M6): the same bounded work at 100 and 20,000 messages.

200 times the history, the same statements, requests and items. (100,000 messages took
two minutes of the suite to seed into moto and showed nothing more; bench/memory.py
measures restores at 100,000, docs/benchmarks.md.)

SQLite is measured with a counting connection (statements run, rows fetched);
DynamoDB with botocore event hooks (requests by operation, items returned).
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.factories import turn_entries
from zerocode.adapters.inprocess.cache import LruWindowCache
from zerocode.adapters.sqlite.database import SqliteDatabase
from zerocode.adapters.sqlite.transcript import SqliteTranscriptStore
from zerocode.memory.facade import Memory
from zerocode.memory.transcript import Entry, TranscriptStore
from zerocode.memory.window import WindowPolicy

SIZES = (100, 20_000)
# moto's DynamoDB loads about 200 items a second on this machine: its large history is a
# quarter of SQLite's (still 30 times the small one and 50 times what a window reads).
DYNAMO_SIZES = (100, 5_000)
POLICY = WindowPolicy(max_messages=30)  # reads 95 entries: fewer than the smaller history


def history(messages: int) -> list[Entry]:
    """Whole turns (user, a step of 3 parallel calls, final: 6 entries) up to ``messages``."""
    out: list[Entry] = []
    while len(out) < messages:
        out += turn_entries(len(out) + 1, len(out) // 6 + 1, steps=1, calls=3, payload="p" * 40)
    return out[: messages - messages % 6] if messages % 6 else out


def seed(store: TranscriptStore, app_id: str, entries: list[Entry], batch: int) -> None:
    for start in range(0, len(entries), batch):
        store.append(app_id, entries[start : start + batch], expected_head=start)


def seed_dynamo(client: Any, table: str, app_id: str, entries: list[Entry]) -> None:
    """Bulk-load with BatchWriteItem: moto copies the table per transaction action, so
    100k messages through ``append`` would take hours. The items are the adapter's own."""
    from zerocode.adapters.dynamodb.transcript import DynamoTranscriptStore

    store = DynamoTranscriptStore(client, table)
    for start in range(0, len(entries), 25):
        items, uploads = store._encode(app_id, entries[start : start + 25])
        assert not uploads
        client.batch_write_item(RequestItems={table: [{"PutRequest": {"Item": i}} for i in items]})


class CountingConnection(sqlite3.Connection):
    """Counts statements executed and rows fetched through ``execute``."""

    statements = 0
    rows = 0

    def execute(self, sql: str, params: Any = ()) -> Any:
        self.statements += 1
        return _CountingCursor(super().execute(sql, params), self)


class _CountingCursor:
    def __init__(self, cursor: sqlite3.Cursor, conn: CountingConnection) -> None:
        self.cursor, self.conn = cursor, conn

    def fetchall(self) -> list[Any]:
        rows = self.cursor.fetchall()
        self.conn.rows += len(rows)
        return rows

    def fetchone(self) -> Any:
        row = self.cursor.fetchone()
        self.conn.rows += row is not None
        return row

    def __getattr__(self, name: str) -> Any:
        return getattr(self.cursor, name)


def sqlite_restore(tmp_path: Path, messages: int) -> tuple[int, int]:
    path = tmp_path / f"r{messages}.sqlite3"
    seed(SqliteTranscriptStore(SqliteDatabase(path)), "app", history(messages), batch=5_000)
    db = SqliteDatabase(
        path,
        connect=lambda p: sqlite3.connect(
            p, factory=CountingConnection, isolation_level=None, check_same_thread=False
        ),
    )
    conn = db.conn
    assert isinstance(conn, CountingConnection)
    conn.statements = conn.rows = 0
    memory = Memory(SqliteTranscriptStore(db), LruWindowCache(), POLICY)
    window = memory.window("app", "system")  # cold: a new container
    assert len(window.messages) > 20
    return conn.statements, conn.rows


def test_sqlite_restore_work_is_flat(tmp_path: Path) -> None:
    small, large = (sqlite_restore(tmp_path, n) for n in SIZES)
    assert small == large
    statements, rows = large
    assert statements <= 2 and rows <= POLICY.tail_items + 1


def test_sqlite_tail_query_searches_the_key_instead_of_scanning(tmp_path: Path) -> None:
    db = SqliteDatabase(tmp_path / "plan.sqlite3")
    plan = " ".join(
        str(r)
        for r in db.conn.execute(
            "EXPLAIN QUERY PLAN SELECT seq FROM transcript WHERE app_id = ? "
            "ORDER BY seq DESC LIMIT 40",
            ("app",),
        ).fetchall()
    )
    assert "SEARCH" in plan and "PRIMARY KEY" in plan and "SCAN" not in plan


def dynamo_restore(messages: int) -> tuple[Counter[str], int]:
    import boto3

    from zerocode.adapters.dynamodb.transcript import DynamoTranscriptStore, create_transcript_table

    client = boto3.client("dynamodb", region_name="us-east-1")
    table = f"restore-{messages}"
    create_transcript_table(client, table)
    seed_dynamo(client, table, "app", history(messages))
    requests: Counter[str] = Counter()
    items = [0]

    def before(params: dict[str, Any], model: Any, **_: Any) -> None:
        requests[model.name] += 1
        assert params.get("Select") != "COUNT", "restore must not count"

    def after(parsed: dict[str, Any], model: Any, **_: Any) -> None:
        items[0] += len(parsed.get("Items", ())) + ("Item" in parsed)

    client.meta.events.register("provide-client-params.dynamodb.*", before)
    client.meta.events.register("after-call.dynamodb.*", after)
    memory = Memory(DynamoTranscriptStore(client, table), LruWindowCache(), POLICY)
    window = memory.window("app", "system")
    assert len(window.messages) > 20
    return requests, items[0]


@pytest.mark.usefixtures("aws")
def test_dynamodb_restore_work_is_flat() -> None:
    small, large = (dynamo_restore(n) for n in DYNAMO_SIZES)
    assert small == large
    requests, items = large
    assert set(requests) <= {"Query", "GetItem"} and "Scan" not in requests
    assert sum(requests.values()) <= 2 and items <= POLICY.tail_items + 1
