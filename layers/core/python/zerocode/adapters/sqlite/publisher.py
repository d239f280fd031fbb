"""The SQLite Publisher: site pointers (which build a site serves) in local mode."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

from zerocode import faults
from zerocode.adapters.sqlite.database import SqliteDatabase
from zerocode.publishing.pointers import SiteTarget


class SqlitePublisher:
    """Pointers in one table: flipping one is a single-row write, atomic for every reader."""

    def __init__(self, db: SqliteDatabase, now: Callable[[], float] = time.time) -> None:
        self.db, self.now = db, now
        with db.lock:
            db.conn.execute(
                "CREATE TABLE IF NOT EXISTS site_pointers (pointer TEXT PRIMARY KEY, "
                "app_id TEXT NOT NULL, build_id TEXT NOT NULL, "
                "updated_at REAL NOT NULL) WITHOUT ROWID"
            )

    def point(self, pointer: str, target: SiteTarget) -> None:
        faults.write("site_pointer")
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO site_pointers VALUES (?, ?, ?, ?)",
                (pointer, target.app_id, target.build_id, self.now()),
            )

    def target(self, pointer: str) -> SiteTarget | None:
        rows = self.db.query(
            "SELECT app_id, build_id FROM site_pointers WHERE pointer = ?", (pointer,)
        )
        return SiteTarget(rows[0][0], rows[0][1]) if rows else None

    def remove(self, pointer: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM site_pointers WHERE pointer = ?", (pointer,))

    def pointers(self, prefix: str) -> Iterator[tuple[str, SiteTarget | None]]:
        rows = self.db.query(
            "SELECT pointer, app_id, build_id FROM site_pointers WHERE substr(pointer, 1, ?) = ?"
            " ORDER BY pointer",
            (len(prefix), prefix),
        )
        for pointer, app_id, build_id in rows:
            yield str(pointer), SiteTarget(str(app_id), str(build_id))

    def remove_if(self, pointer: str, expected: SiteTarget | None) -> bool:
        if expected is None:
            return False  # every row here is a well-formed pointer
        with self.db.transaction() as conn:
            done = conn.execute(
                "DELETE FROM site_pointers WHERE pointer = ? AND app_id = ? AND build_id = ?",
                (pointer, expected.app_id, expected.build_id),
            )
            return bool(done.rowcount)
