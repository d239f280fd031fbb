"""The SQLite Lease: one row per key, taken in a transaction."""

from __future__ import annotations

import time
from collections.abc import Callable

from zerocode.adapters.sqlite.database import SqliteDatabase


class SqliteLease:
    def __init__(self, db: SqliteDatabase, now: Callable[[], float] = time.time) -> None:
        self.db, self.now = db, now
        with db.lock:
            db.conn.execute(
                "CREATE TABLE IF NOT EXISTS leases (key TEXT PRIMARY KEY, "
                "holder TEXT NOT NULL, expires_at REAL NOT NULL)"
            )

    def acquire(self, key: str, holder: str, ttl_seconds: float) -> bool:
        now = self.now()
        with self.db.transaction() as conn:
            row = conn.execute(
                "SELECT holder, expires_at FROM leases WHERE key = ?", (key,)
            ).fetchone()
            if row is not None and row[0] != holder and row[1] > now:
                return False
            conn.execute(
                "INSERT OR REPLACE INTO leases (key, holder, expires_at) VALUES (?, ?, ?)",
                (key, holder, now + ttl_seconds),
            )
            return True

    def release(self, key: str, holder: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM leases WHERE key = ? AND holder = ?", (key, holder))

    def held(self, key: str) -> bool:
        rows = self.db.query("SELECT expires_at FROM leases WHERE key = ?", (key,))
        return bool(rows) and float(rows[0][0]) > self.now()

    def clear(self, prefix: str) -> int:
        """Drop every lease whose key starts with ``prefix``: at a local server's start, the
        turns of the run before it died with it (one process owns a local data directory)."""
        with self.db.transaction() as conn:
            return conn.execute(
                "DELETE FROM leases WHERE substr(key, 1, ?) = ?", (len(prefix), prefix)
            ).rowcount
