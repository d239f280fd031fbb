"""What only the SQLite adapters do: local expiry, WAL, several connections on one file."""

from __future__ import annotations

from pathlib import Path

from tests.factories import turn_entries
from zerocode.adapters.sqlite.database import SqliteDatabase
from zerocode.adapters.sqlite.display import SqliteDisplayHistoryStore
from zerocode.adapters.sqlite.transcript import SqliteTranscriptStore
from zerocode.memory.display import DisplayRole


def test_purge_expired_does_locally_what_dynamodb_ttl_does(tmp_path: Path) -> None:
    clock = [1_000_000.0]
    db = SqliteDatabase(tmp_path / "ttl.sqlite3")
    store = SqliteTranscriptStore(db, retention_days=1, now=lambda: clock[0])
    old = turn_entries(1, 1)
    store.append("app", old, expected_head=0)
    clock[0] += 86_400 / 2
    new = turn_entries(len(old) + 1, 2)
    store.append("app", new, expected_head=len(old))
    clock[0] += 86_400 / 2 + 1  # the first turn is past its expiry, the second is not
    assert store.purge_expired() == len(old)
    assert store.tail("app", 100) == new
    forever = SqliteTranscriptStore(db, retention_days=0, now=lambda: clock[0])
    forever.append("keep", turn_entries(1, 1), expected_head=0)
    clock[0] += 10 * 365 * 86_400
    store.purge_expired()
    assert len(forever.tail("keep", 100)) == 5


def test_display_rows_carry_their_expiry(tmp_path: Path) -> None:
    db = SqliteDatabase(tmp_path / "d.sqlite3")
    store = SqliteDisplayHistoryStore(db, retention_days=2, now=lambda: 500.0)
    store.append("app", DisplayRole.USER, "hi")
    (expires,) = db.conn.execute("SELECT expires_at FROM display").fetchone()
    assert expires == 500 + 2 * 86_400


def test_database_uses_wal_so_readers_do_not_block_the_writer(tmp_path: Path) -> None:
    db = SqliteDatabase(tmp_path / "w.sqlite3")
    assert db.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
