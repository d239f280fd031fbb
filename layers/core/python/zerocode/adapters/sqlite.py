"""SQLite adapters: the embedded default for one machine.

One database file, WAL mode, one connection per store object guarded by a
lock. Appends run in ``BEGIN IMMEDIATE`` transactions, so a step's entries
land together or not at all, and the head check inside the transaction makes
a second writer fail with Conflict instead of interleaving.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from zerocode.display import (
    DisplayEntry,
    DisplayPage,
    DisplayRole,
    DisplayStatus,
    KeyClock,
    check_page,
    created_at_of,
)
from zerocode.errors import Conflict
from zerocode.transcript import (
    EMPTY_HEAD,
    Entry,
    Head,
    check_continues,
    entry_attributes,
    entry_from_attributes,
    expires_at,
    head_from_attributes,
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS transcript (
    app_id TEXT NOT NULL, seq INTEGER NOT NULL, turn INTEGER NOT NULL, unit INTEGER NOT NULL,
    turn_start INTEGER NOT NULL, kind TEXT NOT NULL, covers INTEGER NOT NULL DEFAULT 0,
    body TEXT NOT NULL, uid TEXT NOT NULL, expires_at INTEGER,
    PRIMARY KEY (app_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS display (
    app_id TEXT NOT NULL, id TEXT NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL,
    status TEXT NOT NULL, turn INTEGER NOT NULL, element TEXT, expires_at INTEGER,
    PRIMARY KEY (app_id, id)
) WITHOUT ROWID;
"""
_COLUMNS = ("seq", "turn", "unit", "turn_start", "kind", "covers", "body", "uid")

ConnectionFactory = Callable[[str], sqlite3.Connection]


def _connect(path: str) -> sqlite3.Connection:
    return sqlite3.connect(path, check_same_thread=False, isolation_level=None, timeout=10.0)


class SqliteDatabase:
    """A connection with the zerocode schema. ``connect`` lets tests count statements."""

    def __init__(self, path: Path | str, connect: ConnectionFactory = _connect) -> None:
        if str(path) != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.conn = connect(str(path))
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA busy_timeout=10000")
        self.conn.executescript(_SCHEMA)
        self.lock = threading.RLock()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with self.lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    def query(self, sql: str, params: Sequence[Any]) -> list[Any]:
        with self.lock:
            return self.conn.execute(sql, params).fetchall()

    def close(self) -> None:
        self.conn.close()


class SqliteTranscriptStore:
    def __init__(self, db: SqliteDatabase, retention_days: int = 0,
                 now: Callable[[], float] = time.time) -> None:
        self.db, self.retention_days, self.now = db, retention_days, now

    def head(self, app_id: str) -> Head:
        rows = self.db.query("SELECT seq, turn, turn_start, kind, uid FROM transcript "
                             "WHERE app_id = ? ORDER BY seq DESC LIMIT 1", (app_id,))
        if not rows:
            return EMPTY_HEAD
        return head_from_attributes(app_id, dict(zip(("seq", "turn", "turn_start", "kind", "uid"),
                                                      rows[0], strict=True)))

    def append(self, app_id: str, entries: Sequence[Entry], expected_head: int) -> None:
        check_continues(entries, expected_head)
        expires = expires_at(self.retention_days, self.now())
        rows = [(app_id, *(entry_attributes(e)[c] for c in _COLUMNS), expires) for e in entries]
        with self.db.transaction() as conn:
            found = conn.execute("SELECT MAX(seq) FROM transcript WHERE app_id = ?",
                                 (app_id,)).fetchone()[0] or 0
            if found != expected_head:
                raise Conflict(f"transcript of app {app_id} moved to {found} while this writer "
                               f"expected {expected_head}; another turn is writing")
            try:
                conn.executemany("INSERT INTO transcript (app_id, seq, turn, unit, turn_start, "
                                 "kind, covers, body, uid, expires_at) "
                                 "VALUES (?,?,?,?,?,?,?,?,?,?)", rows)
            except sqlite3.IntegrityError as exc:
                raise Conflict(f"transcript of app {app_id}: {exc}") from exc

    def tail(self, app_id: str, limit: int) -> list[Entry]:
        rows = self.db.query(f"SELECT {', '.join(_COLUMNS)} FROM transcript WHERE app_id = ? "
                             "ORDER BY seq DESC LIMIT ?", (app_id, limit))
        return [entry_from_attributes(app_id, dict(zip(_COLUMNS, r, strict=True)))
                for r in reversed(rows)]

    def get(self, app_id: str, seq: int) -> Entry | None:
        rows = self.db.query(f"SELECT {', '.join(_COLUMNS)} FROM transcript "
                             "WHERE app_id = ? AND seq = ?", (app_id, seq))
        return entry_from_attributes(app_id, dict(zip(_COLUMNS, rows[0], strict=True))) \
            if rows else None

    def delete_app(self, app_id: str) -> int:
        with self.db.transaction() as conn:
            return conn.execute("DELETE FROM transcript WHERE app_id = ?", (app_id,)).rowcount

    def purge_expired(self) -> int:
        """What DynamoDB's TTL does in the background: drop items past their expiry."""
        with self.db.transaction() as conn:
            return conn.execute("DELETE FROM transcript WHERE expires_at <= ?",
                                (int(self.now()),)).rowcount


class SqliteDisplayHistoryStore:
    def __init__(self, db: SqliteDatabase, retention_days: int = 0,
                 now: Callable[[], float] = time.time) -> None:
        self.db, self.retention_days, self.now = db, retention_days, now
        self.keys = KeyClock()

    def append(self, app_id: str, role: DisplayRole, content: str, *,
               status: DisplayStatus = DisplayStatus.OK, turn: int = 0,
               element: dict[str, Any] | None = None) -> DisplayEntry:
        key = self.keys.next_key()
        with self.db.transaction() as conn:
            conn.execute("INSERT INTO display (app_id, id, role, content, status, turn, element, "
                         "expires_at) VALUES (?,?,?,?,?,?,?,?)",
                         (app_id, key, role.value, content, status.value, turn,
                          json.dumps(element) if element is not None else None,
                          expires_at(self.retention_days, self.now())))
        return DisplayEntry(key, role, content, status, turn, created_at_of(key), element)

    def page(self, app_id: str, before: str | None = None, limit: int = 20) -> DisplayPage:
        check_page(before, limit)
        rows = self.db.query(
            "SELECT id, role, content, status, turn, element FROM display WHERE app_id = ? "
            "AND id < ? ORDER BY id DESC LIMIT ?", (app_id, before or "~", limit + 1))
        entries = [DisplayEntry(r[0], DisplayRole(r[1]), r[2], DisplayStatus(r[3]), r[4],
                                created_at_of(r[0]), json.loads(r[5]) if r[5] else None)
                   for r in rows[:limit]]
        return DisplayPage(entries, entries[-1].id if len(rows) > limit else None)

    def delete_app(self, app_id: str) -> int:
        with self.db.transaction() as conn:
            return conn.execute("DELETE FROM display WHERE app_id = ?", (app_id,)).rowcount
