"""The SQLite StepJournal: one row per app."""

from __future__ import annotations

from zerocode.adapters.sqlite.database import SqliteDatabase
from zerocode.engine.journal import PendingStep


class SqliteJournal:
    def __init__(self, db: SqliteDatabase) -> None:
        self.db = db
        with db.lock:
            db.conn.execute(
                "CREATE TABLE IF NOT EXISTS step_journal "
                "(app_id TEXT PRIMARY KEY, step TEXT NOT NULL)"
            )

    def write(self, app_id: str, step: PendingStep) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO step_journal (app_id, step) VALUES (?, ?)",
                (app_id, step.encode()),
            )

    def read(self, app_id: str) -> PendingStep | None:
        with self.db.lock:
            row = self.db.conn.execute(
                "SELECT step FROM step_journal WHERE app_id = ?", (app_id,)
            ).fetchone()
        return PendingStep.decode(row[0]) if row else None

    def clear(self, app_id: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM step_journal WHERE app_id = ?", (app_id,))
