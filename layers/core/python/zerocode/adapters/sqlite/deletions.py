"""The SQLite PendingDeletions: apps whose data is still being deleted."""

from __future__ import annotations

import time
from collections.abc import Callable

from zerocode.adapters.sqlite.database import SqliteDatabase


class SqlitePendingDeletions:
    def __init__(self, db: SqliteDatabase, now: Callable[[], float] = time.time) -> None:
        self.db, self.now = db, now
        with db.lock:
            db.conn.execute(
                "CREATE TABLE IF NOT EXISTS deletions (app_id TEXT PRIMARY KEY, "
                "since REAL NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, "
                "last_error TEXT)"
            )

    def add(self, app_id: str) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO deletions (app_id, since) VALUES (?, ?)",
                (app_id, self.now()),
            )

    def done(self, app_id: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM deletions WHERE app_id = ?", (app_id,))

    def failed(self, app_id: str, error: str) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "UPDATE deletions SET attempts = attempts + 1, last_error = ? WHERE app_id = ?",
                (error, app_id),
            )

    def pending(self, limit: int = 50) -> list[str]:
        rows = self.db.query("SELECT app_id FROM deletions ORDER BY since LIMIT ?", (limit,))
        return [r[0] for r in rows]
