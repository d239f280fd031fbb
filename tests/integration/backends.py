"""Each storage adapter behind one small test interface, so a contract suite runs on all."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from zerocode.memory.display import DisplayHistoryStore
from zerocode.memory.transcript import TranscriptStore

T = TypeVar("T")


@dataclass
class Backend:
    name: str
    transcript: Callable[..., TranscriptStore]  # (retention_days=0, now=...) -> a store
    display: Callable[..., DisplayHistoryStore]
    raw: Callable[[str, int], dict[str, Any]]  # stored attributes of one transcript item
    corrupt: Callable[[str, int], None]  # make one stored transcript item unreadable


def sqlite_backend(tmp_path: Path) -> Backend:
    from zerocode.adapters.sqlite.database import SqliteDatabase
    from zerocode.adapters.sqlite.display import SqliteDisplayHistoryStore
    from zerocode.adapters.sqlite.transcript import SqliteTranscriptStore

    path = tmp_path / "zc.sqlite3"
    admin = SqliteDatabase(path)

    def raw(app_id: str, seq: int) -> dict[str, Any]:
        cur = admin.conn.execute(
            "SELECT * FROM transcript WHERE app_id = ? AND seq = ?", (app_id, seq)
        )
        row = cur.fetchone()
        return dict(zip([d[0] for d in cur.description], row, strict=True)) if row else {}

    def corrupt(app_id: str, seq: int) -> None:
        admin.conn.execute(
            "UPDATE transcript SET body = '{not json' WHERE app_id = ? AND seq = ?", (app_id, seq)
        )

    return Backend(
        "sqlite",
        lambda **kw: SqliteTranscriptStore(SqliteDatabase(path), **kw),
        lambda **kw: SqliteDisplayHistoryStore(SqliteDatabase(path), **kw),
        raw,
        corrupt,
    )


def dynamodb_backend() -> Backend:
    """Must be called inside moto's mock (the ``aws`` fixture)."""
    import boto3

    from zerocode.adapters.dynamodb.display import DynamoDisplayHistoryStore, create_display_table
    from zerocode.adapters.dynamodb.transcript import DynamoTranscriptStore, create_transcript_table

    client = boto3.client("dynamodb", region_name="us-east-1")
    s3 = boto3.client("s3", region_name="us-east-1")
    s3.create_bucket(Bucket="zc-payloads")
    create_transcript_table(client, "zc-transcript")
    create_display_table(client, "zc-display")

    def raw(app_id: str, seq: int) -> dict[str, Any]:
        item = client.get_item(
            TableName="zc-transcript", Key={"app_id": {"S": app_id}, "seq": {"N": str(seq)}}
        ).get("Item")
        return {k: next(iter(v.values())) for k, v in (item or {}).items()}

    def corrupt(app_id: str, seq: int) -> None:
        client.update_item(
            TableName="zc-transcript",
            Key={"app_id": {"S": app_id}, "seq": {"N": str(seq)}},
            UpdateExpression="SET body = :b REMOVE bodyz, bodyref",
            ExpressionAttributeValues={":b": {"S": "{not json"}},
        )

    return Backend(
        "dynamodb",
        lambda **kw: DynamoTranscriptStore(
            client, "zc-transcript", s3=s3, payload_bucket="zc-payloads", **kw
        ),
        lambda **kw: DynamoDisplayHistoryStore(client, "zc-display", **kw),
        raw,
        corrupt,
    )


class OneRequestAtATime:
    """moto checks a write's condition and then writes with no lock, so two racing threads
    can both pass it; real DynamoDB applies each request to an item atomically. Serialising
    requests restores that guarantee and nothing more: threads still interleave between a
    read and the conditional write that follows it, which is the race under test. Clients
    of one moto backend share ``lock``: its tables are one dict for all of them (a query
    iterating a table while another client's put grew it raised "dictionary changed size
    during iteration" in a CI run)."""

    def __init__(self, client: Any, lock: threading.Lock | None = None) -> None:
        self._client, self._lock = client, lock or threading.Lock()

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._client, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                return method(*args, **kwargs)

        return call


def run_together(n: int, work: Callable[[int], T], timeout: float = 60) -> dict[int, T]:
    """Run ``work(0..n-1)`` on n threads released at the same instant; re-raise any error."""
    start = threading.Barrier(n)
    results: dict[int, T] = {}
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            start.wait(timeout=10)
            results[i] = work(i)
        except BaseException as exc:  # surfaced below, not lost in the thread
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout)
    if errors:
        raise errors[0]
    assert len(results) == n, f"{n - len(results)} thread(s) did not finish"
    return results
