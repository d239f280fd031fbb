"""The SQLite WAL stays bounded (issue 29): a real database file, real writes, the -wal file
measured on disk."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from tests.factories import turn_entries
from zerocode.adapters.sqlite import database
from zerocode.adapters.sqlite.database import SqliteDatabase
from zerocode.adapters.sqlite.transcript import SqliteTranscriptStore


def wal_bytes(path: Path) -> int:
    wal = Path(f"{path}-wal")
    return wal.stat().st_size if wal.exists() else 0


def test_the_wal_never_grows_far_past_its_limit_and_is_empty_after_each_turn(
    tmp_path: Path,
) -> None:
    path = tmp_path / "z.sqlite3"
    store = SqliteTranscriptStore(SqliteDatabase(path))
    limit = database.WAL_LIMIT_BYTES
    assert limit is not None
    head, largest = 0, 0
    for turn in range(1, 13):  # ~8 MB of tool results: eight times the bound
        entries = turn_entries(head + 1, turn, steps=4, calls=4, payload="p" * 40_000)
        for end in range(1, len(entries)):  # the turn's steps as the engine writes them
            store.append("app", entries[end - 1 : end], expected_head=head)
            head += 1
            largest = max(largest, wal_bytes(path))
        store.append("app", entries[-1:], expected_head=head)  # the final closes the turn
        head += 1
        assert wal_bytes(path) == 0, f"turn {turn} left a WAL"
    # During a turn the WAL holds at most the bound plus the transaction that crossed it
    # (the automatic checkpoint then runs, and the next write starts it over, truncated).
    assert largest <= limit + 256 * 1024, largest
    assert path.stat().st_size > 4 * limit  # the data is in the database file
    assert len(store.tail("app", 10_000)) == head


def test_a_reader_in_another_connection_delays_the_checkpoint_not_the_turn(
    tmp_path: Path,
) -> None:
    path = tmp_path / "r.sqlite3"
    db = SqliteDatabase(path)
    store = SqliteTranscriptStore(db)
    store.append("app", turn_entries(1, 1, payload="q" * 20_000), expected_head=0)
    store.append("app", turn_entries(6, 2)[:-1], expected_head=5)  # an open turn: no checkpoint
    assert wal_bytes(path) > 0
    reader = sqlite3.connect(path, isolation_level=None)
    reader.execute("BEGIN")
    assert reader.execute("SELECT COUNT(*) FROM transcript").fetchone()[0] == 9
    started = time.monotonic()
    done = db.checkpoint()
    waited = time.monotonic() - started
    assert done is not None and done.busy  # it could not truncate under the reader
    # It waited its own short bound, not the connection's busy timeout (10 s): the margin
    # is a starved machine's (six test processes on two cores), far below BUSY_MS.
    assert waited < database.CHECKPOINT_WAIT_MS / 1000 + 3.0 < database.BUSY_MS / 1000
    # The connection's own busy timeout is back: a write waits for a lock as before.
    assert db.conn.execute("PRAGMA busy_timeout").fetchone()[0] == database.BUSY_MS
    reader.execute("COMMIT")
    reader.close()
    store.append("app", turn_entries(6, 2)[-1:], expected_head=9)  # closes: checkpoint
    assert wal_bytes(path) == 0
    assert len(store.tail("app", 100)) == 10


def test_a_checkpoint_that_fails_is_logged_and_leaves_the_writes_committed(
    tmp_path: Path,
) -> None:
    path = tmp_path / "f.sqlite3"
    db = SqliteDatabase(path)
    store = SqliteTranscriptStore(db)
    store.append("app", turn_entries(1, 1)[:-1], expected_head=0)
    reading = db.conn.execute("SELECT seq FROM transcript")  # a statement still running
    assert reading.fetchone() is not None
    assert db.checkpoint() is None  # SQLite: "database table is locked"; logged
    assert len(reading.fetchall()) == 3
    assert db.checkpoint() is not None
    assert len(SqliteTranscriptStore(SqliteDatabase(path)).tail("app", 100)) == 4


def test_every_connection_to_the_file_carries_the_bound(tmp_path: Path) -> None:
    db = SqliteDatabase(tmp_path / "b.sqlite3")
    limit = database.WAL_LIMIT_BYTES
    assert limit is not None and limit <= 4 << 20  # "a few MB" at most
    assert db.conn.execute("PRAGMA journal_size_limit").fetchone()[0] == limit
    page = db.conn.execute("PRAGMA page_size").fetchone()[0]
    assert db.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == limit // page
